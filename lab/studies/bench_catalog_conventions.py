"""Whether every shipped LAT catalog writes its band fluxes and light curves by one upper-limit convention.

A NaN lower error with a finite upper error should mark exactly a band (or year) whose test statistic is below 1,
with the flux the best fit and the upper error its 1-sigma width (flux + 2 x upper error the 2-sigma limit); the
``fermi_dr4`` and ``fermi_3fgl`` error models read the files so. This script checks each clause on the shipped files
and prints docs/catalogs.md's tables ("What 4FGL means by `Unc_Flux_Band` ...", "3FGL: the same convention ...",
"`Flux_History` follows the band convention") in the page's layout, and the counts of its release table, its
"Data problems" table and its sentences on upper-limit bands and ``Frac_Variability``, kept in
``lab/studies/records/catalog_conventions.json``.

    python lab/studies/bench_catalog_conventions.py
"""

from __future__ import annotations


import numpy as np

from shared import float_column, keep_printed, quiet_catalog  # the script's folder, first on its path

#: The bins of sqrt(TS) below the threshold where flux / upper error is compared with sqrt(TS): [low, high).
TS_BINS = ((0.1, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.9))
#: A best fit "of about 0": below this fraction of its upper error.
NEAR_ZERO = 1e-3
#: The percentiles of upper / |lower| error over the detected rows.
PERCENTILES = (1, 10, 50, 90, 99)
#: The main job's labelled classes, as CLASS1 codes.
LABELLED = ("bll", "fsrq", "psr", "msp")
#: 4FGL's "no error measured" value of ``Unc_Frac_Variability`` (the ``fermi_dr4`` preset's ``error_sentinel``).
FRAC_VARIABILITY_SENTINEL = 10.0
#: The 4FGL-layout releases of the light-curve check, by name and version.
HISTORY_RELEASES = (("4FGL", "4FGL (v20)"), ("4FGL-DR2", "DR2 (v27)"), ("4FGL-DR4", "DR4 (v35)"),
                    ("FL16Y", "FL16Y (v41)"))


def _count(n: int) -> str:
    """A count as the page writes it: a space between thousands from 10 000 on."""
    return f"{n:,}".replace(",", " ") if n >= 10_000 else str(n)


def _around_one(below: float, above: float) -> str:
    """The two values either side of sqrt(TS) = 1 with the fewest decimals (at least 5) that keep both off 1."""
    decimals = 5
    while float(f"{below:.{decimals}f}") == 1.0 or float(f"{above:.{decimals}f}") == 1.0:
        decimals += 1
    return f"{below:.{decimals}f} / {above:.{decimals}f}"


def _medians(ratio: np.ndarray, sqrt_ts: np.ndarray, bins) -> str:
    return ", ".join(f"{np.median(ratio[(sqrt_ts >= low) & (sqrt_ts < high)]):.2f}" for low, high in bins)


def convention(flux: np.ndarray, errors: np.ndarray, sqrt_ts: np.ndarray) -> dict[str, object]:
    """The checks of one multi-band (or multi-year) column, every row of every band (year) one entry.

    ``flux`` and ``sqrt_ts`` are (n, k), ``errors`` (n, k, 2) as [lower, upper]. A row is an upper limit where the
    lower error is NaN and the upper finite, detected where both are finite, other otherwise."""
    lower, upper = errors[..., 0], errors[..., 1]
    limit = np.isnan(lower) & np.isfinite(upper)
    detected = np.isfinite(lower) & np.isfinite(upper)
    ratio = flux / upper
    limit_ts, limit_ratio = sqrt_ts[limit], ratio[limit]
    above = ~limit & (sqrt_ts >= 1.0) & (sqrt_ts < 1.1)
    return {
        "limits": int(limit.sum()),
        "limit_max_ts": float(np.nanmax(limit_ts)),
        "detected_min_ts": float(np.nanmin(sqrt_ts[detected])),
        "flux_nan": int(np.isnan(flux[limit]).sum()),
        "flux_negative": int((flux[limit] < 0).sum()),
        "flux_zero": int((flux[limit] == 0).sum()),
        "ts_zero": int((limit_ts == 0).sum()),
        "flux_near_zero": int((limit_ratio < NEAR_ZERO).sum()),
        "medians_below": _medians(limit_ratio, limit_ts, TS_BINS),
        "median_just_below": f"{np.median(limit_ratio[(limit_ts > 0.9) & (limit_ts < 1.0)]):.2f}",
        "median_just_above": f"{np.median(ratio[above]):.2f}",
        "detected_percentiles": ", ".join(
            f"{p:.2f}" for p in np.percentile(upper[detected] / np.abs(lower[detected]), PERCENTILES)),
        "detected_wrong_sign": int(((lower[detected] > 0) | (upper[detected] < 0)).sum()),
        "other": int((~limit & ~detected).sum()),
        "limits_by_band": [int(n) for n in limit.sum(axis=0)],
    }


def _fgl4_bands(name: str) -> dict[str, object]:
    catalog = quiet_catalog(name)
    table, columns = catalog.table, catalog.columns
    return convention(float_column(table[columns.band_flux]), float_column(table[columns.band_flux_error]),
                      float_column(table["Sqrt_TS_Band"]))


def _fgl3_bands() -> tuple[dict[str, object], dict[str, int]]:
    """3FGL's five 0.1-100 GeV bands, one column each, stacked as one (n, 5) column; and its monthly light curve."""
    catalog = quiet_catalog("3FGL")
    table, columns = catalog.table, catalog.columns
    flux = np.column_stack([float_column(table[c]) for c in columns.band_flux])
    errors = np.stack([float_column(table[c]) for c in columns.band_flux_error], axis=1)
    sqrt_ts = np.column_stack([float_column(table["Sqrt_TS" + c.removeprefix("Flux")]) for c in columns.band_flux])
    history, history_errors = float_column(table[columns.history_flux]), float_column(table[columns.history_flux_error])
    months = np.isnan(history_errors[..., 0]) & np.isfinite(history_errors[..., 1])
    return convention(flux, errors, sqrt_ts), {"months": history.shape[1], "nan_lower": int(months.sum()),
                                              "nan_lower_flux_zero": int((history[months] == 0).sum())}


def _fgl4_history(name: str) -> dict[str, object]:
    catalog = quiet_catalog(name)
    table, columns = catalog.table, catalog.columns
    flux = float_column(table[columns.history_flux])
    checks = convention(flux, float_column(table[columns.history_flux_error]), float_column(table["Sqrt_TS_History"]))
    checks["years"] = flux.shape[1]
    return checks


def facts() -> None:
    """The counts of docs/catalogs.md's release table, its "Data problems" table and the upper-limit and
    `Frac_Variability` sentences, one line a release, each count after its label's colon."""
    for name in ("3FGL", "4FGL", "FL16Y"):
        counts = quiet_catalog(name).class_counts()
        print(f"{name} sources: unassociated: {counts['unassociated']}, bcu: {counts['bcu']}")
    for name in ("4FGL", "4FGL-DR4"):
        catalog = quiet_catalog(name)
        table, columns = catalog.table, catalog.columns
        beta_error, curvature = float_column(table[columns.beta_error]), float_column(table[columns.curvature_significance])
        variability = float_column(table[columns.frac_variability])
        error = float_column(table[columns.frac_variability_error])
        # as the fermi_dr4 preset reads its error_sentinel (gpal.catalogs.features.errors.read_error)
        placeholder = np.isclose(error, FRAC_VARIABILITY_SENTINEL, rtol=1e-6, atol=0.0)
        print(f"{name} rows: NaN {columns.beta_error}: {np.isnan(beta_error).sum()}, "
              f"{columns.curvature_significance} = 0: {(curvature == 0).sum()}, "
              f"{columns.frac_variability_error} = {FRAC_VARIABILITY_SENTINEL:g}: {placeholder.sum()}, "
              f"of them with {columns.frac_variability} = 0: {(placeholder & (variability == 0)).sum()}")
        if name == "4FGL-DR4":
            labelled = np.isin(catalog.class_codes, LABELLED)
            real = error[np.isfinite(error) & ~placeholder]
            lower = float_column(table[columns.band_flux_error])[..., 0]
            pool = np.isin(catalog.class_codes, ("", "bcu"))  # an empty CLASS1 is an unassociated source
            print(f"{name} {columns.frac_variability_error} = {FRAC_VARIABILITY_SENTINEL:g} among the labelled "
                  f"({'/'.join(LABELLED)}): {(placeholder & labelled).sum()} of {labelled.sum()}; "
                  f"real errors' median: {np.median(real):.2f}, "
                  f"largest {columns.frac_variability}: {np.nanmax(variability):.1f}")
            print(f"{name} sources with a NaN lower {columns.band_flux_error}, bands 0-7: labelled: "
                  f"{', '.join(map(str, np.isnan(lower[labelled]).sum(axis=0)))}; unassociated and bcu "
                  f"({pool.sum()}): {', '.join(map(str, np.isnan(lower[pool]).sum(axis=0)))}")


def _table(header: str, rows: list[tuple[str, list[str]]]) -> None:
    print(header)
    print("|" + "---|" * header.count(" | ") + "---|")
    for label, cells in rows:
        print(f"| {label} | " + " | ".join(cells) + " |")


def band_table(checks: list[dict[str, object]], header: str, other_label: str) -> None:
    """docs/catalogs.md's Flux_Band table, one column a release."""
    _table(header, [
        ("band-rows with a NaN lower and a finite upper error", [_count(c["limits"]) for c in checks]),
        ("their largest `Sqrt_TS_Band` / the smallest of every detected band-row",
         [_around_one(c["limit_max_ts"], c["detected_min_ts"]) for c in checks]),
        ("their `Flux_Band`: negative / exactly 0 / with `Sqrt_TS_Band` = 0",
         [f"{c['flux_negative']} / {c['flux_zero']} / {_count(c['ts_zero'])}" for c in checks]),
        ("their median `Flux_Band` / upper error at `Sqrt_TS_Band` in [0.1, 0.3), [0.3, 0.5), [0.5, 0.7), [0.7, 0.9)",
         [c["medians_below"] for c in checks]),
        ("median `Flux_Band` / upper error just below / just above the threshold (`Sqrt_TS_Band` in (0.9, 1) / "
         "[1, 1.1))", [f"{c['median_just_below']} / {c['median_just_above']}" for c in checks]),
        ("detected band-rows: upper / \\|lower\\| error at the 1, 10, 50, 90, 99th percentiles",
         [c["detected_percentiles"] for c in checks]),
        (other_label, [str(c["other"]) for c in checks]),
    ])


def fgl3_table(c: dict[str, object]) -> None:
    """docs/catalogs.md's 3FGL table."""
    by_band = ", ".join(map(str, c["limits_by_band"]))
    _table("| check | 3FGL (v16) |", [
        ("band-rows with a NaN lower and a finite upper error", [f"{_count(c['limits'])} ({by_band} by band)"]),
        ("their largest `Sqrt_TS` / the smallest of every detected band-row",
         [_around_one(c["limit_max_ts"], c["detected_min_ts"])]),
        ("their flux: negative / exactly 0 / with `Sqrt_TS` = 0",
         [f"{c['flux_negative']} / {c['flux_zero']} / {_count(c['ts_zero'])}"]),
        ("their median flux / upper error at `Sqrt_TS` in [0.1, 0.3), [0.3, 0.5), [0.5, 0.7), [0.7, 0.9)",
         [c["medians_below"]]),
        ("median flux / upper error just below / just above the threshold (`Sqrt_TS` in (0.9, 1) / [1, 1.1))",
         [f"{c['median_just_below']} / {c['median_just_above']}"]),
        ("detected band-rows: upper / \\|lower\\| error at the 1, 10, 50, 90, 99th percentiles",
         [c["detected_percentiles"]]),
        ("detected band-rows with lower > 0 or upper < 0", [str(c["detected_wrong_sign"])]),
        ("other band-rows (extended sources and the Crab `i` row: −inf in both errors, read as NaN)",
         [str(c["other"])]),
    ])


def history_table(checks: list[dict[str, object]]) -> None:
    """docs/catalogs.md's Flux_History table, one column a 4FGL-layout release."""
    _table("| check | " + " | ".join(label for _, label in HISTORY_RELEASES) + " |", [
        ("years (columns of `Flux_History`)", [str(c["years"]) for c in checks]),
        ("year-rows with a NaN lower and a finite upper error", [_count(c["limits"]) for c in checks]),
        ("their largest `Sqrt_TS_History` / the smallest of every detected year-row",
         [_around_one(c["limit_max_ts"], c["detected_min_ts"]) for c in checks]),
        ("their flux: NaN / negative / exactly 0 / with `Sqrt_TS_History` = 0",
         [f"{c['flux_nan']} / {c['flux_negative']} / {c['flux_zero']} / {_count(c['ts_zero'])}" for c in checks]),
        ("their median flux / upper error at `Sqrt_TS_History` in [0.1, 0.3), [0.3, 0.5), [0.5, 0.7), [0.7, 0.9), "
         "(0.9, 1)", [f"{c['medians_below']}, {c['median_just_below']}" for c in checks]),
        ("median flux / upper error just above (`Sqrt_TS_History` in [1, 1.1))",
         [c["median_just_above"] for c in checks]),
        ("detected year-rows: upper / \\|lower\\| error at the 1, 10, 50, 90, 99th percentiles",
         [c["detected_percentiles"] for c in checks]),
        ("other year-rows (NaN lower and a non-finite upper error)", [str(c["other"]) for c in checks]),
    ])


def main() -> None:
    with keep_printed("catalog_conventions", __file__, []):
        print("## Flux_Band, 4FGL layout")
        band_table([_fgl4_bands("4FGL-DR4"), _fgl4_bands("4FGL")], "| check | 4FGL-DR4 (v35) | 4FGL (v20) |",
                   "other band-rows (the Crab `i` row: NaN lower, −inf or NaN upper error)")
        print("## 3FGL bands")
        bands, months = _fgl3_bands()
        fgl3_table(bands)
        print(f"3FGL upper-limit band-rows with a flux below {NEAR_ZERO:g} of their upper error: "
              f"{_count(bands['flux_near_zero'])}")
        print(f"3FGL Flux_History: {months['months']} months; month-rows with a NaN lower and a finite upper error: "
              f"{_count(months['nan_lower'])}, of them with a flux of exactly 0: {_count(months['nan_lower_flux_zero'])}")
        print("## Flux_History, 4FGL layout")
        history_table([_fgl4_history(name) for name, _ in HISTORY_RELEASES])
        print("## Release counts and data problems")
        facts()


if __name__ == "__main__":
    main()
