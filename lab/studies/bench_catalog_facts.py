"""The counts and timings docs/catalogs.md quotes in prose that no other study makes.

Each line it prints is ``label: value``; ``lab/pages/page_facts.py`` turns the labels the pages need into
substitutions from the record (``lab/studies/records/catalog_facts.json``), so the page shows what it holds.
The counts read the shipped catalogs and build the main job's selection as ``gpal classify`` does (its classes,
preset, held-out share and seed 0); the 4LAC join-coverage table is printed in the page's layout.

    python lab/studies/bench_catalog_facts.py             # counts, seconds
    nice -n 10 python lab/studies/bench_catalog_facts.py --timings   # data-set builds, under a minute
    python lab/studies/bench_catalog_facts.py --wheel     # the wheel a checkout builds, under a minute
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np

from shared import THREE_CLASS_SELECTION, float_column, keep_printed, quiet_catalog  # the script's folder, first on its path

#: 4FGL's "no error measured" value of ``Unc_Frac_Variability`` (the ``fermi_dr4`` preset's ``error_sentinel``).
FRAC_VARIABILITY_SENTINEL = 10.0
#: The published selection of Villacampa-Calvo et al. (2021, sec. 5.6): three classes above Signif_Avg 30.
PUBLISHED = {"classes": ["bll", "fsrq", "psr"], "min_significance": 30}
#: The ``villacampa2021`` preset's floor on LP_SigCurv.
SIGCURV_FLOOR = 0.1
#: The releases of the 4LAC join-coverage table, each with its label on the page.
LAC_RELEASES = (("4FGL", "4FGL (v20)"), ("4FGL-DR2", "4FGL-DR2"), ("4FGL-DR4", "4FGL-DR4"),
                ("FL16Y", "FL16Y (through `ASSOC_FGL`)"))
#: The builds the page times: 4FGL-DR4's labelled sources of the three-class selection by each preset (and its pool
#: with the first), and 3FGL's labelled and pool sources with its light-curve preset.
TIMED_PRESETS = ("fermi_dr4", "fermi_dr4_bands", "fermi_dr4_measurements")
#: 3FGL's light-curve preset: 48 monthly operands a source, the most any preset draws.
FGL3_TIMED = "fermi_3fgl_lightcurve"
#: The reference the error bars of `MC_DRAWS` draws are compared with.
REFERENCE_DRAWS = 65_536


def _rows(catalog, ids) -> np.ndarray:
    """The catalog rows of a data set's sources, by name."""
    where = {str(name): i for i, name in enumerate(catalog.names)}
    return np.array([where[str(name)] for name in ids], dtype=np.int64)


def release_rows() -> None:
    """The shipped releases' source counts (docs/catalogs.md, "Catalogs and releases")."""
    names = ("3FGL", "4FGL", "4FGL-DR2", "4FGL-DR4", "FL16Y")
    print(f"{' / '.join(names)} sources: {' / '.join(str(quiet_catalog(name).n_rows) for name in names)}")


def missing_errors() -> None:
    """The main job's sources whose Frac_Variability has no error (docs/catalogs.md, "Missing errors")."""
    from gpal.catalog_jobs.classify import DEFAULT_TEST_SIZE
    from gpal.catalog_jobs.prediction import DEFAULT_SELECT, selection_pool
    from gpal.catalog_jobs.selection import CatalogSelection

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        catalog, data = CatalogSelection().load()
        trained = {code for codes in data.meta["cuts"]["classes"].values() for code in codes}
        pool = selection_pool(catalog, [t for t in DEFAULT_SELECT if t not in trained], data.meta["features"])
    train, _ = data.split(test_size=DEFAULT_TEST_SIZE, seed=0, stratify=True)
    columns, table = catalog.columns, catalog.table
    error = float_column(table[columns.frac_variability_error])
    # as the preset reads its error_sentinel (gpal.catalogs.features.errors.read_error)
    missing = np.isclose(error, FRAC_VARIABILITY_SENTINEL, rtol=1e-6, atol=0.0)
    zero = float_column(table[columns.frac_variability]) == 0
    name = catalog.release
    print(f"{name} rows with Unc_Frac_Variability = 10: {missing.sum()}")
    print(f"{name} of them with Frac_Variability = 0: {(missing & zero).sum()}")
    for label, part in (("classified", pool), ("labelled", data), ("trained on", train)):
        print(f"{name} main job's {label} sources: {len(part.ids)}")
        in_part = missing[_rows(catalog, part.ids)].sum()
        print(f"{name} main job's {label} sources with Unc_Frac_Variability = 10: {in_part}")
    real = error[np.isfinite(error) & ~missing]
    # the population's error is the median over every catalog row with one (gpal.catalogs.features.errors)
    print(f"{name} median Unc_Frac_Variability of the rows with one: {np.median(real):.3f}")


def preset_keeps() -> None:
    """How many of the main job's labelled sources the fermi_dr4 preset keeps, and which it drops."""
    from gpal.catalog_jobs.selection import CatalogSelection

    for name in ("FL16Y", "4FGL-DR4"):
        selection = CatalogSelection(catalog=name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            catalog, data = selection.load()
        codes = [c for group in data.meta["cuts"]["classes"].values() for c in group]
        labelled = np.isin(catalog.class_codes, codes)
        dropped = data.meta["dropped"]
        print(f"{name} main job's labelled sources in the catalog: {labelled.sum()}")
        print(f"{name} of them the fermi_dr4 preset keeps: {len(data.ids)}")
        print(f"{name} of them dropped (the columns without a finite value): "
              + "; ".join(f"{source} ({', '.join(sorted(dropped[source]))})" for source in sorted(dropped)))


def lp_beta_v20() -> None:
    """4FGL v20's unassociated sources without an LP_beta error, which the published preset drops."""
    catalog = quiet_catalog("4FGL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pool = catalog.pool(select=("unassociated",))
        published = catalog.dataset(**PUBLISHED)
    unassociated = catalog.class_codes == ""
    no_error = np.isnan(float_column(catalog.table[catalog.columns.beta_error]))
    print(f"4FGL unassociated sources: {unassociated.sum()}")
    print(f"4FGL unassociated sources with a NaN Unc_LP_beta: {(unassociated & no_error).sum()}")
    print(f"4FGL pool of the unassociated with the default preset: {len(pool.ids)}")
    print(f"4FGL published selection: {len(published.ids)} sources, {published.X.shape[1]} features")
    print(f"4FGL published selection's sources with a NaN Unc_LP_beta: {no_error[_rows(catalog, published.ids)].sum()}")


def sigcurv_floor() -> None:
    """The published cut's smallest LP_SigCurv, and how many sources of it the floor raises, on v20 and DR4."""
    for name in ("4FGL", "4FGL-DR4"):
        catalog = quiet_catalog(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = catalog.dataset(**PUBLISHED)
        curvature = float_column(catalog.table[catalog.columns.curvature_significance])[_rows(catalog, data.ids)]
        print(f"{name} published cut's sources: {len(data.ids)}")
        print(f"{name} published cut's smallest LP_SigCurv: {curvature.min():.3f}")
        print(f"{name} published cut's sources with LP_SigCurv below {SIGCURV_FLOOR:g}: "
              f"{(curvature < SIGCURV_FLOOR).sum()}")


def ambiguous_links() -> None:
    """Earlier sources that two or more later rows name in the link column, counted here from the column itself,
    not by `gpal.catalogs.links`, whose warning the page describes; and the repeated values naming other releases'
    sources (DR4's ASSOC_FGL holds 2FGL and 1FGL names), which unlink nothing."""
    from gpal.catalogs.catalog import text_values

    for later, earlier in (("FL16Y", "4FGL-DR4"), ("4FGL-DR4", "3FGL")):
        catalog, before = quiet_catalog(later), quiet_catalog(earlier)
        column = catalog.record.link_column(before.record)
        named = Counter(value for value in text_values(catalog.table[column]) if value)
        twice = [value for value, n in named.items() if n > 1]
        own = sum(value in {str(name) for name in before.names} for value in twice)
        print(f"{later} {column} naming one {earlier} source twice or more: {own}")
        print(f"{later} {column} naming one source of another release twice or more: {len(twice) - own}")
    fl16y = quiet_catalog("FL16Y")
    values = text_values(fl16y.table["ASSOC_FGL"])
    print(f"FL16Y ASSOC_FGL naming a 3FGL source: {sum(value.startswith('3FGL') for value in values)}")


def other_classes() -> None:
    """4FGL-DR4's labelled sources outside the three large classes (and outside bcu and unk, which no scheme
    separating BL Lacs from FSRQs trains on)."""
    codes = quiet_catalog("4FGL-DR4").class_codes
    other = ~np.isin(codes, ("", "bll", "fsrq", "psr", "msp", "bcu", "unk"))
    print(f"4FGL-DR4 sources of other classes: {other.sum()}")


def fgl3() -> None:
    """3FGL's classes and what its fermi_3fgl preset keeps."""
    catalog = quiet_catalog("3FGL")
    counts = catalog.class_counts()
    print(f"3FGL bll / fsrq / psr / msp sources: {counts.get('bll', 0)} / {counts.get('fsrq', 0)} / "
          f"{counts.get('psr', 0)} / {counts.get('msp', 0)}")
    beta = np.isfinite(float_column(catalog.table[catalog.columns.beta]))
    print(f"3FGL sources with beta fitted / not: {beta.sum()} / {(~beta).sum()}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = catalog.dataset(classes=["bll", "fsrq", "psr"], features="fermi_3fgl")
        pool = catalog.pool(select=("unassociated", "bcu"), features="fermi_3fgl")
    print(f"3FGL fermi_3fgl features: {data.X.shape[1]}")
    print(f"3FGL labelled bll / fsrq / psr sources with every fermi_3fgl feature: {len(data.ids)}")
    print(f"3FGL unassociated and bcu sources: {(counts['unassociated'] + counts['bcu'])}")
    print(f"3FGL unassociated and bcu sources with every fermi_3fgl feature: {len(pool.ids)}")


def lac_table() -> None:
    """docs/catalogs.md's 4LAC join-coverage table, one row a release."""
    from gpal.catalogs.lac import join_coverage, read_4lac

    lac = read_4lac()
    print("| release | sources with a 4LAC row | of them only without the `c` | bcu with a 4LAC row | "
          "bcu with a synchrotron peak |")
    print("|---|---:|---:|---:|---:|")
    for name, label in LAC_RELEASES:
        c = join_coverage(quiet_catalog(name), lac)
        print(f"| {label} | {c['joined']} of {c['rows']} | {c['joined_by_stem']} | {c['bcu_joined']} of {c['bcu']} | "
              f"{c['bcu_nu_syn']} |")


def _slashed(values) -> str:
    return " / ".join(f"{v:.2f}" for v in values)


def error_model() -> None:
    """The prose of docs/catalogs.md's error-model figure and caveats: the hardness ratios' error bars on rows with an
    upper-limit band, old (first order) against new, the draws' mean against the point value, and the error bars of
    `MC_DRAWS` draws against a 65 536-draw reference, on 4FGL-DR4."""
    from shared import build, error_bars, first_order  # the error_model study's old model

    from gpal.catalogs.features import FEATURE_PRESETS
    from gpal.catalogs.features import propagation

    catalog = quiet_catalog("4FGL-DR4")
    preset = FEATURE_PRESETS["fermi_dr4"]
    ratios = [f for f in preset if f.combine == "hardness"]
    names = " / ".join(f.label for f in ratios)
    lower = float_column(catalog.table[catalog.columns.band_flux_error])[..., 0]

    def limits(rows):
        return [np.isnan(lower[rows, f.band]) | np.isnan(lower[rows, f.other_band]) for f in ratios]

    everything = dict(select=list(catalog.class_counts()))  # the figure's sources
    new, old = build(catalog, ratios, **everything), build(catalog, [first_order(f) for f in ratios], **everything)
    e_new, e_old = error_bars(new), error_bars(old)
    limit = limits(_rows(catalog, new.ids))
    print(f"4FGL-DR4 sources, {names}, median old error with an upper-limit band: "
          + _slashed(np.median(e_old[f.label][lim]) for f, lim in zip(ratios, limit)))
    print(f"4FGL-DR4 sources, {names}, median new error with an upper-limit band: "
          + _slashed(np.median(e_new[f.label][lim]) for f, lim in zip(ratios, limit)))
    print(f"4FGL-DR4 sources, largest new hardness-ratio error: {max(e_new[f.label].max() for f in ratios):.3f}")
    print(f"4FGL-DR4 sources, HR12 median new / old error with both bands detected: "
          f"{_slashed([np.median(e_new['HR12'][~limit[0]]), np.median(e_old['HR12'][~limit[0]])])}")

    labelled = np.isin(catalog.class_codes, ("bll", "fsrq", "psr", "msp"))
    print(f"4FGL-DR4 labelled sources, {names}, with an upper-limit band: "
          + " / ".join(str(lim.sum()) for lim in limits(np.flatnonzero(labelled))) + f" of {labelled.sum()}")
    for column in (catalog.columns.flux, catalog.columns.energy_flux):
        ratio = float_column(catalog.table[f"Unc_{column}"])[labelled] / float_column(catalog.table[column])[labelled]
        print(f"4FGL-DR4 labelled sources, largest Unc_{column} / {column}: {np.nanmax(ratio):.2f}")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        point = catalog.dataset(**THREE_CLASS_SELECTION, features=ratios)
        mean = catalog.dataset(**THREE_CLASS_SELECTION, features=[dataclasses.replace(f, centre="draw_mean") for f in ratios])
    offset = np.abs(mean.X - point.X) / np.sqrt(point.X_var)
    limit = limits(_rows(catalog, point.ids))
    for label, part in (("an upper-limit band", lambda lim: lim), ("both bands detected", lambda lim: ~lim)):
        print(f"4FGL-DR4 labelled sources, {names}, median |draws' mean - point value| / sd with {label}: "
              + _slashed(np.median(offset[part(lim), j]) for j, lim in enumerate(limit)))

    monte_carlo = [f for f in preset if f.propagation == "monte_carlo" and f.label != "Frac_Variability"]
    drawn = propagation.MC_DRAWS
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            used = catalog.dataset(**THREE_CLASS_SELECTION, features=monte_carlo)
            propagation.MC_DRAWS = REFERENCE_DRAWS  # read at each build (`_monte_carlo_moments`)
            reference = catalog.dataset(**THREE_CLASS_SELECTION, features=monte_carlo)
    finally:
        propagation.MC_DRAWS = drawn
    error = np.abs(np.sqrt(used.X_var / reference.X_var) - 1) * 100
    ratio = np.array([f.combine == "hardness" for f in monte_carlo])
    for label, columns in (("hardness ratios", ratio), ("log fluxes", ~ratio)):
        print(f"4FGL-DR4 labelled sources, {label}, error bar of {drawn} draws against {REFERENCE_DRAWS}, "
              f"median / largest difference in %: {_slashed([np.median(error[:, columns]), error[:, columns].max()])}")


def _timed(build) -> tuple[float, float, int]:
    """Wall and CPU seconds of one build (this process's CPU: the Monte Carlo runs in it), and its rows."""
    wall, cpu = time.perf_counter(), time.process_time()
    data = build()
    return time.perf_counter() - wall, time.process_time() - cpu, len(data.ids)


def timings() -> None:
    """One build of each timed data set, after one untimed build that reads 4FGL-DR4 and warms up."""
    catalog = quiet_catalog("4FGL-DR4")
    print(f"cpu count: {os.cpu_count()}, niceness: {os.nice(0)}")
    print(f"load average at start (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        catalog.dataset(**THREE_CLASS_SELECTION, features="fermi_dr4")
        for preset in TIMED_PRESETS:
            wall, cpu, n = _timed(lambda: catalog.dataset(**THREE_CLASS_SELECTION, features=preset))
            print(f"4FGL-DR4 labelled sources with {preset}: {n}, wall s: {wall:.1f}, CPU s: {cpu:.1f}")
        wall, cpu, n = _timed(lambda: catalog.pool(select=("unassociated", "bcu"), features="fermi_dr4"))
        print(f"4FGL-DR4 unassociated and bcu sources with fermi_dr4: {n}, wall s: {wall:.1f}, CPU s: {cpu:.1f}")
        fgl3 = quiet_catalog("3FGL")
        builds = (("labelled bll / fsrq / psr", lambda: fgl3.dataset(classes=["bll", "fsrq", "psr"],
                                                                     features=FGL3_TIMED)),
                  ("unassociated and bcu", lambda: fgl3.pool(select=("unassociated", "bcu"), features=FGL3_TIMED)))
        for label, build in builds:
            wall, cpu, n = _timed(build)
            print(f"3FGL {label} sources with {FGL3_TIMED}: {n}, wall s: {wall:.1f}, CPU s: {cpu:.1f}")
    print(f"load average at end (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


def wheel() -> None:
    """The size of the wheel ``pip wheel --no-deps`` builds from this checkout, and of its parts as stored in it
    (compressed): the shipped catalogs (`gpal.catalogs.data`), the KEEL copies (`gpal.data.keel_files`), the rest."""
    top = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", out, str(top)],
                       check=True)
        (built,) = Path(out).glob("gpal-*.whl")
        with zipfile.ZipFile(built) as archive:
            members = archive.infolist()
        size = built.stat().st_size
    parts = {"catalogs": "gpal/catalogs/data/", "KEEL copies": "gpal/data/keel_files/"}
    stored = {name: sum(m.compress_size for m in members if m.filename.startswith(prefix))
              for name, prefix in parts.items()}
    print(f"wheel MB: {size / 1e6:.1f}")
    for name, bytes_ in stored.items():
        print(f"{name} in the wheel MB: {bytes_ / 1e6:.1f}")
    print(f"the rest of the wheel MB: {(size - sum(stored.values())) / 1e6:.1f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timings", action="store_true", help="time the data-set builds instead of counting")
    parser.add_argument("--wheel", action="store_true", help="measure the wheel a checkout builds instead")
    args = parser.parse_args(argv)
    with keep_printed("catalog_facts", __file__, argv):
        if args.wheel:
            wheel()
        elif args.timings:
            timings()
        else:
            for part in (release_rows, missing_errors, preset_keeps, lp_beta_v20, sigcurv_floor, ambiguous_links,
                         other_classes, fgl3, lac_table, error_model):
                part()


if __name__ == "__main__":
    main()
