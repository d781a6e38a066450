"""A classification task whose inputs carry known, heteroscedastic noise, and whose Bayes answer is exact.

The recipe (issue "the estimators in a researcher's own workflow"): C classes with equal priors, noiseless inputs
x ~ N(mu_c, I_d) around class means mu_c ~ N(0, SPREAD^2 I_d) drawn once; each observed value is x + e with
e ~ N(0, s^2) independent per row and feature, s log-uniform over [S_LOW, 10 S_LOW].  The measured variances
X_var = s^2 are given to the model.  Then p(c | x~, X_var) is proportional to N(x~; mu_c, I + diag(X_var)): the Bayes
answer with the known noise; "ignoring the noise" is the same with X_var replaced by its mean over the sample.

``python benchmarks/heteroscedastic.py curve --seed 0`` fits a NoisyGPClassifier with the estimator's defaults (but
those ``--set`` names) for 750 epochs on n = 2000, d = 10 and prints, per epoch, the epoch's time, its mean negative
ELBO and (every 5th epoch) the test NLL: a stop rule's time and NLL are read off one such curve, since stopping does not change the steps before it.
``default`` times one fit with the defaults (its stop included); ``bayes`` prints the two Bayes NLLs;
``error_bars --d 5`` compares the defaults without X_var with the defaults given X_var (NIMGP and the population
prior);
``wine`` compares NIMGP fitted directly with the same in a Pipeline behind `NoisyStandardScaler`.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from scipy.special import logsumexp

SPREAD = 1.2
S_LOW = 0.3


def make_task(n_train: int, n_test: int, d: int, n_classes: int = 3, seed: int = 0) -> dict[str, np.ndarray]:
    """Train and test arrays of the recipe, with the Bayes log-probabilities of the test rows (known and mean noise)."""
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=SPREAD, size=(n_classes, d))

    def draw(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        y = rng.integers(0, n_classes, size=n)
        x = means[y] + rng.normal(size=(n, d))
        sd = S_LOW * 10 ** rng.uniform(0, 1, size=(n, d))
        return x + sd * rng.normal(size=(n, d)), sd**2, y

    X, V, y = draw(n_train)
    Xt, Vt, yt = draw(n_test)

    def bayes(var: np.ndarray) -> np.ndarray:
        total = 1.0 + var  # (n, d)
        logp = np.stack([-0.5 * np.sum((Xt - mu) ** 2 / total + np.log(total), axis=1) for mu in means], axis=1)
        return logp - logsumexp(logp, axis=1, keepdims=True)

    return {"X": X, "X_var": V, "y": y, "X_test": Xt, "X_var_test": Vt, "y_test": yt,
            "bayes_known": bayes(Vt), "bayes_ignoring": bayes(np.broadcast_to(V.mean(axis=0), Vt.shape))}


def nll(log_proba: np.ndarray, y: np.ndarray) -> float:
    """Mean negative log-probability of the true class."""
    return float(-np.mean(log_proba[np.arange(y.size), y]))


def curve(seed: int, n: int = 2000, d: int = 10, epochs: int = 750, every: int = 5, noisy: bool = False,
          **params) -> list[dict]:
    """Per-epoch time, mean negative ELBO and (every ``every`` epochs) test NLL of one fit with defaults; ``noisy``:
    NIMGP with the population prior given X_var (train and test) instead."""
    from gpal import NoisyGPClassifier
    from gpal.estimators.fit_plan import fit_data, plan_fit, train_plan

    task = make_task(n, 2000, d, seed=seed)
    rows: list[dict] = []
    clock = [time.perf_counter(), cpu_seconds()]
    if noisy:
        params = {"input_noise": "latent", "input_prior": "population", **params}
    est = NoisyGPClassifier(epochs=epochs, random_state=seed, tol=None, **params)  # every epoch: the curve
    plans = []

    def record(epoch: int, loss: float) -> None:
        row = {"epoch": epoch + 1, "seconds": time.perf_counter() - clock[0], "cpu_seconds": cpu_seconds() - clock[1],
               "loss": loss}
        if (epoch + 1) % every == 0 or epoch == 0:
            # the model being trained, as a fitted estimator: a prediction reads its current parameters
            est._keep(plans[0].session, d, plans[0].standardizer, [], False)
            proba = est.predict_proba(task["X_test"], task["X_var_test"] if noisy else None)
            row["test_nll"] = nll(np.log(np.maximum(proba, 1e-300)), task["y_test"])
        rows.append(row)
        clock[:] = time.perf_counter(), cpu_seconds()  # the evaluation's time is not the fit's

    started = time.perf_counter()
    plans.append(plan_fit(est, *fit_data(est, task["X"], task["y"], task["X_var"] if noisy else None),
                          callback=record))
    rows.append({"setup_seconds": time.perf_counter() - started})
    clock[:] = time.perf_counter(), cpu_seconds()
    train_plan(plans[0], progress=False)
    return rows


def cpu_seconds() -> float:
    """This process's CPU time, user and system: on a shared machine the fit's own cost, where wall time is not."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def default_fit(seed: int, n: int = 2000, d: int = 10, noisy: bool = False) -> dict:
    """A fit with the estimator's defaults (``noisy``: given X_var, without it otherwise): its wall and CPU seconds,
    epochs run, the input noise the default chose and test NLL."""
    import gpal.models  # noqa: F401  (TensorFlow's import, once a process, is not the fit's)
    from gpal import NoisyGPClassifier

    task = make_task(n, 2000, d, seed=seed)
    cpu, started = cpu_seconds(), time.perf_counter()
    est = NoisyGPClassifier(random_state=seed).fit(task["X"], task["y"], task["X_var"] if noisy else None)
    wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    proba = est.predict_proba(task["X_test"], task["X_var_test"] if noisy else None)
    return {"seed": seed, "input_noise": est.input_noise_, "fit_wall_seconds": wall, "epochs_run": len(est.history_),
            "converged": est.converged_, "fit_cpu_seconds": cpu,
            "test_nll": nll(np.log(np.maximum(proba, 1e-300)), task["y_test"])}


def error_bars(seed: int, n: int = 2000, d: int = 5) -> dict:
    """Test NLL of the estimator with its defaults fitted without X_var and given X_var (``input_noise="auto"``: MGP,
    then the input noise it chose, NIMGP with the population prior), on one draw of the task, beside the two Bayes
    answers."""
    from gpal import NoisyGPClassifier

    task = make_task(n, 2000, d, seed=seed)
    out = {"seed": seed, "bayes_known": nll(task["bayes_known"], task["y_test"]),
           "bayes_ignoring": nll(task["bayes_ignoring"], task["y_test"])}
    for name, noisy in (("without_X_var", False), ("with_X_var", True)):
        est = NoisyGPClassifier(random_state=seed)
        started = time.perf_counter()
        est.fit(task["X"], task["y"], task["X_var"] if noisy else None)
        proba = est.predict_proba(task["X_test"], task["X_var_test"] if noisy else None)
        out[name] = nll(np.log(np.maximum(proba, 1e-300)), task["y_test"])
        out[f"{name}_seconds"], out[f"{name}_epochs"] = time.perf_counter() - started, len(est.history_)
        out[f"{name}_input_noise"] = est.input_noise_
    return out


def wine(seed: int = 0) -> dict:
    """scikit-learn's wine set with injected noise (each value's standard deviation log-uniform over 0.05 to 0.5 of its
    feature's spread): test NLL of NIMGP with the population prior given X_var directly, and as a Pipeline of
    `NoisyStandardScaler` and `NoisyInputAdapter` on ``[X | X_var]``."""
    import warnings

    from sklearn.datasets import load_wine
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline

    from gpal import NoisyGPClassifier
    from gpal.estimators.model_selection import NoisyInputAdapter, NoisyStandardScaler, stack_inputs

    rng = np.random.default_rng(seed)
    X, y = load_wine(return_X_y=True)
    sd = X.std(axis=0) * 0.05 * 10 ** rng.uniform(0, 1, size=X.shape)
    X_obs, V = X + sd * rng.normal(size=X.shape), sd**2
    X_tr, X_te, V_tr, V_te, y_tr, y_te = train_test_split(X_obs, V, y, test_size=0.3, stratify=y, random_state=seed)

    def model() -> NoisyGPClassifier:
        return NoisyGPClassifier(input_noise="latent", input_prior="population", prior_components=2, random_state=seed)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        direct = model().fit(X_tr, y_tr, V_tr).predict_proba(X_te, V_te)
        pipe = make_pipeline(NoisyStandardScaler(), NoisyInputAdapter(model())).fit(stack_inputs(X_tr, V_tr), y_tr)
        piped = pipe.predict_proba(stack_inputs(X_te, V_te))
    return {"seed": seed, "direct": nll(np.log(direct), y_te), "pipeline": nll(np.log(piped), y_te)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["curve", "bayes", "default", "error_bars", "wine"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=750, help="curve: the epochs run")
    parser.add_argument("--every", type=int, default=5, help="curve: the test NLL every this many epochs")
    parser.add_argument("--set", nargs="+", default=[], metavar="NAME=NUMBER",
                        help="curve: estimator parameters other than the defaults, e.g. batch_size=50")
    parser.add_argument("--noisy", action="store_true", help="curve: NIMGP with the population prior given X_var; "
                        "default: the defaults given X_var")
    args = parser.parse_args()
    if args.what == "bayes":
        task = make_task(args.n, 2000, args.d, seed=args.seed)
        print(json.dumps({"bayes_known": nll(task["bayes_known"], task["y_test"]),
                          "bayes_ignoring": nll(task["bayes_ignoring"], task["y_test"])}))
    elif args.what == "wine":
        print(json.dumps(wine(args.seed)))
    elif args.what == "error_bars":
        print(json.dumps(error_bars(args.seed, args.n, args.d)))
    elif args.what == "default":
        print(json.dumps(default_fit(args.seed, args.n, args.d, noisy=args.noisy)))
    else:
        for row in curve(args.seed, args.n, args.d, epochs=args.epochs, every=args.every, noisy=args.noisy,
                         **{k: json.loads(v) for k, v in (item.split("=", 1) for item in args.set)}):
            print(json.dumps(row))


if __name__ == "__main__":
    main()
