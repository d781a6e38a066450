"""The papers' hand-written sub-pages quote their records: in each section (a heading and the text up to the next)
that cites a record by its path, every decimal of the prose is a value of a record the section cites, at the
precision shown, so a number retyped on the page, or a record remade with another, fails here.

A value counts as shown when the record holds it written so (a printed line), or as a number that rounds to it:
as it is, times 100 (a percent), or one minus it (an error from an accuracy).  The decimals a section quotes from
elsewhere (the paper's own, a setting, a difference worked out in the prose) are listed in `NOT_RECORDED` with why."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PAGES = ("papers/000_liu.md", "papers/002_izmailov_kropotov.md", "papers/002_numbers.md", "papers/003_milios.md")
#: A decimal: digits, a point, digits; not part of a name, a version or a longer number.
_DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?!\d)(?!\.\d)")
#: A record cited by its path from the repository's top (in backticks, or in a command's comment).
_CITED = re.compile(r"(workflows/[\w./-]*records/[\w./-]*\.json)")
#: A ``paper_runs`` record named without its folder, after the section has given it (`paper003_milios_magic_2.json`).
_NAMED = re.compile(r"`(paper\d{3}_[\w.-]+\.json)`")
_RUNS = "workflows/studies/records/papers/"
#: A code block: a fenced one, or lines indented by four spaces (commands; their numbers are settings).
_CODE = re.compile(r"(?ms)^```.*?^```$|^    .*?$")

#: page -> {decimal: why it is not a record's}: each must still be on the page (a stale entry fails).
NOT_RECORDED: dict[str, dict[str, str]] = {
    "papers/000_liu.md": {
        "0.004": "waveform-noise/logit's 95 % t interval (9 df), worked from the Fig. 4 table's mean ± SE",
        "0.026": "the same interval's upper end",
        "0.0002": "the 16-split 95 % t interval (15 df); the record prints its mean ± SE only",
        "0.0213": "the same interval's upper end",
        "0.0046": "the upper end of the five pairs' 90 % t intervals, worked from the table's means ± SEs",
        "8.2": "the confirmatory run's wall minutes, as the declaration paper000_delta.yaml states its cost",
        "3.1": "its CPU minutes, likewise",
        "0.430": "the paper's Table IV (waveform-noise GPC-II NLL)",
        "86.92": "the paper's Table III (magic, Selu)",
        "89.35": "the paper's Table III (magic, ORTH)",
        "98.43": "the paper's Table III (ringnorm, GPCep)",
        "98.78": "the paper's Table III (ringnorm, ORTH)",
        "97.79": "QDA's mean over the three splits paper000_ringnorm.json prints",
        "97.96": "QDA's mean over the ten splits paper000_ringnorm.json prints",
        "97.48": "the RBF SVM's mean over the three splits the record prints",
        "96.98": "logistic regression's mean over the three splits the record prints",
        "96.71": "GPC-II's mean over the three splits the record prints",
        "0.092": "GPC-II + polynomial's mean NLL over the three splits the record prints",
        "2.21": "the TensorFlow version the runs used",
    },
    "papers/002_izmailov_kropotov.md": {},
    "papers/002_numbers.md": {},
    "papers/003_milios.md": {
        "0.022": "split 0's ECE at 100 epochs minus 300 epochs' (paper003_milios_letter_softmax100.json 0.0987, "
                 "paper003_milios_letter_softmax300.json 0.0770)",
        "0.35": "the axis of the paper's Fig. 3 (MAGIC panel)",
        "0.40": "the same axis's top",
        "0.05": "the axis of the paper's Fig. 5 (right)",
        "0.07": "the same axis's top",
        "3.2": "the paper's ladder, 1600 / 500 inducing points",
        "2.2": "M = 50 of the 2250 training rows, in %",
        "3.3": "the paper's M = 500 of its 15 000 training rows, in %",
        "10.7": "its M = 1600, likewise",
        "2.6": "GPD's CPU seconds at M = 200 over GPC's, worked from the record",
        "7.7": "the paper's GPD training times, 1550 / 201 s",
        "0.11": "the paper's GPD at M = 1600 over its GPC, 1550 / 14 000 s",
        "0.7305": "paper003_alpha_letter.json's test MNLL at 0.001, cited by the section on Fig. 3",
    },
}


def _record_values(path: Path) -> tuple[set[str], list[float]]:
    """The decimals a record writes as text (its printed lines) and every number it holds."""
    text = path.read_text(encoding="utf-8")
    numbers: list[float] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, (int, float)) and not isinstance(node, bool):
            numbers.append(float(node))

    walk(json.loads(text))
    written = set(_DECIMAL.findall(text))
    return written, numbers + [float(d) for d in written]  # a printed table's cells are numbers too


def _shown(decimal: str, written: set[str], numbers: list[float]) -> bool:
    """Whether ``decimal`` is a record's value at its precision: written so, or a number rounding to it."""
    if decimal in written:
        return True
    digits = len(decimal.split(".")[1])
    return any(f"{abs(v):.{digits}f}" == decimal for x in numbers for v in (x, 100 * x, 1 - x, 100 * (1 - x)))


def uncited_decimals(page: Path, root: Path = ROOT) -> list[str]:
    """The prose decimals of ``page``'s sections that cite a record, found in no record the section cites."""
    missing = []
    for section in re.split(r"(?m)^(?=#)", page.read_text(encoding="utf-8")):
        cited = sorted({root / path for path in _CITED.findall(section)}
                       | {root / _RUNS / name for name in _NAMED.findall(section)})
        if not cited:
            continue
        absent = [str(path.relative_to(root)) for path in cited if not path.is_file()]
        assert not absent, f"{page.name} cites records that do not exist: {absent}"
        written: set[str] = set()
        numbers: list[float] = []
        for path in cited:
            w, n = _record_values(path)
            written |= w
            numbers += n
        prose = _CODE.sub("", re.sub(r"<!--.*?-->", "", section, flags=re.S))
        missing += [d for d in _DECIMAL.findall(prose) if not _shown(d, written, numbers)]
    return missing


@pytest.mark.parametrize("page", PAGES)
def test_every_decimal_of_a_section_citing_a_record_is_that_records(page):
    path = ROOT / "docs" / page
    allowed = NOT_RECORDED[page]
    assert [d for d in uncited_decimals(path) if d not in allowed] == []
    text = path.read_text(encoding="utf-8")
    assert [d for d in allowed if d not in _DECIMAL.findall(text)] == [], f"stale entries of NOT_RECORDED[{page!r}]"


def test_a_number_no_cited_record_holds_is_found_and_a_missing_record_named(tmp_path):
    record = tmp_path / "workflows" / "studies" / "records" / "r.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"accuracy": 0.8726, "printed": ["| 0.3736 |"]}))
    page = tmp_path / "p.md"
    page.write_text("# A\nFrom `workflows/studies/records/r.json`: 0.3736, 87.3 %, error 0.127, 0.8726, 0.873 "
                    "and 0.874.\n\n    gpal workflow x --set lr=0.25\n# B\nUncited 0.5.\n")
    assert uncited_decimals(page, root=tmp_path) == ["0.874"]
    page.write_text("# A\n`workflows/studies/records/gone.json` 0.1\n")
    with pytest.raises(AssertionError, match="gone.json"):
        uncited_decimals(page, root=tmp_path)
