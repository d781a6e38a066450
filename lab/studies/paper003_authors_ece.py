"""Paper 003's ECE on two classes as the authors' code takes it, from two runs of the MAGIC workflow on the same splits.

The authors' GPD predicts two columns, so their ``calibration_test`` bins its top label; GPC and GPR + Platt predict
p(y = 1), binned as it is.  One run scores GPD with ``ece.binary=top_label``, the other every method with
``ece.binary=positive``; this reads each workflow's own ECE values (``measurements.json``) and pairs them by split.

    python lab/studies/paper003_authors_ece.py RUN_TOP_LABEL RUN_POSITIVE --json RECORD
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

from shared import paired_t  # the script's folder, first on its path

GPD, OTHERS = "dirichlet", ("gpr-platt", "svgp-softmax-mc")


def measured_values(run: Path, method: str, metric: str = "ece") -> tuple[dict, list[float]]:
    """The run's ``measurements.json`` and ``method``'s per-split values of ``metric`` in it."""
    measured = json.loads((run / "measurements.json").read_text())
    rows = [r for r in measured["values"] if r["metric"] == metric and r["method"] == method]
    if not rows:
        raise SystemExit(f"{run}: no {metric} of {method!r} in measurements.json")
    return measured, [float(v) for v in rows[0]["values"]]


def shipped_name(command: str) -> str:
    """The run's command with its workflow file named as shipped (``papers/<name>``), not by a checkout's path."""
    return re.sub(r"\S*/gpal/workflows/files/(papers/\S+?)\.yaml", r"\1", command)


def paired(a: list[float], b: list[float]) -> dict:
    """Split by split ``a - b``, its mean and 95 % t interval (`shared.paired_t`)."""
    d = np.asarray(a) - np.asarray(b)
    mean, _, low, high = paired_t(d)
    return {"per_split": np.round(d, 6).tolist(), "mean": round(mean, 6), "low": round(low, 6), "high": round(high, 6)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("top_label", type=Path, help="the run with ece.binary=top_label (GPD)")
    p.add_argument("positive", type=Path, help="the run with ece.binary=positive (every method)")
    p.add_argument("--json", type=Path, required=True, help="the record to write")
    args = p.parse_args(argv)
    top_run, gpd_top = measured_values(args.top_label, GPD)
    pos_run, gpd_pos = measured_values(args.positive, GPD)
    # the same splits and fits scored twice: GPD's NLLs agree to the last bits a reduction's order moves
    if not np.allclose(measured_values(args.top_label, GPD, "nll")[1], measured_values(args.positive, GPD, "nll")[1],
                       rtol=1e-9, atol=0):
        raise SystemExit(f"{args.top_label} and {args.positive}: GPD's NLLs differ split by split; expected the same "
                         "splits and fits, scored twice")
    others = {m: measured_values(args.positive, m)[1] for m in OTHERS}
    record = {
        "title": "Paper 003 on MAGIC: the ECE as the authors' code takes it (GPD by its top label, GPC and "
                 "GPR + Platt by p(y = 1)), the workflows' own values paired by split",
        "runs": {"top_label": {"commit": top_run["commit"], "command": shipped_name(top_run["command"]), "ece": top_run["settings"]["ece"]},
                 "positive": {"commit": pos_run["commit"], "command": shipped_name(pos_run["command"]), "ece": pos_run["settings"]["ece"]}},
        "ece": {f"{GPD} (top label)": gpd_top, f"{GPD} (p(y = 1))": gpd_pos, **{f"{m} (p(y = 1))": v for m, v in others.items()}},
        "paired_95_t": {**{f"{GPD} (top label) - {m}": paired(gpd_top, v) for m, v in others.items()},
                        f"{GPD} (p(y = 1)) - gpr-platt": paired(gpd_pos, others["gpr-platt"])},
    }
    args.json.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    for name, pair in record["paired_95_t"].items():
        print(f"{name}: {pair['mean']:+.4f} [{pair['low']:+.4f}, {pair['high']:+.4f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
