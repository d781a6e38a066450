"""Make docs/figures/error_model.png: the error bars the fermi_dr4 features carry, old model against new.

For every 4FGL-DR4 source the propagated 1-sigma error (the square root of the feature's
variance) is plotted against its detection significance Signif_Avg, for the first-order,
symmetrised model gpal used before (grey) and the catalog's own error model that the
fermi_dr4 preset now uses (colour: orange where a band of the hardness ratio is an upper
limit, Sqrt_TS_Band < 1).  It also prints, as a Markdown table, the median and 90th
percentile error bar of every fermi_dr4 feature on the main job's labelled sources
(bll, fsrq, psr + msp) under both models, as quoted in docs/catalogs.md and kept in
lab/studies/records/error_model.json (`shared.keep_printed`).

    python lab/studies/make_error_model_figure.py       # PNG into docs/figures/

No fitting and nothing random beyond the propagation's fixed seed: a rerun gives the same figure.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from gpal.catalogs import load_catalog  # noqa: E402
from gpal.catalogs.features import FEATURE_PRESETS  # noqa: E402
from shared import THREE_CLASS_SELECTION as MAIN, ROOT, build, error_bars, first_order, keep_printed  # noqa: E402

PANELS = ("HR12", "HR23", "HR56", "log10(Flux1000)")

def table(old: dict, new: dict) -> str:
    lines = ["| feature | old median | old p90 | old max | new median | new p90 | new max |", "|---|---|---|---|---|---|---|"]
    for name in new:
        o, n = old[name], new[name]
        if not (o.any() or n.any()):
            continue
        cells = [f"{np.median(a):.3g} | {np.quantile(a, 0.9):.3g} | {a.max():.3g}" for a in (o, n)]
        lines.append(f"| `{name}` | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "figures" / "error_model.png")
    args = parser.parse_args(argv)

    catalog = load_catalog("4FGL-DR4")
    preset = FEATURE_PRESETS["fermi_dr4"]
    old_preset = [first_order(f) for f in preset]

    # The table: the main job's labelled sources, every fermi_dr4 feature.
    labelled_new = build(catalog, preset, **MAIN)
    labelled_old = build(catalog, old_preset, **MAIN)
    assert list(labelled_old.ids) == list(labelled_new.ids)
    with keep_printed("error_model", __file__, argv):  # docs/catalogs.md quotes the table
        print(f"{labelled_new.n_samples} labelled sources of {catalog.release}")
        print(table(error_bars(labelled_old), error_bars(labelled_new)))

    # The figure: every source of the catalog (all classes and the unassociated).
    everything = dict(select=list(catalog.class_counts()))
    panels = sorted((f for f in preset if f.label in PANELS), key=lambda f: PANELS.index(f.label))
    new = build(catalog, panels, **everything)
    old = build(catalog, [first_order(f) for f in panels], **everything)
    index = {name: i for i, name in enumerate(catalog.names)}
    rows = np.array([index[name] for name in new.ids])
    significance = np.asarray(catalog.table["Signif_Avg"], dtype=np.float64)[rows]
    lower = np.asarray(catalog.table["Unc_Flux_Band"], dtype=np.float64)[rows, :, 0]
    e_new, e_old = error_bars(new), error_bars(old)

    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5), sharex=True)
    for ax, feature in zip(axes.flat, panels):
        name = feature.label
        ax.scatter(significance, e_old[name], s=3, c="0.65", alpha=0.5, lw=0, label="before: first order, symmetrised", rasterized=True)
        if feature.combine == "hardness":
            limit = np.isnan(lower[:, feature.band]) | np.isnan(lower[:, feature.other_band])
            ax.scatter(significance[~limit], e_new[name][~limit], s=3, c="tab:blue", lw=0,
                       label="now: both bands detected", rasterized=True)
            ax.scatter(significance[limit], e_new[name][limit], s=3, c="tab:orange", lw=0,
                       label="now: a band is an upper limit", rasterized=True)
            ax.axhline(1.0, color="k", lw=0.8, ls="--")
            ax.text(4.2, 1.15, "HR in [-1, 1]: sd <= 1", fontsize=8)
            ax.set_ylim(1e-3, 1e4)  # the old model's largest error bars (up to 3e10) are off the top
        else:
            ax.scatter(significance, e_new[name], s=3, c="tab:blue", lw=0, label="now: Monte Carlo, flux >= 0",
                       rasterized=True)
            ax.set_ylim(3e-3, 1.0)
        ax.set_xscale("log")
        ax.set_xlim(1.0, 1.5e3)
        ax.set_yscale("log")
        ax.set_title(name)
        ax.set_ylabel(f"1-sigma error of {name}")
        ax.grid(alpha=0.3, which="major")
        ax.legend(loc="upper right", fontsize=7, markerscale=4, frameon=True)
    for ax in axes[-1]:
        ax.set_xlabel("Signif_Avg (sigma)")
    hidden = int((significance < 1.0).sum())
    fig.suptitle(f"Propagated error bars of fermi_dr4 features, {catalog.release}: {new.n_samples} sources "
                 f"({hidden} below 1 sigma not shown)")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
