#!/usr/bin/env python
"""Table 9 of the noisy-input GP paper against repeated-splits runs of gpal, and what each difference moves.

Reads finished ``gpal workflow fermi_4fgl`` folders: the baseline (gpal's
defaults) and any variants (``NAME=FOLDER``, each one setting changed).  Prints, per method:

* the baseline's test NLL and error (mean ± SE over its splits) beside the paper's, with the
  gap in units of the combined standard error sqrt(SE_gpal^2 + SE_paper^2);
* each noisy-input method minus MGP, paired, and how many test predictions give the true class
  p < 0.01 (confident mistakes) with their share of the NLL;
* per variant, its mean and its difference from the baseline: paired over the splits both
  ran (same test sets and seeds) when the variant used the same split protocol, unpaired
  (combined SE) when it did not (``protocol.stratify=false`` draws other test sets).

    .venv/bin/python lab/studies/table9_account.py runs/fermi_4fgl_100 \\
        sigma0=runs/fermi_sigma0 unstratified=runs/fermi_unstratified M22=runs/fermi_m22
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from gpal.runs.repeated_splits import load_units

WORKFLOW = Path(__file__).resolve().parents[1] / "fermi_4fgl.yaml"


def _paper() -> dict[str, dict[str, list[float]]]:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["reference"]


def _units(folder: Path) -> dict[str, dict[int, dict[str, Any]]]:
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return {m: load_units(folder, m, None) for m in config["methods"]}, config


def _mean_se(values: np.ndarray) -> tuple[float, float]:
    return float(np.mean(values)), float(np.std(values, ddof=1) / math.sqrt(len(values))) if len(values) > 1 else math.nan


def account(base: Path, variants: dict[str, Path]) -> str:
    paper = _paper()
    base_units, base_config = _units(base)
    lines = ["| method | metric | gpal (splits) | paper | gap / combined SE |" + "".join(
        f" {name}: mean | {name} − gpal |" for name in variants), "|---|---|---|---|---|" + "---|---|" * len(variants)]
    loaded = {name: _units(folder) for name, folder in variants.items()}
    for method in base_units:
        for metric in ("nll", "error"):
            splits = sorted(base_units[method])
            values = np.array([base_units[method][k][metric] for k in splits])
            m, se = _mean_se(values)
            pm, pse = paper[method][metric]
            row = f"| {method} | {metric} | {m:.3f} ± {se:.3f} ({len(splits)}) | {pm:.3f} ± {pse:.3f} | " \
                  f"{(m - pm) / math.hypot(se, pse):+.1f} |"
            for name, (units, config) in loaded.items():
                mine = units.get(method, {})
                if not mine:
                    row += " – | – |"
                    continue
                vm, vse = _mean_se(np.array([u[metric] for u in mine.values()]))
                if config["stratify"] == base_config["stratify"] and config["seed"] == base_config["seed"]:
                    common = sorted(set(mine) & set(base_units[method]))
                    diff = np.array([mine[k][metric] - base_units[method][k][metric] for k in common])
                    dm, dse = _mean_se(diff)
                    row += f" {vm:.3f} ± {vse:.3f} ({len(mine)}) | {dm:+.3f} ± {dse:.3f} paired ({len(common)}) |"
                else:
                    row += f" {vm:.3f} ± {vse:.3f} ({len(mine)}) | {vm - m:+.3f} ± {math.hypot(vse, se):.3f} |"
            lines.append(row)
    return "\n".join(lines)


def within_baseline(base: Path) -> str:
    """Each noisy-input method minus MGP, paired over splits, and where the NLL comes from (confident mistakes)."""
    units, _ = _units(base)
    lines = ["| method | Δ NLL vs MGP (paired) | lower than MGP | Δ error vs MGP | p(true) < 0.01 | their share of NLL |",
             "|---|---|---|---|---|---|"]
    for method, mine in units.items():
        p_true = np.concatenate([np.asarray(u["proba"])[np.arange(len(u["y_true"])), u["y_true"]] for u in mine.values()])
        nll = -np.log(p_true)
        tail = f"{int((p_true < 0.01).sum())} of {len(p_true)} | {nll[p_true < 0.01].sum() / nll.sum():.2f} |"
        if method == "MGP" or "MGP" not in units:
            lines.append(f"| {method} | | | | {tail}")
            continue
        common = sorted(set(mine) & set(units["MGP"]))
        d_nll = np.array([mine[k]["nll"] - units["MGP"][k]["nll"] for k in common])
        d_err = np.array([mine[k]["error"] - units["MGP"][k]["error"] for k in common])
        (m, se), (em, ese) = _mean_se(d_nll), _mean_se(d_err)
        lines.append(f"| {method} | {m:+.3f} ± {se:.3f} | {int((d_nll < 0).sum())} / {len(common)} | "
                     f"{em:+.3f} ± {ese:.3f} | {tail}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("base", type=Path, help="the baseline run folder (gpal's defaults)")
    p.add_argument("variants", nargs="*", help="NAME=FOLDER, a run with one setting changed")
    args = p.parse_args(argv)
    variants = {}
    for item in args.variants:
        name, sep, folder = item.partition("=")
        if not sep:
            p.error(f"variant {item!r} is not NAME=FOLDER")
        variants[name] = Path(folder)
    print(account(args.base, variants))
    print()
    print(within_baseline(args.base))
    return 0


if __name__ == "__main__":
    sys.exit(main())
