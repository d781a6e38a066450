"""Paper 000, Fig. 4 and sec. IV-B1: a label-flip delta held at 1e-3 against one learned with the ELBO.

Two reports:

``paired RUN``: from the folder of ``gpal/workflows/files/papers/000_fig_4.yaml`` (a ``compare`` run), for each
data set and each of step / probit / logit, the test NLL and accuracy of the fixed-delta method minus the
learned-delta one, split by split (same split, same seed), as mean ± SE over the splits both finished.
The paper's claim is a clearly positive NLL difference at about zero accuracy difference.  With
``--from-split K --accuracy-margin M`` only splits K onwards count (a confirmatory run's fresh splits) and each
pair gets the test declared for it in claims/000.yaml: the 95 % t interval of the NLL difference, and the 90 %
t interval of the accuracy difference against ±M (TOST, each one-sided test at 5 %).

``trajectory DATASET``: GPC-I (step) fitted twice on split 0 of the compare protocol (random stratified
90/10, the workflow's seed 0), delta learned and fixed, with the test NLL and accuracy, delta, eq. 27's
optimum delta* (binary: 1 - mean Phi(y mu / sqrt(a + nu)) over the training rows) and the training rows'
latent mean |mu_f| and variance nu_f after every epoch: Fig. 4(a)-(f) as numbers.  The paper: with delta
fixed the NLL stalls or rises while nu_f is over-estimated; learned, delta follows delta*.

    PYTHONPATH=$PWD python lab/studies/bench_paper000_delta.py paired runs/papers/000_fig_4
    PYTHONPATH=$PWD python lab/studies/bench_paper000_delta.py paired runs/papers/000_fig_4_32 \
        --from-split 16 --accuracy-margin 0.01
    PYTHONPATH=$PWD python lab/studies/bench_paper000_delta.py trajectory magic --epochs 10

What a command prints is kept in ``lab/studies/records/paper000_delta.json``, one entry a command.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

try:
    from labkit.verdicts import interval
except ModuleNotFoundError as exc:  # gpal installed without the lab beside it
    raise SystemExit(f"{__file__} needs the lab's package labkit: from the repository's top, pip install -e lab"
                     ) from exc

from shared import keep_printed, paired_t  # the script's folder, first on its path

LIKELIHOODS = ("step", "probit", "logit")
FIXED = "-fixed-delta"


def _units(folder: Path, method: str) -> dict[int, dict]:
    return {int(p.stem.split("_")[1]): json.loads(p.read_text())
            for p in sorted((folder / "units" / method).glob("split_*.json"))}


def _mean_se(values: list[float]) -> str:
    v = np.asarray(values, dtype=np.float64)
    se = v.std(ddof=1) / math.sqrt(v.size) if v.size > 1 else math.nan
    return f"{v.mean():+.4f} ± {se:.4f}"


def _test(values: list[float], margin: float | None) -> str:
    """The declared test of one paired difference: its 95 % t interval, or with ``margin`` its 90 % interval and
    TOST's answer (alike inside ±margin; apart where the 95 % interval lies outside it; else open)."""
    mean, se, low, high = paired_t(values)
    if margin is None:
        return f"[{low:+.4f}, {high:+.4f}] " + ("above 0" if low > 0 else "below 0" if high < 0 else "open")
    t_low, t_high = interval(mean, se, len(values) - 1, 0.90)
    verdict = ("alike" if -margin < t_low and t_high < margin
               else "apart" if low > margin or high < -margin else "open")
    return f"[{t_low:+.4f}, {t_high:+.4f}] {verdict} (±{margin:g})"


def paired(run: Path, from_split: int = 0, accuracy_margin: float | None = None) -> None:
    """Fixed minus learned, per data set folder and likelihood, over the splits from ``from_split`` on."""
    tested = accuracy_margin is not None
    print("| data set | likelihood | splits | NLL learned | NLL fixed | NLL fixed - learned "
          "| accuracy fixed - learned |" + (" NLL 95 % t interval | accuracy 90 % t interval |" if tested else ""))
    print("|---|---|---:|---|---|---|---|" + ("---|---|" if tested else ""))
    for folder in sorted(p for p in run.iterdir() if (p / "units").is_dir()):
        for lik in LIKELIHOODS:
            learned, fixed = _units(folder, f"svgp-{lik}"), _units(folder, f"svgp-{lik}{FIXED}")
            both = sorted(k for k in set(learned) & set(fixed) if k >= from_split)
            if not both:
                continue
            nll_l = [learned[k]["nll"] for k in both]
            nll_f = [fixed[k]["nll"] for k in both]
            d_nll = [f - l for f, l in zip(nll_f, nll_l)]
            d_acc = [learned[k]["error"] - fixed[k]["error"] for k in both]
            tests = f" {_test(d_nll, None)} | {_test(d_acc, accuracy_margin)} |" if tested else ""
            print(f"| {folder.name} | {lik} | {len(both)} | {np.mean(nll_l):.4f} | {np.mean(nll_f):.4f} "
                  f"| {_mean_se(d_nll)} | {_mean_se(d_acc)} |" + tests)


def trajectory(name: str, epochs: int, num_inducing: int, seed: int, rows: int) -> None:
    """Per-epoch test NLL / accuracy, delta, delta* and the latent marginals of GPC-I, learned and fixed delta."""
    import tensorflow as tf

    from gpal import NoisyGPClassifier
    from gpal.data import load_dataset
    from gpal.estimators.fit_plan import complete_fit, fit_data, plan_fit
    from gpal.models.quadrature import normal_cdf

    ds = load_dataset(name, seed=seed)
    split = next(ds.repeated_splits(1, 0.1, seed))
    train, test = ds.subset(split.train), ds.subset(split.test)
    probe = np.random.default_rng(seed).choice(train.n_samples, size=min(rows, train.n_samples), replace=False)
    print(f"{name}: {train.n_samples} training / {test.n_samples} test rows, {ds.n_classes} classes, "
          f"M = {num_inducing}, minibatch 50, Adam lr 0.01; latent marginals on {probe.size} training rows")
    print("| delta | epoch | test NLL | test accuracy | delta | delta* (eq. 27) | mean abs mu_f | mean nu_f |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for learn in (True, False):
        clf = NoisyGPClassifier(input_noise="none", likelihood="step", likelihood_options={"learn_delta": learn},
                                num_inducing=num_inducing, batch_size=50, epochs=epochs, random_state=seed)
        data, extra = fit_data(clf, train.X, train.y, None)
        holder = {}

        def report(epoch: int, loss: float) -> None:
            plan = holder["plan"]
            model = plan.session.model
            lik = model.likelihood
            Z_test = plan.standardizer.transform_arrays(test.X, np.zeros_like(test.X))[0]
            Z_probe = plan.standardizer.transform_arrays(train.X[probe], np.zeros_like(train.X[probe]))[0]
            proba = lik.predict_proba(*model.gp.predictive_marginals(tf.constant(Z_test))).numpy()
            picked = np.clip(proba[np.arange(test.n_samples), test.y], 1e-300, None)
            mu, nu = (t.numpy() for t in model.gp.predictive_marginals(tf.constant(Z_probe)))
            delta = float(lik.delta.numpy())
            if ds.n_classes == 2:  # eq. 27: 1 - mean Phi(y mu / sqrt(a + nu)), y = -1 / +1
                y = 2.0 * train.y[probe] - 1.0
                star = 1.0 - float(np.mean(normal_cdf(tf.constant(y * mu[:, 0] / np.sqrt(lik.noise_variance + nu[:, 0]))).numpy()))
                star_text = f"{star:.4f}"
            else:
                star_text = "–"
            print(f"| {'learned' if learn else 'fixed'} | {epoch + 1} | {-np.mean(np.log(picked)):.4f} "
                  f"| {np.mean(proba.argmax(1) == test.y):.4f} | {delta:.4g} | {star_text} "
                  f"| {np.mean(np.abs(mu)):.3f} | {np.mean(nu):.4f} |", flush=True)

        plan = holder["plan"] = plan_fit(clf, data, extra, report)
        result = plan.session.trainer().fit(plan.train_data, epochs=epochs, batch_size=50, learning_rate=0.01,
                                            progress=False, callback=plan.callback)
        complete_fit(plan, result)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("paired", help="fixed minus learned delta from a 000_fig_4 run folder")
    p.add_argument("run", type=Path)
    p.add_argument("--from-split", type=int, default=0, help="count only the splits from this one on")
    p.add_argument("--accuracy-margin", type=float, default=None,
                   help="test each pair as declared: NLL's 95 %% t interval, accuracy by TOST against this margin")
    t = sub.add_parser("trajectory", help="GPC-I per epoch, delta learned and fixed")
    t.add_argument("dataset")
    t.add_argument("--epochs", type=int, default=10)
    t.add_argument("--num-inducing", type=int, default=100)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--rows", type=int, default=2000, help="training rows whose latent marginals are summarised")
    args = parser.parse_args(argv)
    with keep_printed("paper000_delta", __file__, argv):  # docs/papers/000_liu.md cites these tables
        if args.command == "paired":
            paired(args.run, args.from_split, args.accuracy_margin)
        else:
            trajectory(args.dataset, args.epochs, args.num_inducing, args.seed, args.rows)


if __name__ == "__main__":
    main()
