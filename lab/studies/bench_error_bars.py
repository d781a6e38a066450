#!/usr/bin/env python
"""Do the error bars pay?  Error-aware and error-blind classifiers where the test sources are noisier.

Tasks (each with a fixed test set and ``--reps`` resampled training sets, so every method is
scored on the same sources and differences are paired source by source):

* ``hetero``:  toy 1-D, 3 classes, per-point noise sd log-uniform in [0.02, 1] for train and test
  (800 / 2000 points); Bayes-optimal NLL known exactly.  Repetition r = GP-prior seed r.
* ``shifted``: the same, trained on precise points (sd 0.02-0.15), tested on noisy ones (0.3-1).
* ``faint``:   4FGL-DR4 bll / fsrq / pulsar (psr + msp), ``fermi_dr4`` features; test = the faintest
  quarter by Signif_Avg, training = a 90% subsample (seed r) of the other three quarters.
* ``bright``:  the reverse: test = the brightest quarter, training from the fainter three.
* ``main``:    the main job's stratified 80/20 split (seed 0); training = a 90% subsample (seed r).

Methods: gpal's noisy-input family (``NoisyGPClassifier``; main-job settings: softmax, M = 50,
batch 200, 300 epochs) and the calibrated baselines, each on the feature values alone and with the
1-sigma error columns as extra features (``+err``: the fair "errors as features" comparison).
Every (task, repetition, method) unit is saved under ``--out`` as soon as it finishes, so an
interrupted run resumes; ``--summarize`` prints every method of every task from the saved units (paired
bootstrap intervals over the test sources, 2000 resamples, of the difference averaged over repetitions), and
``--record FILE`` writes the results page's record of the tasks given from them: ``faint main bright`` (the
catalog table) or ``hetero`` (the synthetic task against the Bayes-optimal NLL).  A unit names the commit it ran
at; for units from before they did, ``--commit`` names it.

    python lab/studies/bench_error_bars.py --task hetero shifted faint bright main --reps 3
    python lab/studies/bench_error_bars.py --summarize --task hetero --record lab/pages/records/results/error_bars.hetero.json
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from shared import GP_SHARED, code_commit, dr4_sources, significance_task

GP_METHODS: dict[str, dict] = {
    "MGP": dict(input_noise="none"),
    "NIMGP": dict(input_noise="latent"),
    "NIMGP pop": dict(input_noise="latent", input_prior="population"),
    # the prior fitted to the training inputs and to unlabelled ones like the sources to classify
    # (DR4: the unassociated + bcu sources; synthetic: 2000 unlabelled draws of the test distribution)
    "NIMGP pop+pool": dict(input_noise="latent", input_prior="population"),
    "NIMGP-NN": dict(input_noise="amortized"),
    "NIMGP-NN pop": dict(input_noise="amortized", input_prior="population"),
    "NIMGP-FO": dict(input_noise="first_order"),
    # settings probed on the synthetic tasks (labels there are a deterministic argmax, as robust-max assumes)
    "NIMGP pop robust-max": dict(input_noise="latent", input_prior="population", likelihood="robustmax"),
    "NIMGP pop 750 epochs": dict(input_noise="latent", input_prior="population", epochs=750),
    "NIMGP pop 2000 epochs M=50": dict(input_noise="latent", input_prior="population", epochs=2000, num_inducing=50),
    # probes of extrapolation (the bright task): an SE kernel reverts to the prior mean far from the data
    "MGP SE+linear": dict(input_noise="none", kernel="se+linear"),
    "NIMGP pop SE+linear": dict(input_noise="latent", input_prior="population", kernel="se+linear"),
}
BASELINES = ("logistic", "random_forest_isotonic", "gradient_boosting_isotonic")
SYNTHETIC = {"hetero": dict(train_noise_std=(0.02, 1.0)),
             "shifted": dict(train_noise_std=(0.02, 0.15), test_noise_std=(0.3, 1.0))}
CATALOG_TASKS = ("faint", "bright", "main")
REFERENCE = "MGP"
OUT = Path("lab/studies/records/error_bars")
#: The tasks of each results-page record, and the methods its table shows.
RECORD_TASKS = {"catalog": ("faint", "main", "bright"), "synthetic": ("hetero",)}
RECORD_GP = "NIMGP pop"
SYNTHETIC_ROWS = {"Bayes": "Bayes-optimal", "NIMGP pop 2000 epochs M=50": "NIMGP, population prior, 2000 epochs, M = 50",
                  "NIMGP pop": "NIMGP, population prior (default budget)", "MGP": "MGP (no error bars)"}
CATALOG_ROWS = {"faint": "faintest quarter", "main": "the main job's random split",
                "bright": "brightest quarter (trained on the fainter three)"}
BASELINE_NAMES = {"logistic": "logistic", "random_forest_isotonic": "forest", "gradient_boosting_isotonic": "boosting"}


def _synthetic(task: str, rep: int):
    from gpal.data.synthetic import toy_1d_heteroscedastic

    problem = toy_1d_heteroscedastic(n_train=800, n_test=2000, seed=rep, **SYNTHETIC[task])
    bayes = problem.bayes_proba(problem.test.X, problem.test.X_var)
    test_noise = SYNTHETIC[task].get("test_noise_std", SYNTHETIC[task]["train_noise_std"])
    pool = toy_1d_heteroscedastic(n_train=2000, n_test=1, seed=rep, train_noise_std=test_noise).train  # same functions
    return problem.train, problem.test, bayes, dict(GP_SHARED, num_inducing=20), (pool.X, pool.X_var)





def _with_errors(X: np.ndarray, X_var: np.ndarray, has_error: np.ndarray) -> np.ndarray:
    return np.hstack([X, np.sqrt(X_var[:, has_error])])


def run_unit(task: str, rep: int, method: str, train, test, gp_settings: dict, unlabelled) -> dict:
    t0 = time.perf_counter()
    if method in GP_METHODS:
        from gpal import NoisyGPClassifier

        settings = {**gp_settings, **GP_METHODS[method]}
        if settings.get("kernel") == "se+linear":
            import gpflow

            from gpal.models.kernels import default_kernel

            settings["kernel"] = default_kernel(train.X.shape[1]) + gpflow.kernels.Linear()
        clf = NoisyGPClassifier(**settings, random_state=rep)
        clf.fit(train, unlabelled=unlabelled if method.endswith("+pool") else None)
        proba = clf.predict_proba(test)
    else:
        from gpal.evaluation.baselines import fit_baselines

        name, _, errors = method.partition(" +")
        X_tr, X_te = train.X, test.X
        if errors:
            has_error = np.any(train.X_var > 0, axis=0)
            X_tr, X_te = _with_errors(train.X, train.X_var, has_error), _with_errors(test.X, test.X_var, has_error)
        proba = fit_baselines(X_tr, train.y, X_te, names=[name], random_state=rep)[name]
    return {"task": task, "rep": rep, "method": method, "proba": _compact(proba), "y": test.y.tolist(),
            **({} if task in SYNTHETIC else {"ids": [str(i) for i in test.ids]}), "seconds": time.perf_counter() - t0,
            "n_train": int(train.n_samples)}


def methods_for(task: str, only: list[str] | None) -> list[str]:
    names = list(GP_METHODS) + [m for b in BASELINES for m in (b, f"{b} +err")]
    unknown = set(only or ()) - set(names)
    if unknown:
        raise SystemExit(f"unknown methods {sorted(unknown)}; choose from {names}")
    return [m for m in names if only is None or m in only]


def run(tasks: list[str], reps: int, only: list[str] | None, out: Path) -> None:
    commit = code_commit()
    dr4 = None
    for task in tasks:
        for rep in range(reps):
            if task in SYNTHETIC:
                train, test, bayes, settings, unlabelled = _synthetic(task, rep)
            else:
                dr4 = dr4_sources() if dr4 is None else dr4
                train, test, bayes, settings, unlabelled = significance_task(task, rep, dr4)
            folder = out / task
            folder.mkdir(parents=True, exist_ok=True)
            if bayes is not None and not (folder / f"rep{rep}_Bayes.json").exists():
                _write(folder / f"rep{rep}_Bayes.json", {"task": task, "rep": rep, "method": "Bayes",
                                                         "proba": _compact(bayes), "y": test.y.tolist(), "seconds": 0.0})
            for method in methods_for(task, only):
                path = folder / f"rep{rep}_{method.replace(' ', '_')}.json"
                if path.exists():
                    continue
                unit = {**run_unit(task, rep, method, train, test, settings, unlabelled), "commit": commit}
                _write(path, unit)
                print(f"{task} rep {rep} {method:32s} NLL {_nll(np.array(unit['y']), np.array(unit['proba'])):.3f} "
                      f"({unit['seconds']:.0f} s)", flush=True)


def _compact(proba: np.ndarray) -> list:
    """Probabilities to 9 significant digits (NLL unchanged to 1e-8): the unit files stay small."""
    return [[float(f"{p:.9g}") for p in row] for row in np.asarray(proba)]


def _write(path: Path, record: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, separators=(",", ":")))
    tmp.replace(path)


def _per_source_nll(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    return -np.log(np.clip(p[np.arange(y.size), y], 1e-12, None))


def _nll(y: np.ndarray, p: np.ndarray) -> float:
    return float(_per_source_nll(y, p).mean())


def load_units(folder: Path) -> dict[str, dict[int, dict]]:
    """A task's saved units, as method -> repetition -> unit; a unit that is not JSON raises ValueError naming it."""
    units: dict[str, dict[int, dict]] = {}
    for path in sorted(folder.glob("rep*.json")):
        try:
            unit = json.loads(path.read_text())
            units.setdefault(unit["method"], {})[int(unit["rep"])] = unit
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path} is not a unit of this study ({exc!r})") from None
    return units


class Task:
    """One task's units scored alike: per-source NLL and correctness by method, on the repetitions every method has,
    and the bootstrap draws over test sources every paired interval of the task uses."""

    def __init__(self, units: dict[str, dict[int, dict]], n_boot: int = 2000):
        self.units = units
        self.reps = sorted(set.intersection(*(set(r) for r in units.values()))) if units else []
        y = {r: np.array(units[next(iter(units))][r]["y"]) for r in self.reps}
        self.losses = {m: np.stack([_per_source_nll(y[r], np.array(u[r]["proba"])) for r in self.reps])
                       for m, u in units.items()} if self.reps else {}
        self.correct = {m: np.stack([np.argmax(np.array(u[r]["proba"]), 1) == y[r] for r in self.reps])
                        for m, u in units.items()} if self.reps else {}
        n = next(iter(self.losses.values())).shape[1] if self.losses else 0
        # Synthetic tasks draw a new test set per repetition; catalog tasks keep one (same source in every column).
        self.index = np.random.default_rng(0).integers(0, n, size=(n_boot, n))

    def per_rep(self, method: str) -> np.ndarray:
        return self.losses[method].mean(axis=1)

    def difference(self, method: str, reference: str) -> tuple[float, float, float]:
        """Mean NLL of ``method`` minus ``reference``, source by source averaged over repetitions, with its 95% interval."""
        diff = (self.losses[method] - self.losses[reference]).mean(axis=0)
        boot = diff[self.index].mean(axis=1)
        return float(diff.mean()), float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))

    def best_baseline(self) -> str | None:
        return min((m for m in self.units if m.split(" +")[0] in BASELINES), key=lambda m: self.losses[m].mean(),
                   default=None)


def summarize(out: Path, n_boot: int = 2000) -> str:
    lines = []
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        task = Task(load_units(folder), n_boot)
        if not task.reps or REFERENCE not in task.units:
            continue
        reps, n = task.reps, task.index.shape[1]
        best_baseline = task.best_baseline()
        against = f" NLL − best baseline ({best_baseline}) [95%] |" if best_baseline else ""
        lines += [f"### {folder.name}: {len(reps)} repetitions, {n} test sources each", "",
                  f"| method | NLL (mean ± SE over reps) | accuracy | NLL − {REFERENCE} [95% paired] |{against} s/unit |",
                  "|---|---|---|---|" + ("---|" if best_baseline else "") + "---|"]
        for m in sorted(task.units, key=lambda m: task.losses[m].mean()):
            per_rep = task.per_rep(m)
            cells = [f"{per_rep.mean():.3f} ± {per_rep.std(ddof=1) / np.sqrt(len(reps)) if len(reps) > 1 else 0:.3f}",
                     f"{task.correct[m].mean():.3f}"]
            for ref in (r for r in (REFERENCE, best_baseline) if r is not None):
                cells.append("{:+.3f} [{:+.3f}, {:+.3f}]".format(*task.difference(m, ref)))
            seconds = np.mean([task.units[m][r]["seconds"] for r in reps])
            lines.append(f"| {m} | " + " | ".join(cells) + f" | {seconds:.0f} |")
        lines.append("")
    return "\n".join(lines)


def _signed(value: float) -> str:
    return f"{value:+.3f}".replace("-", "\u2212")


def _interval(difference: tuple[float, float, float]) -> str:
    return "{} [{}, {}]".format(*map(_signed, difference))


def _record_tasks(out: Path, kind: str) -> dict[str, Task]:
    """The tasks of record ``kind``, each with the methods its table needs on every repetition (a ValueError
    names the folder and what is missing)."""
    needed = [*SYNTHETIC_ROWS] if kind == "synthetic" else [RECORD_GP, REFERENCE]
    tasks = {}
    for name in RECORD_TASKS[kind]:
        folder = out / name
        task = Task(load_units(folder)) if folder.is_dir() else None
        if task is None or not task.reps:
            raise ValueError(f"{folder}: no units (run the task first: --task {name})")
        missing = [m for m in needed if m not in task.units]
        if missing or (kind == "catalog" and task.best_baseline() is None):
            raise ValueError(f"{folder}: no units of {missing or 'any baseline'}; the record's table needs them")
        uneven = {m: sorted(r) for m, r in task.units.items() if sorted(r) != task.reps}
        if uneven:
            raise ValueError(f"{folder}: methods saved on other repetitions than {task.reps}: {uneven}")
        tasks[name] = task
    if len({tuple(t.reps) for t in tasks.values()}) > 1:
        raise ValueError(f"{out}: the tasks {list(tasks)} were run with different repetitions")
    return tasks


def _units_commit(tasks: dict[str, Task], given: str | None) -> str:
    """The commit the units ran at: the one they name, or ``given`` for units that name none (a ValueError if they
    name several, or another than ``given``, or a commit that is not a committed source)."""
    named = {u.get("commit") for t in tasks.values() for by_rep in t.units.values() for u in by_rep.values()
             if u["method"] != "Bayes"}
    commits = named - {None} | ({given} if given and None in named else set())
    if given and commits - {given}:
        raise ValueError(f"the units name the commit(s) {sorted(commits - {given})}, not --commit {given}")
    if len(commits) != 1:
        raise ValueError("the units name " + (f"several commits {sorted(commits)}: rerun them at one" if commits else
                                               "no commit: give the commit they ran at (--commit)"))
    commit = commits.pop()
    if commit == "unknown" or commit.endswith("+dirty"):
        raise ValueError(f"the units ran at {commit!r}: a record needs the committed source that ran")
    return commit


def _run_command(tasks: dict[str, Task]) -> str:
    """The command that remakes the record's units: its tasks, repetitions and the methods saved (Bayes comes free)."""
    methods = [m for m in methods_for("", None) if any(m in t.units for t in tasks.values())]
    reps = len(next(iter(tasks.values())).reps)
    return (f"python lab/studies/bench_error_bars.py --task {' '.join(tasks)} --reps {reps} --methods "
            + " ".join(shlex.quote(m) for m in methods))


def results_record(out: Path, kind: str, commit: str | None = None) -> dict:
    """The results page's record of the ``catalog`` tasks (faint / main / bright: NIMGP with the population prior,
    the same without error bars, their paired difference and the best baseline) or of the ``synthetic`` one (hetero:
    each model's NLL and its paired gap to the Bayes-optimal NLL), from the units under ``out``."""
    from result_records import make_record, make_table

    tasks = _record_tasks(out, kind)
    reps = len(next(iter(tasks.values())).reps)
    workflow, source = "lab/studies/error_bars.yaml", f"the units in {out.as_posix()}/ ({', '.join(tasks)})"
    if kind == "synthetic":
        task = tasks["hetero"]
        rows = []
        for method, label in SYNTHETIC_ROWS.items():
            per_rep = task.per_rep(method)
            rows.append([label, f"{per_rep.mean():.3f} ± {per_rep.std(ddof=1) / np.sqrt(reps):.3f}",
                         "" if method == "Bayes" else _interval(task.difference(method, "Bayes"))])
        low, high = SYNTHETIC["hetero"]["train_noise_std"]
        mgp = task.units[REFERENCE][task.reps[0]]
        settings = {"task": f"1-D, 3 classes, per-point noise sd log-uniform in [{low:g}, {high:g}]",
                    "train / test": f"{mgp['n_train']} / {len(mgp['y'])}"}
        table = make_table(["method", f"test NLL (mean ± SE over {reps} repetitions)", "\u2212 Bayes-optimal"], rows,
                           "lll")
        return make_record("A synthetic task with known answers", _run_command(tasks), _units_commit(tasks, commit),
                           [table], settings, source, workflow=workflow)
    rows = []
    for name, task in tasks.items():
        best = task.best_baseline()
        base, _, errors = best.partition(" +")
        shown = BASELINE_NAMES.get(base, base) + (", error columns as features" if errors else "")
        rows.append([CATALOG_ROWS[name], f"{task.per_rep(RECORD_GP).mean():.3f}", f"{task.per_rep(REFERENCE).mean():.3f}",
                     _interval(task.difference(RECORD_GP, REFERENCE)), f"{task.per_rep(best).mean():.3f} ({shown})"])
    table = make_table(["test set", "NIMGP, population prior", "the same without error bars (MGP)", "with − without",
                        "best baseline"], rows, "lrrlr",
                       caption=f"Test NLL (nats), mean over {reps} resampled training sets; intervals paired over sources.")
    return make_record("Faint, random and bright test sets", _run_command(tasks), _units_commit(tasks, commit),
                       [table], {"catalog": "4FGL-DR4", "features": "fermi_dr4", "repetitions": reps}, source,
                       workflow=workflow)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", nargs="+", choices=[*SYNTHETIC, *CATALOG_TASKS], default=[*SYNTHETIC, *CATALOG_TASKS])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--methods", nargs="+", default=None, help="a subset of the method names")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--summarize", action="store_true", help="summarize the saved units only, fitting nothing")
    parser.add_argument("--record", type=Path, help="also write the results page's record of the tasks given "
                        "(faint main bright, or hetero) to this file")
    parser.add_argument("--commit", help="with --record: the commit units that name none ran at")
    args = parser.parse_args(argv)
    kind = next((k for k, tasks in RECORD_TASKS.items() if sorted(tasks) == sorted(args.task)), None)
    if args.record and kind is None:
        parser.error(f"--record writes the record of the tasks {' or '.join(' '.join(t) for t in RECORD_TASKS.values())}"
                     f", not of {' '.join(args.task)}")
    if not args.summarize:
        run(args.task, args.reps, args.methods, args.out)
    unfitted = [task for task in args.task if not any((args.out / task).glob("rep*.json"))]
    if unfitted:  # git keeps the summaries, not the units: a summary of nothing would overwrite the kept one
        print(f"error: no units of {' '.join(unfitted)} in {args.out}/ (git does not keep them); fit them first: "
              f"python lab/studies/bench_error_bars.py --task {' '.join(unfitted)}, or the whole study: "
              "python lab/studies/run.py error_bars", file=sys.stderr)
        return 2
    text = summarize(args.out)
    from result_records import checking, outcome, write_record

    if not checking():  # a check writes nothing
        (args.out / "summary.md").write_text(text + "\n")
    print(text)
    if args.record:
        try:
            print(outcome(write_record(args.record, results_record(args.out, kind, args.commit))))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
