"""Should `NoisyGPClassifier` use the error bars it is given by default?  The estimator with its defaults and no
X_var (the exact-input GP, ``input_noise="none"``) against the same estimator given X_var with the population prior
(``input_noise="latent", input_prior="population"``), fitted on the catalogs' rows exactly as the later-label
checks fit gpal (`gpal.catalog_jobs.later_labels.check_data`): a held-out check trains on a release's 80 % split
and scores the other 20 %; a later-label check trains on an earlier release's labelled sources and scores its
unassociated and bcu sources by the classes a later release gave them.  What the catalog knows (a bcu is a blazar)
is applied to both models' probabilities, as every model of the later-label checks has it.

Each fit prints one JSON line (check, seed, model, seconds, epochs, measures) and keeps the probabilities under
``--units`` (not in git); ``--summarize`` prints, per check, both models' measures over the seeds and the paired
bootstrap interval of "error bars minus ignoring" (`gpal.catalog_jobs.later_labels.measure_check`, 1000 resamples
of the sources, each resample's measure averaged over the seeds)::

    OMP_NUM_THREADS=1 nice -n 10 python lab/studies/bench_estimator_default.py --units runs/estimator_default
    python lab/studies/bench_estimator_default.py --units runs/estimator_default --summarize

``--synthetic`` runs the task of ``benchmarks/heteroscedastic.py`` (a known Bayes answer) instead, one JSON line a
seed: ``error_bars`` (5 features) the defaults without and given X_var, with the paired mean and its 95 % t
interval over the seeds; ``default`` (10 features, 2000 rows) the default fit's time and test NLL without and given
X_var::

    python lab/studies/bench_estimator_default.py --synthetic error_bars --seeds 0 1 2
    python lab/studies/bench_estimator_default.py --synthetic default --seeds 0 1 2

``--curves`` reads training curves that ``benchmarks/heteroscedastic.py curve`` printed (every epoch's bound, the
test NLL every 5th) and prints where each stop rule (`gpal.estimators.fit_plan.BoundStop`, the default ``tol`` and
``n_iter_no_change``: the best epoch so far, and the trend over ``TREND_EPOCHS``) ends it, and its test NLL then
(at the next evaluated epoch) minus the last epoch's::

    python benchmarks/heteroscedastic.py curve --d 5 --noisy --epochs 300 --seed 0 > runs/curves/noisy_d5_s0.jsonl
    python lab/studies/bench_estimator_default.py --curves runs/curves/noisy_d5_s0.jsonl ...
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

from shared import keep_printed  # the script's folder, first on its path

CHECKS = ("held-out:FL16Y", "held-out:4FGL-DR4", "4FGL:FL16Y", "4FGL-DR4:FL16Y")
MODELS = {"ignoring": {}, "error_bars": {"input_noise": "latent", "input_prior": "population"}}
REFERENCE = "error_bars"


def unit_path(units: Path, check: str, seed: int, model: str) -> Path:
    return units / f"{check.replace(':', '_')}_seed{seed}_{model}.json"


def fit_unit(check: str, seed: int, model: str) -> dict:
    """One estimator's probabilities of one check's rows (before what the catalog knows is applied)."""
    from gpal import NoisyGPClassifier
    from gpal.catalog_jobs.later_labels import check_data

    train, rows, _ = check_data(check, seed)
    est = NoisyGPClassifier(random_state=seed, progress=False, **MODELS[model])
    noisy = bool(MODELS[model])
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the long-fit notice; the catalog's dropped rows are the job's
        est.fit(train.X, train.y, train.X_var if noisy else None)
    seconds = time.perf_counter() - started
    proba = est.predict_proba(rows.X, rows.X_var if noisy else None)
    return {"check": check, "seed": seed, "model": model, "n_train": int(train.y.size), "n_rows": int(len(rows.X)),
            "fit_seconds": round(seconds, 1), "epochs": len(est.history_), "converged": bool(est.converged_),
            "proba": np.asarray(proba).tolist()}


def run(checks: list[str], seeds: list[int], units: Path) -> None:
    units.mkdir(parents=True, exist_ok=True)
    for seed in seeds:  # every check at a seed before the next seed: a partial run still covers every check
        for check in checks:
            for model in MODELS:
                path = unit_path(units, check, seed, model)
                if path.is_file():
                    continue
                unit = fit_unit(check, seed, model)
                path.write_text(json.dumps(unit), encoding="utf-8")
                print(json.dumps({k: v for k, v in unit.items() if k != "proba"}), flush=True)


def summarize(checks: list[str], seeds: list[int], units: Path) -> None:
    from gpal.catalog_jobs.later_labels import check_probabilities, measure_check

    print("| check | measure | ignoring X_var | error bars | error bars - ignoring [95 %] | sources |")
    print("|---|---|---|---|---|---|")
    for check in checks:
        probabilities, seconds = {}, {m: [] for m in MODELS}
        for seed in seeds:
            loaded = {m: json.loads(unit_path(units, check, seed, m).read_text(encoding="utf-8")) for m in MODELS}
            for m, u in loaded.items():
                seconds[m].append(u["fit_seconds"])
            probabilities[seed] = check_probabilities(check, seed, loaded)
        table = measure_check(check, seeds, probabilities, reference=REFERENCE)
        for measure in ("nll", "balanced_accuracy", "ece", "pulsar_blazar_auc"):
            part = table[table.measure == measure].set_index("model")
            ref, other = part.loc[REFERENCE], part.loc["ignoring"]
            # measure_check's interval is reference minus the other model: error bars minus ignoring
            print(f"| {check} | {measure} | {other['value']:.3f} | {ref['value']:.3f} | "
                  f"{other['diff']:+.3f} [{other['diff_low']:+.3f}, {other['diff_high']:+.3f}] | {int(ref['n'])} |")
        print(f"fit seconds {check}: ignoring {np.mean(seconds['ignoring']):.0f} / error bars "
              f"{np.mean(seconds['error_bars']):.0f}")


def synthetic(what: str, seeds: list[int]) -> None:
    """The task of benchmarks/heteroscedastic.py, one JSON line a seed (and for ``error_bars`` the paired summary)."""
    from scipy import stats

    from shared import benchmark_script

    heteroscedastic = benchmark_script("heteroscedastic")

    rows = []
    for seed in seeds:
        if what == "error_bars":
            rows.append(heteroscedastic.error_bars(seed, d=5))
        else:
            rows += [heteroscedastic.default_fit(seed, noisy=noisy) for noisy in (False, True)]
        print(json.dumps(rows[-1] if what == "error_bars" else rows[-2:]), flush=True)
    if what == "error_bars":
        gain = np.array([r["without_X_var"] - r["with_X_var"] for r in rows])
        half = stats.t.ppf(0.975, len(gain) - 1) * gain.std(ddof=1) / np.sqrt(len(gain))
        print(f"test NLL without X_var minus given X_var, mean over {len(gain)} seeds: {gain.mean():.3f} "
              f"[{gain.mean() - half:.3f}, {gain.mean() + half:.3f}]")
        print("test NLL without X_var minus given X_var, per seed: " + " / ".join(f"{g:.3f}" for g in gain))
        for key, what in (("with_X_var", "given X_var"), ("without_X_var", "without X_var")):
            print(f"epochs run {what}, per seed: " + " / ".join(str(r[f"{key}_epochs"]) for r in rows))
        return
    for given in (False, True):
        fits = [r for r in rows if (r["input_noise"] != "none") == given]
        what = "given X_var" if given else "without X_var"
        for key, label in (("fit_wall_seconds", "wall seconds"), ("fit_cpu_seconds", "CPU seconds"),
                           ("epochs_run", "epochs"), ("test_nll", "test NLL")):
            print(f"default fit {what}, {label} per seed: "
                  + " / ".join(f"{r[key]:.3f}" if key == "test_nll" else f"{r[key]:.0f}" for r in fits))


def stops(paths: list[Path]) -> None:
    """Each curve's stop under either rule, as label lines."""
    from gpal import NoisyGPClassifier
    from gpal.estimators.fit_plan import TREND_EPOCHS, BoundStop

    defaults = NoisyGPClassifier().get_params()
    for path in paths:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        losses = [r["loss"] for r in rows if "loss" in r]
        nll = {r["epoch"]: r["test_nll"] for r in rows if "test_nll" in r}
        last = max(nll)
        shown = []
        for name, window in (("best epoch", None), (f"trend over {TREND_EPOCHS}", TREND_EPOCHS)):
            rule = BoundStop(float(defaults["tol"]), int(defaults["n_iter_no_change"]), window=window)
            answers = [rule(epoch, loss) for epoch, loss in enumerate(losses)]
            stop = answers.index(False) + 1 if False in answers else len(losses)
            at = min(e for e in nll if e >= stop) if stop <= last else last
            shown.append(f"{name} {stop} ({nll[at] - nll[last]:+.3f})")
        print(f"{path.stem} ({last} epochs, test NLL {nll[last]:.3f}), stop epoch (NLL minus the last): "
              + "; ".join(shown))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checks", nargs="+", default=list(CHECKS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--units", type=Path, help="folder of the per-fit probabilities of the catalogs' checks")
    parser.add_argument("--summarize", action="store_true", help="print the table from the units kept")
    parser.add_argument("--synthetic", choices=["error_bars", "default"], help="the synthetic task instead")
    parser.add_argument("--curves", nargs="+", type=Path, help="training curves to read the stop rules on instead")
    args = parser.parse_args()
    if args.curves:
        with keep_printed("estimator_default", __file__):
            stops(args.curves)
    elif args.synthetic:
        with keep_printed("estimator_default", __file__):
            synthetic(args.synthetic, args.seeds)
    elif args.units is None:
        parser.error("--units is required for the catalogs' checks")
    elif args.summarize:
        with keep_printed("estimator_default", __file__):
            summarize(args.checks, args.seeds, args.units)
    else:
        run(args.checks, args.seeds, args.units)


if __name__ == "__main__":
    main()
