"""How many SVI steps the main job needs: held-out and later-release numbers by epochs, learning rate and batch.

For each setting and seed, two fits of the main job's estimator (`gpal.catalog_jobs.settings`):

- **held out**: the default release's labelled sources (FL16Y), stratified 80/20 split by the seed,
  NLL and accuracy on the 20%;
- **later labels**: every labelled 4FGL-DR4 source (`gpal train`), scored by `gpal check-later`
  against the classes FL16Y gives DR4's unassociated and bcu sources (3-class NLL, AGN-vs-pulsar AUC),
  beside logistic regression refitted on the same rows.

Each (setting, seed) is written to ``--out`` as one JSON file when done and skipped when present, so an
interrupted study resumes.  The summary prints each setting's mean over seeds and its paired
difference to the reference setting (the first), per seed.  A setting is EPOCHS:LEARNING_RATE, or
EPOCHS:LEARNING_RATE:BATCH_SIZE for a minibatch other than the main job's.

    PYTHONPATH=$PWD python lab/studies/bench_training_length.py --out runs/training_length \
        --settings 300:0.01 100:0.01 50:0.01 50:0.03 25:0.03 --seeds 0 1 2
    PYTHONPATH=$PWD python lab/studies/bench_training_length.py --out runs/training_length --em-steps 30 \
        --settings 50:0.03 50:0.03:400 --seeds 0 1 2
    PYTHONPATH=$PWD python lab/studies/bench_training_length.py --out runs/training_length --em-steps 30 \
        --input-noise none --settings 50:0.03 20:0.03 10:0.03 --seeds 0 1 2     # the error-blind twin
    PYTHONPATH=$PWD python lab/studies/bench_training_length.py --out runs/training_length --em-steps 30 \
        --settings 50:0.03 25:0.05@cosine 25:0.08@cosine 35:0.05@cosine --seeds 0 1 2    # Adam's step decayed

``--lbfgs`` changes how every fit of the run trains (a variant measured and not adopted,
lab/studies/records/training_length/summary.md); its files are named apart.  The natural-gradient and
step-scale variants of the same summary (``*_natgrad*``, ``*_rows*``, ``*_kernels*`` files) replaced the trainer's
compiled step, which is no API of gpal's: they are rerun from commit cc4f9a1, whose copy of this script still has
``--natgrad``, ``--row-lr-scale`` and ``--kernel-lr-scale``.

A setting ending in ``@cosine`` decays Adam's step each epoch from its learning rate to a twentieth of it at the
last epoch (half a cosine), where the estimator keeps it constant: a study of whether a schedule reaches the
same numbers in fewer steps (measured at 7140bd5 and not adopted,
lab/studies/records/training_length/summary.md).
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

import numpy as np


def _cosine(epoch: int, epochs: int, peak: float) -> float:
    """Adam's step in ``epoch`` (0-based) of a half-cosine from ``peak`` to ``peak`` / 20 at the last epoch."""
    low = peak / 20
    return low + 0.5 * (peak - low) * (1 + math.cos(math.pi * epoch / max(epochs - 1, 1)))


#: The schedule of the unit being fitted ("constant": the estimator's own); `_with_schedules` reads it.
_SCHEDULE = {"name": "constant"}


def _with_schedules() -> None:
    """`Trainer.fit` sets Adam's step from `_cosine` after each epoch while ``_SCHEDULE`` says ``cosine`` (a study
    knob, not an option: the learning rate is a variable of the compiled step, so nothing is traced again)."""
    from gpal.training import svi

    fit = svi.Trainer.fit
    if getattr(fit, "with_schedules", False):
        return

    def scheduled_fit(self, data, *, epochs, learning_rate, callback=None, **kwargs):
        if _SCHEDULE["name"] == "constant":
            return fit(self, data, epochs=epochs, learning_rate=learning_rate, callback=callback, **kwargs)

        def next_step_size(epoch, loss):
            self.optimizer.learning_rate = _cosine(epoch + 1, epochs, learning_rate)
            return None if callback is None else callback(epoch, loss)

        return fit(self, data, epochs=epochs, learning_rate=learning_rate, callback=next_step_size, **kwargs)

    scheduled_fit.with_schedules = True
    svi.Trainer.fit = scheduled_fit


def _with_lbfgs(max_iter: int) -> None:
    """Every fit from now on minimises the full-data negative ELBO, its Monte Carlo draws fixed (the step's seed at
    step 0), by SciPy's L-BFGS-B for at most ``max_iter`` iterations, where Adam takes minibatch steps (measured at
    5cebc11, not adopted).  Epochs, batch and learning rate are ignored.  For a whole run (``--lbfgs``)."""
    import scipy.optimize
    import tensorflow as tf

    from gpal.training import svi

    def fit(self, data, *, epochs, batch_size, learning_rate, progress=True, callback=None, max_jitter=1e-2):
        n = self.load(data, learning_rate=learning_rate)
        model, variables = self.model, list(self.model.trainable_variables)
        rows, seed = tf.range(n, dtype=tf.int64), tf.constant([self.seed, 0], tf.int64)

        @tf.function(autograph=False)
        def loss_and_gradients():
            with tf.GradientTape() as tape:
                loss = -model.elbo(self.data.X, self.data.X_var, self.data.y, rows, seed, num_data=n,
                                   sample_weight=self.data.sample_weight, base=self.base)
            return loss, tape.gradient(loss, variables)

        sizes = [int(np.prod(v.shape)) for v in variables]

        def objective(x):
            for var, part in zip(variables, np.split(x, np.cumsum(sizes)[:-1])):
                var.assign(part.reshape(var.shape))
            loss, grads = loss_and_gradients()
            return float(loss), np.concatenate([g.numpy().ravel() for g in grads])

        x0 = np.concatenate([v.numpy().ravel() for v in variables])
        found = scipy.optimize.minimize(objective, x0, jac=True, method="L-BFGS-B", options={"maxiter": max_iter})
        objective(found.x)
        return svi.TrainResult(history=[float(found.fun)], steps=int(found.nfev))

    svi.Trainer.fit = fit


#: The study knobs that change how every fit of a run trains: (option's key, file-name tag, summary label, installer).
_KNOBS = (
    ("lbfgs", "lbfgs", "L-BFGS ", _with_lbfgs),
)


def _unit(epochs: int, learning_rate: float, batch_size: int, seed: int, em_steps: int, input_noise: str | None,
          schedule: str = "constant") -> dict:
    from gpal.catalog_jobs.later_check import check_later, later_check_inputs
    from gpal.catalog_jobs.model_folders import train_catalog_model
    from gpal.catalog_jobs.selection import CatalogSelection
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.evaluation.metrics import negative_log_likelihood, proba_by_class
    from gpal.models.input_prior import fit_mixture_prior

    fit_mixture_prior.__kwdefaults__["max_iter"] = em_steps  # the population prior's EM steps (a study knob)
    _with_schedules()
    _SCHEDULE["name"] = schedule

    settings = dict(epochs=epochs, learning_rate=learning_rate, batch_size=batch_size, random_state=seed, progress=False,
                    **({} if input_noise is None else {"input_noise": input_noise}))
    row: dict = {"epochs": epochs, "learning_rate": learning_rate, "batch_size": batch_size, "seed": seed,
                 "em_steps": em_steps, **({} if input_noise is None else {"input_noise": input_noise}),
                 **({} if schedule == "constant" else {"schedule": schedule})}
    t0, c0 = time.perf_counter(), time.process_time()
    _, data = CatalogSelection().load()
    train, test = data.split(test_size=0.2, seed=seed, stratify=True)
    clf = main_job_estimator(**settings).fit(train)
    proba = proba_by_class(clf.predict_proba(test), clf.classes_, test.class_names)
    row["heldout_nll"] = negative_log_likelihood(test.y, proba)
    row["heldout_accuracy"] = float(np.mean(np.argmax(proba, axis=1) == test.y))
    row["heldout_fit_cpu_s"] = time.process_time() - c0
    row["heldout_fit_wall_s"] = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "dr4"
        train_catalog_model(CatalogSelection(catalog="4FGL-DR4"), main_job_estimator(**settings), folder)
        check = check_later(later_check_inputs(folder, "FL16Y", baselines=["logistic"], seed=seed), seed=seed)
    m = check.measures
    for model in ("gpal", "logistic"):
        for measure, key in (("3-class nll", "later_nll"), ("AGN-vs-pulsar AUC", "later_auc")):
            hit = m[(m["model"] == model) & (m["measure"] == measure)]
            row[f"{key}_{model}"] = float(hit["value"].iloc[0]) if len(hit) else float("nan")
    row["wall_s"], row["cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
    return row


def _summary(rows: list[dict]) -> str:
    keys = ["heldout_nll", "heldout_accuracy", "later_nll_gpal", "later_nll_logistic", "later_auc_gpal",
            "heldout_fit_cpu_s", "cpu_s"]
    settings = list(dict.fromkeys(_setting(r) for r in rows))
    reference = settings[0]
    by = {(*_setting(r), r["seed"]): r for r in rows}
    lines = ["| epochs | lr | batch | schedule | seeds | " + " | ".join(keys) + " | held-out NLL - ref | later NLL - ref |",
             "|" + "---|" * (len(keys) + 7)]
    for s in settings:
        seeds = sorted(k[-1] for k in by if k[:-1] == s)
        means = [np.mean([by[(*s, seed)][k] for seed in seeds]) for k in keys]
        paired = [seed for seed in seeds if (*reference, seed) in by]

        def diff(key: str) -> str:
            d = [by[(*s, seed)][key] - by[(*reference, seed)][key] for seed in paired]
            return f"{np.mean(d):+.4f} ({', '.join(f'{x:+.3f}' for x in d)})" if d else ""

        lines.append(f"| {s[0]} | {s[1]} | {s[2]} | {s[3]} | {len(seeds)} | " + " | ".join(f"{v:.4f}" for v in means)
                     + f" | {diff('heldout_nll')} | {diff('later_nll_gpal')} |")
    return "\n".join(lines)


def _setting(row: dict) -> tuple:
    """(epochs, learning rate, batch size, schedule) of a result; the files written before batch sizes or schedules
    varied used the main job's."""
    from gpal.catalog_jobs.settings import MAIN_JOB_ESTIMATOR

    return (row["epochs"], row["learning_rate"], row.get("batch_size", MAIN_JOB_ESTIMATOR["batch_size"]),
            row.get("schedule", "constant")
            + "".join(f", {label}{row[key]:g}" for key, _, label, _ in _KNOBS if key in row))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder of one JSON file per (setting, seed)")
    parser.add_argument("--settings", nargs="+", default=["300:0.01", "100:0.01", "50:0.03"],
                        help="EPOCHS:LEARNING_RATE[:BATCH_SIZE][@cosine], the first is the reference")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--em-steps", type=int, default=100, help="the population prior's EM steps (fit_mixture_prior)")
    parser.add_argument("--input-noise", default=None,
                        help="the estimator's input_noise (default: the main job's); 'none' is its error-blind twin")
    parser.add_argument("--lbfgs", type=int, default=None, metavar="ITERATIONS",
                        help="every fit by L-BFGS-B on the full-data ELBO (draws fixed) for at most this many iterations")
    args = parser.parse_args(argv)
    knobs = {key: getattr(args, key) for key, *_ in _KNOBS if getattr(args, key) is not None}
    for key, _, _, install in _KNOBS:
        if key in knobs:
            install(knobs[key])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from gpal.catalog_jobs.settings import MAIN_JOB_ESTIMATOR

    rows = []
    for seed in args.seeds:
        for spec in args.settings:
            spec, _, schedule = spec.partition("@")
            schedule = schedule or "constant"
            if schedule not in ("constant", "cosine"):
                raise SystemExit(f"unknown schedule {schedule!r} in --settings: constant or cosine")
            parts = spec.split(":")
            epochs, lr = int(parts[0]), float(parts[1])
            batch = int(parts[2]) if len(parts) > 2 else MAIN_JOB_ESTIMATOR["batch_size"]
            name = f"e{epochs}_lr{lr:g}" + ("" if batch == MAIN_JOB_ESTIMATOR["batch_size"] else f"_b{batch}")
            name += "" if args.em_steps == 100 else f"_em{args.em_steps}"
            name += "" if args.input_noise is None else f"_{args.input_noise}"
            name += "" if schedule == "constant" else f"_{schedule}"
            name += "".join(f"_{tag}{knobs[key]:g}" for key, tag, _, _ in _KNOBS if key in knobs)
            path = out / f"{name}_s{seed}.json"
            if not path.is_file():
                row = _unit(epochs, lr, batch, seed, args.em_steps, args.input_noise, schedule)
                row.update(knobs)
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(row, indent=1))
                tmp.replace(path)
                print(json.dumps(row), flush=True)
            rows.append(json.loads(path.read_text()))
    print(_summary(rows))


if __name__ == "__main__":
    main()
