"""docs/calibration.md's numbers of the study ``calibration_init`` (the kernel's starting variance, its later labels,
and every labelled source scored once by cross-validation) are its records' (lab/studies/records/calibration/, written by the
study's own commands): each value is read from a record, formatted as the page writes it and looked for in the
sentence that quotes it, so a number edited on the page, or a study run again with another, fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PAGE = ROOT / "docs" / "calibration.md"
RECORDS = ROOT / "lab" / "studies" / "records" / "calibration"


def _record(name: str) -> dict:
    record = json.loads((RECORDS / name).read_text(encoding="utf-8"))
    assert record["study"] == "calibration_init"
    return record["catalogs"]


def _interval(bounds: list[float]) -> str:
    return "[" + ", ".join(f"{b:+.3f}".replace("-", "−") for b in bounds) + "]"


@pytest.fixture(scope="module")
def page() -> str:
    return " ".join(PAGE.read_text(encoding="utf-8").split())


def _on(page: str, *sentences: str) -> None:
    for sentence in sentences:
        assert sentence in page, f"docs/calibration.md lacks {sentence!r} (records in {RECORDS.relative_to(ROOT)})"


def test_the_kernel_start_numbers_are_the_held_out_records(page):
    three, ten = _record("calibration_init_seeds0-2.json"), _record("calibration_init_seeds0-9.json")
    fl3, fl10 = three["FL16Y"]["models"], ten["FL16Y"]["models"]
    assert three["FL16Y"]["seeds"] == [0, 1, 2] and ten["FL16Y"]["seeds"] == list(range(10))
    seed0 = {m: fl10[m]["per_seed"][0]["nll"] for m in ("gpal", "var20")}  # the main job's own split
    _on(page, f"logistic regression's over three splits ({fl3['var20']['ece']:.3f} against "
              f"{fl3['logistic']['ece']:.3f}) and ten ({fl10['var20']['ece']:.3f} against "
              f"{fl10['logistic']['ece']:.3f})",
        f"the main job's NLL is {seed0['var20']:.3f} against {seed0['gpal']:.3f}")
    dr4 = [ten["4FGL-DR4"]["models"][m]["ece"] for m in ("gpal", "var10", "var20", "logistic")]
    _on(page, f"over ten, where gpal, its starts at variance 10 and 20 and logistic regression are all at "
              f"{min(dr4):.3f}-{max(dr4):.3f}",
        f"and over ten ({fl10['gpal']['ece']:.3f} against {fl10['logistic']['ece']:.3f}) is within what")


def test_the_cross_validation_numbers_are_the_cv_record(page):
    cv = _record("calibration_cv.json")
    fl, dr4 = cv["FL16Y"], cv["4FGL-DR4"]
    g, lg = fl["models"]["gpal"], fl["models"]["logistic"]
    g4, lg4 = dr4["models"]["gpal"], dr4["models"]["logistic"]
    _on(page, f"gpal's ECE is {g['ece']:.4f} against logistic regression's {lg['ece']:.4f} on FL16Y "
              f"({fl['n']} sources; gpal − logistic {_interval(g['minus_logistic']['ece'])}) and {g4['ece']:.4f} "
              f"against {lg4['ece']:.4f} on 4FGL-DR4 ({dr4['n']}; {_interval(g4['minus_logistic']['ece'])})",
        f"would show {fl['calibrated_ece']['mean']:.4f} ± {fl['calibrated_ece']['sd']:.4f} and "
        f"{dr4['calibrated_ece']['mean']:.4f} ± {dr4['calibrated_ece']['sd']:.4f} there",
        f"Held-out NLL is lower than logistic regression's on DR4 ({g4['nll']:.3f} against {lg4['nll']:.3f}, "
        f"{_interval(g4['minus_logistic']['nll'])}) and level on FL16Y ({g['nll']:.3f} against {lg['nll']:.3f})")
    pulsar = fl["class_names"].index("pulsar")
    assert dr4["class_names"] == fl["class_names"]
    _on(page, "The one resolved difference is the pulsar class, whose ECE is worse than logistic regression's on both "
              f"catalogs (gpal − logistic {_interval(g['minus_logistic'][f'class_ece_{pulsar}'])} and "
              f"{_interval(g4['minus_logistic'][f'class_ece_{pulsar}'])})")


def test_the_later_label_verdict_quotes_every_resolved_loss_of_the_later_label_record_and_nothing_else(page):
    record = json.loads((RECORDS / "later_labels_var20.json").read_text(encoding="utf-8"))
    assert record["study"] == "calibration_init" and record["variant"] == "gpal_kernel_variance20"
    assert record["seeds"] == [0, 1, 2, 3, 4]
    sentence = page[page.index("But on later labels, over five seeds"):]
    sentence = sentence[:sentence.index(". ") + 1]  # a sentence ends at a full stop and a space, a decimal point not
    _on(sentence, "over five seeds (record `lab/studies/records/calibration/later_labels_var20.json`)")
    # a loss is resolved where the interval of var20 - gpal excludes 0 on gpal's side: above 0 for the NLL, below for
    # balanced accuracy and AUC; the page names each, with its interval, and no other interval
    worse = {measure: [(check, d) for check, c in record["checks"].items() if not check.startswith("held-out:")
                       for d in [c["variant_minus_gpal"][measure]] if (d[1] > 0 if measure == "nll" else d[2] < 0)]
             for measure in ("nll", "balanced_accuracy", "bll_fsrq_auc")}

    def name(check: str) -> str:
        return check.replace(":", " -> ")

    def text(d: list[float]) -> str:
        return f"{d[0]:+.3f} {_interval(d[1:])}".replace("-", "−")

    for check, d in worse["nll"]:
        _on(sentence, f"{name(check)}'s NLL ({text(d)})")
    for check, d in worse["balanced_accuracy"]:
        _on(sentence, f"{name(check)}'s balanced accuracy ({text(d)})")
    for check, d in worse["bll_fsrq_auc"]:
        _on(sentence, f"{name(check)} ({text(d)})")
    assert worse["bll_fsrq_auc"] and "the BL Lac-vs-FSRQ AUC of" in sentence
    assert sentence.count("[") == sum(map(len, worse.values()))
    # the rule: no later-label NLL worse with its interval above 0; the verdict follows it
    assert worse["nll"] and sentence.endswith("so it is not adopted.")


def test_the_page_cites_the_study_and_its_records_not_a_script(page):
    assert "bench_calibration_init.py" not in page
    for name in ("calibration_init_seeds0-2.json", "calibration_init_seeds0-9.json", "calibration_cv.json",
                 "later_labels_var20.json"):
        assert f"`lab/studies/records/calibration/{name}`" in page
    assert "the study `calibration_init`" in page

