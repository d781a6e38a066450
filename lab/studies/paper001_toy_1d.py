"""Paper 001, sec. 5.1 (Table 1): on the 1-D toy, do the noisy-input methods beat MGP in NLL at a similar error?

The paper has one problem and 1000 test points, and its ± is a bootstrap over those points; so here
each method's per-point log loss and 0-1 error are paired with MGP's on the same test points, and the
mean difference gets a Student t interval over the points (`labkit.verdicts`): an order
(NLL below MGP's) is resolved where the 95 % interval excludes 0, "similar error" only where the
90 % interval lies inside ±``--margin`` (TOST).  Each method's mean KL from the exact Bayes-optimal predictive,
and that predictive's own NLL and error (how hard the draw is), go beside them.  Reads a finished ``gpal workflow
toy_1d`` run folder and rebuilds its problem from the run's ``workflow.json``.

    python lab/studies/paper001_toy_1d.py runs/toy_1d

One JSON line a predictive (the Bayes-optimal one first), kept in ``lab/studies/records/toy_1d.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from gpal.data.synthetic import toy_1d
from gpal.workflows.toy import kl_from_bayes
try:
    from labkit.claim_rules import alike_verdict
    from labkit.verdicts import order_verdict
except ModuleNotFoundError as exc:  # gpal installed without the lab beside it
    raise SystemExit(f"{__file__} needs the lab's package labkit: from the repository's top, pip install -e lab"
                     ) from exc
from shared import keep_printed, paired_t  # the script's folder, first on its path

BASELINE = "MGP"
#: The exact predictive of the drawn problem: the expected NLL no method can beat on it.
BAYES = "Bayes-optimal"


def point_losses(proba: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per test point: -log p(y) and whether the arg-max misses y."""
    p = np.clip(proba[np.arange(len(y)), y], 1e-300, None)
    return -np.log(p), (np.argmax(proba, axis=1) != y).astype(float)


def paired(run: Path, margin: float) -> list[dict]:
    """Per method: its mean NLL and error minus MGP's, paired over the test points, with verdicts, and its mean KL
    from the Bayes-optimal predictive; first the Bayes-optimal predictive's own NLL and error."""
    config = json.loads((run / "workflow.json").read_text(encoding="utf-8"))
    d = config["data"]
    problem = toy_1d(d["n_train"], d["n_test"], d["noise_std"], seed=config["seed"], variance=d["variance"],
                     lengthscale=d["lengthscale"])
    classes = np.unique(problem.train.y)
    y = np.searchsorted(classes, problem.test.y)
    bayes = problem.bayes_proba(problem.test.X)
    losses, kl = {}, {}
    for method in config["methods"]:
        unit = run / "units" / f"{method}.json"
        if not unit.is_file():
            raise FileNotFoundError(f"{unit} does not exist: the run has not finished method {method!r}")
        proba = np.asarray(json.loads(unit.read_text(encoding="utf-8"))["proba"])
        losses[method], kl[method] = point_losses(proba, y), kl_from_bayes(bayes, proba)
    if BASELINE not in losses:
        raise ValueError(f"the run has no {BASELINE!r} unit; its methods are {config['methods']}")
    rows = []
    for method, (nll, err) in losses.items():
        if method == BASELINE:
            continue
        row = {"method": method, "n": len(y), "kl": kl[method]}
        for metric, a, b in (("nll", nll, losses[BASELINE][0]), ("error", err, losses[BASELINE][1])):
            row[metric] = float(np.mean(a))
            row[f"{metric}_gap"], row[f"{metric}_se"], row[f"{metric}_low"], row[f"{metric}_high"] = paired_t(a - b)
        # The verdicts take two means with SEs; a paired difference is the method's row against an exact 0
        # (SE 0), which leaves the difference's own SE and n - 1 degrees of freedom.
        n = len(y)
        gaps = {m: {"method": method, "gpal_mean": row[f"{m}_gap"], "gpal_se": row[f"{m}_se"], "n": n}
                for m in ("nll", "error")}
        zero = {"method": BASELINE, "gpal_mean": 0.0, "gpal_se": 0.0, "n": n}
        row["nll_verdict"] = order_verdict(gaps["nll"], zero, higher_is_better=False, where="1-D toy NLL")
        row["error_verdict"] = alike_verdict(gaps["error"], zero, margin, where="1-D toy error")
        rows.append(row)
    rows.insert(0, {"method": BASELINE, "n": len(y), "kl": kl[BASELINE],
                    "nll": float(np.mean(losses[BASELINE][0])), "error": float(np.mean(losses[BASELINE][1]))})
    bayes_nll, bayes_error = point_losses(bayes, y)
    rows.insert(0, {"method": BAYES, "n": len(y), "nll": float(np.mean(bayes_nll)),
                    "error": float(np.mean(bayes_error))})
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="a finished toy_1d run folder")
    parser.add_argument("--margin", type=float, default=0.01, help="'similar error' margin (default 0.01)")
    args = parser.parse_args(argv)
    rows = paired(args.run, args.margin)
    with keep_printed("toy_1d", __file__, argv):  # docs/papers.md cites the NLL gaps, 001_numbers.md the KLs
        for row in rows:
            print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}))


if __name__ == "__main__":
    main()
