"""docs/catalogs.md's prose counts and build times are the study ``catalog_facts``'s (record
lab/studies/records/catalog_facts.json): each printed value is read from the record and looked for in the
sentence the page writes it in, so a number edited on the page, or a study run again with another, fails here; and
every line the study prints is held by one of these sentences, so a new count cannot go unquoted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PAGE = ROOT / "docs" / "catalogs.md"
RECORD = ROOT / "lab" / "studies" / "records" / "catalog_facts.json"
COUNTS = "python lab/studies/bench_catalog_facts.py"
TIMINGS = "python lab/studies/bench_catalog_facts.py --timings"
WHEEL = "python lab/studies/bench_catalog_facts.py --wheel"


class _Facts:
    """A command's printed ``label: value`` lines, recording which labels were read."""

    def __init__(self, printed: list[str]) -> None:
        self.values = dict(line.split(": ", 1) for line in printed if not line.startswith("|"))
        self.read: set[str] = set()

    def __call__(self, label: str) -> str:
        self.read.add(label)
        return self.values[label]

    def numbers(self, label: str) -> list[str]:
        return re.findall(r"\d+(?:\.\d+)?", self(label))


def _printed(command: str) -> list[str]:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    assert record["study"] == "catalog_facts"
    return record["commands"][command]["printed"]


@pytest.fixture(scope="module")
def page() -> str:
    return " ".join(PAGE.read_text(encoding="utf-8").split())


def _on(page: str, *sentences: str) -> None:
    for sentence in sentences:
        assert sentence in page, f"docs/catalogs.md lacks {sentence!r} ({RECORD.name})"


def test_the_pages_counts_are_the_records(page):
    f = _Facts(_printed(COUNTS))
    main, dr4_main = "FL16Y main job's", "4FGL-DR4 main job's"
    cut, dr4_cut = "4FGL published cut's", "4FGL-DR4 published cut's"
    _on(page, f"FL16Y: {f('FL16Y rows with Unc_Frac_Variability = 10')} rows, "
              f"{f('FL16Y of them with Frac_Variability = 0')} of them with `Frac_Variability` = 0; "
              f"{f(main + ' classified sources with Unc_Frac_Variability = 10')} of the "
              f"{f(main + ' classified sources')} sources the main job classifies, "
              f"{f(main + ' labelled sources with Unc_Frac_Variability = 10')} of its "
              f"{f(main + ' labelled sources')} labelled sources, "
              f"{f(main + ' trained on sources with Unc_Frac_Variability = 10')} of the "
              f"{f(main + ' trained on sources')} it trains on",
        f"σ = {f('FL16Y median Unc_Frac_Variability of the rows with one')} (FL16Y)")
    _on(page, f"it keeps {f('FL16Y of them the fermi_dr4 preset keeps')} of FL16Y's "
              f"{f(main + ' labelled sources in the catalog')} and "
              f"{f('4FGL-DR4 of them the fermi_dr4 preset keeps')} of 4FGL-DR4's "
              f"{f(dr4_main + ' labelled sources in the catalog')}",
        f"{f('FL16Y of them dropped (the columns without a finite value)')} and "
        f"{f('4FGL-DR4 of them dropped (the columns without a finite value)')}.")
    assert f("4FGL published selection's sources with a NaN Unc_LP_beta") == "0"
    _on(page, f"None is in the published {f(cut + ' sources')}-source selection, but "
              f"{f('4FGL unassociated sources with a NaN Unc_LP_beta')} unassociated v20 sources are: a v20 pool with "
              f"the default preset is {f('4FGL pool of the unassociated with the default preset')} sources, not "
              f"{f('4FGL unassociated sources')}")
    rows, features = f.numbers("4FGL published selection")
    _on(page, f"# ({rows}, {features}), ({rows}, {features}), ({rows},), Source_Name")
    assert f("4FGL published cut's sources with LP_SigCurv below 0.1") == "0"
    _on(page, f"none of the published {rows}-source selection (its minimum is "
              f"{f(cut + ' smallest LP_SigCurv')}), "
              f"{f(dr4_cut + ' sources with LP_SigCurv below 0.1')} source of the "
              f"{f(dr4_cut + ' sources')} of the same cut on 4FGL-DR4 (its `LP_SigCurv` "
              f"{f(dr4_cut + ' smallest LP_SigCurv')};")
    _on(page, f"({f('FL16Y ASSOC_FGL naming one 4FGL-DR4 source twice or more')} 4FGL-DR4 sources in FL16Y's "
              f"`ASSOC_FGL`, {f('4FGL-DR4 ASSOC_FGL naming one 3FGL source twice or more')} 3FGL sources in DR4's",
        f"{f('4FGL-DR4 ASSOC_FGL naming one source of another release twice or more')} 2FGL / 1FGL names repeated "
        f"in DR4's `ASSOC_FGL`, {f('FL16Y ASSOC_FGL naming one source of another release twice or more')} in FL16Y's",
        f"FL16Y names only {f('FL16Y ASSOC_FGL naming a 3FGL source')} 3FGL sources",
        f"4FGL-DR4 labels {f('4FGL-DR4 sources of other classes')} sources of other classes")
    bll, fsrq, psr, msp = f.numbers("3FGL bll / fsrq / psr / msp sources")
    assert msp == "0"  # the page: "3FGL has no `msp` code"
    fitted, not_fitted = f.numbers("3FGL sources with beta fitted / not")
    labelled = f("3FGL labelled bll / fsrq / psr sources with every fermi_3fgl feature")
    assert labelled == str(int(bll) + int(fsrq) + int(psr))
    assert (f("3FGL unassociated and bcu sources with every fermi_3fgl feature")
            == f("3FGL unassociated and bcu sources"))
    _on(page, f"its {psr} pulsars are all `psr`",
        f"for its {fitted} LogParabola sources (−inf, \"not fitted\", for the other {not_fitted};",
        f"{f('3FGL fermi_3fgl features')} features; every bll / fsrq / psr source of 3FGL ({bll} / {fsrq} / {psr}) and "
        f"every unassociated and bcu source ({f('3FGL unassociated and bcu sources')}) has them all")
    counts = f.numbers("3FGL / 4FGL / 4FGL-DR2 / 4FGL-DR4 / FL16Y sources")
    _on(page, '`"3FGL"` (v16, {} sources), `"4FGL"` (v20, {}), `"4FGL-DR2"` (v27, {}), `"4FGL-DR4"` (v35, {}) or '
              '`"FL16Y"` (v41, {};'.format(*counts))
    _error_model(f, page)
    assert f.read == set(f.values), f"printed but not on the page: {sorted(set(f.values) - f.read)}"


def _error_model(f: _Facts, page: str) -> None:
    ratios = "HR12 / HR23 / HR34 / HR45 / HR56"
    every, labelled = f"4FGL-DR4 sources, {ratios}, ", f"4FGL-DR4 labelled sources, {ratios}, "
    _on(page, f"median error bars of {f(every + 'median old error with an upper-limit band')} ({ratios})",
        f"the largest hardness-ratio error is {f('4FGL-DR4 sources, largest new hardness-ratio error')}",
        f"sit at {f(every + 'median new error with an upper-limit band')} at the median",
        f"(`HR12`: median {f('4FGL-DR4 sources, HR12 median new / old error with both bands detected')}, new / old)")
    flux = f("4FGL-DR4 labelled sources, largest Unc_Flux1000 / Flux1000")
    assert f("4FGL-DR4 labelled sources, largest Unc_Energy_Flux100 / Energy_Flux100") == flux
    _on(page, f"(σ / flux up to {flux} among the labelled)")
    counts, total = f(labelled + "with an upper-limit band").split(" of ")
    offset = labelled + "median |draws' mean - point value| / sd with "
    _on(page, f"is, at the median, {f(offset + 'an upper-limit band')} standard deviations for such rows of {ratios} "
              f"({counts} of {total} labelled sources), {f(offset + 'both bands detected')} for detected bands")
    drawn = "error bar of 2048 draws against 65536, median / largest difference in %"
    hr_median, hr_max = f.numbers(f"4FGL-DR4 labelled sources, hardness ratios, {drawn}")
    log_median, log_max = f.numbers(f"4FGL-DR4 labelled sources, log fluxes, {drawn}")
    _on(page, f"Against a 65536-draw reference the labelled sources' error bars of the three-class selection agree "
              f"to {hr_median}% at the median and {hr_max}% at worst for the hardness ratios, "
              f"{log_median}% / {log_max}% for the log fluxes")


def test_the_pages_4lac_coverage_table_is_the_records():
    table = [line for line in _printed(COUNTS) if line.startswith("|")]
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    start = lines.index(table[0])
    assert lines[start:start + len(table)] == table
    assert not lines[start + len(table)].startswith("|"), "the page's 4LAC table has rows the record does not"


def test_the_pages_build_times_are_the_records(page):
    f = _Facts(_printed(TIMINGS))
    cpus, niceness = f.numbers("cpu count")
    start = f.numbers("load average at start (1, 5, 15 min)")[0]
    end = f.numbers("load average at end (1, 5, 15 min)")[0]
    conditions = (f"(study `catalog_facts`, its `--timings` command: one build each, under `nice -n {niceness}` on "
                  f"{cpus} cores at a load average of {start} at the start and {end} at the end,")
    assert page.count(conditions) == 2, "both timing passages state the conditions of the record's run"
    n, wall, cpu = f.numbers("4FGL-DR4 labelled sources with fermi_dr4")
    _on(page, f"on 4FGL-DR4 ({n} sources) took {cpu} s CPU ({wall} s wall)",
        f"({cpu} s CPU, {wall} s wall with `fermi_dr4`)")
    n, wall, cpu = f.numbers("4FGL-DR4 labelled sources with fermi_dr4_bands")
    _on(page, f"the {n} labelled DR4 sources took {cpu} s CPU ({wall} s wall) with `fermi_dr4_bands`")
    _, wall, cpu = f.numbers("4FGL-DR4 labelled sources with fermi_dr4_measurements")
    _on(page, f"and {cpu} s CPU ({wall} s wall) with `fermi_dr4_measurements`")
    n, wall, cpu = f.numbers("4FGL-DR4 unassociated and bcu sources with fermi_dr4")
    _on(page, f"a pool of its {n} unassociated and bcu sources {cpu} s CPU ({wall} s wall)")
    n, wall, cpu = f.numbers("3FGL labelled bll / fsrq / psr sources with fermi_3fgl_lightcurve")
    _on(page, f"took {cpu} s CPU ({wall} s wall) for 3FGL's {n} labelled sources")
    n, wall, cpu = f.numbers("3FGL unassociated and bcu sources with fermi_3fgl_lightcurve")
    _on(page, f"{cpu} s CPU ({wall} s wall) for its {n} unassociated and bcu sources")
    assert f.read == set(f.values), f"printed but not on the page: {sorted(set(f.values) - f.read)}"


def test_the_pages_wheel_size_is_the_records(page):
    f = _Facts(_printed(WHEEL))
    _on(page, f"wheel {f('wheel MB')} MB (of which the catalog files are {f('catalogs in the wheel MB')} MB, the KEEL "
              f"copies {f('KEEL copies in the wheel MB')} MB, the rest {f('the rest of the wheel MB')} MB, as stored;")
    assert f.read == set(f.values), f"printed but not on the page: {sorted(set(f.values) - f.read)}"
