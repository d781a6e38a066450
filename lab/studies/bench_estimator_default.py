"""Should `NoisyGPClassifier` use the error bars it is given by default?  The estimator with its defaults and no
X_var (the exact-input GP, ``input_noise="none"``) against the same estimator given X_var with the population prior
(``input_noise="latent", input_prior="population"``), fitted on the catalogs' rows exactly as the later-label
checks fit gpal (`gpal.catalog_jobs.later_labels.check_data`): a held-out check trains on a release's 80 % split
and scores the other 20 %; a later-label check trains on an earlier release's labelled sources and scores its
unassociated and bcu sources by the classes a later release gave them.  Beside them, the brief's three baselines on the same
rows and features (`gpal.evaluation.baselines`: logistic regression, a calibrated random forest and calibrated
gradient boosting; X only, as scikit-learn cannot use error bars).  What the catalog knows (a bcu is a blazar) is
applied to every model's probabilities, as every model of the later-label checks has it.

Each fit prints one JSON line (check, seed, model, seconds, epochs, measures) and keeps the probabilities under
``--units`` (not in git); ``--summarize`` prints, per check, every model's measures over the seeds and the paired
bootstrap interval of "error bars minus the model" (`gpal.catalog_jobs.later_labels.measure_check`, 1000 resamples
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
import contextlib
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np

from shared import keep_printed  # the script's folder, first on its path

CHECKS = ("held-out:FL16Y", "held-out:4FGL-DR4", "4FGL:FL16Y", "4FGL-DR4:FL16Y")
MODELS = {"ignoring": {}, "error_bars": {"input_noise": "latent", "input_prior": "population"}}
#: A remedy tried for the error bars' NLL on 3FGL's later labels: the sources to classify shape the population prior
#: too (``fit(..., unlabelled=...)``), so that faint pool sources are not pulled toward where the labelled (brighter)
#: sources lie.  Run with ``--models``; not in the default table.
REMEDIES = {"error_bars_pool_prior": "error_bars"}
#: The population prior's variants tried for the same NLL, each a change of the prior the fit builds
#: (`population_prior_variant`): ``background``, the mixture plus the broad prior N(0, s I) as one more component, its
#: weight fitted to the training rows (`with_background`), so that a row far from the labelled sources is not pulled
#: into them; ``widened``, a row whose error bar exceeds the training rows' largest in some feature gets the broad
#: prior's posterior; ``tempered``, such a row's mixture with each covariance times that ratio (`WidenedPrior`).
#: The training rows lie within their own range, so the last two change only the prediction of rows beyond it.
VARIANTS = {"error_bars_background": "background", "error_bars_widened": "broad", "error_bars_tempered": "tempered"}
REFERENCE = "error_bars"
#: The baselines of every model comparison (`gpal.evaluation.baselines`), by their names there, and their columns.
BASELINES = {"logistic": "logistic regression", "random_forest_isotonic": "random forest",
             "gradient_boosting_isotonic": "gradient boosting"}


def background_weight(prior, X: np.ndarray, V: np.ndarray, variance: float) -> float:
    """The maximum-likelihood weight w of N(0, variance I) beside ``prior``'s mixture (held fixed) on rows (X, V):
    L(w) = sum_i log((1 - w) p_i + w b_i), p_i and b_i the rows' densities under the mixture and the broad component
    convolved with their error bars, is concave in w; its slope sum_i (rho_i - 1) / (1 + w (rho_i - 1)),
    rho_i = b_i / p_i, falls with w, so w is 0 where the slope at 0 is not positive and its root otherwise (bisection):
    the fixed point of the EM on the weight alone."""
    import tensorflow as tf
    from scipy.special import logsumexp

    log_p = logsumexp(prior._joint(tf.constant(X), tf.constant(V))[0].numpy(), axis=1)
    T = variance + V
    log_b = -0.5 * np.sum(np.log(2 * np.pi * T) + X ** 2 / T, axis=1)
    excess = np.expm1(np.minimum(log_b - log_p, 700.0))  # rho_i - 1

    def slope(w: float) -> float:
        return float(np.sum(excess / (1.0 + w * excess)))

    if slope(0.0) <= 0:
        return 0.0
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if slope(middle) > 0 else (low, middle)
    return 0.5 * (low + high)


def with_background(prior, weight: float, variance: float):
    """``prior``'s mixture scaled by 1 - ``weight`` beside N(0, variance I) at ``weight`` (unchanged at weight 0)."""
    from gpal.models.input_prior import MixturePrior

    if weight <= 0:
        return prior
    d = prior.means.shape[1]
    return MixturePrior(np.append((1 - weight) * prior.weights, weight), np.vstack([prior.means, np.zeros((1, d))]),
                        np.concatenate([prior.covariances, variance * np.eye(d)[None]]))


def widened_prior_class():
    """`WidenedPrior`, a `gpal.models.input_prior.MixturePrior` (whose methods the model calls) that knows the
    largest training error bar of each feature, ``limit``: a row whose ratio ``rho`` = max_j V_j / limit_j exceeds 1
    gets, under ``mode`` "broad", the broad prior's posterior, and under "tempered" the mixture with every covariance
    times rho (p_pop tempered to a Gaussian's power 1 / rho); other rows the mixture's, unchanged."""
    import tensorflow as tf

    from gpal.models.input_prior import BroadPrior, MixturePrior

    class WidenedPrior(MixturePrior):
        def __init__(self, prior, limit: np.ndarray, mode: str, variance: float):
            super().__init__(prior.weights, prior.means, prior.covariances)
            self.limit, self.mode, self.broad = np.asarray(limit, dtype=np.float64), mode, BroadPrior(variance)

        def ratio(self, V):
            noisy = self.limit > 0
            beyond = tf.boolean_mask(V, noisy, axis=1) / tf.constant(self.limit[noisy], V.dtype)
            return tf.maximum(tf.reduce_max(beyond, axis=1), 1.0)  # (B,)

        def _sigma(self, V):
            Sigma = tf.constant(self.covariances, V.dtype)[None]
            return Sigma * self.ratio(V)[:, None, None, None] if self.mode == "tempered" else Sigma

        # MixturePrior's _joint and _components with each row's covariances (B, K, d, d) in place of Sigma_k
        def _joint(self, X, V):
            mu = tf.constant(self.means, X.dtype)
            T = self._sigma(V) + tf.linalg.diag(V)[:, None]
            chol = tf.linalg.cholesky(T)
            diff = X[:, None, :] - mu[None]
            solved = tf.linalg.cholesky_solve(chol, diff[..., None])[..., 0]
            log_det = 2.0 * tf.reduce_sum(tf.math.log(tf.linalg.diag_part(chol)), axis=-1)
            d = tf.cast(tf.shape(X)[1], X.dtype)
            log_joint = (tf.math.log(tf.constant(self.weights, X.dtype))[None]
                         - 0.5 * (d * math.log(2.0 * math.pi) + log_det + tf.reduce_sum(diff * solved, axis=-1)))
            return log_joint, chol, solved

        def _components(self, X, V):
            log_r, chol, solved = self._joint(X, V)
            log_r -= tf.reduce_logsumexp(log_r, axis=1, keepdims=True)
            means = X[:, None, :] - V[:, None, :] * solved
            covs = tf.linalg.matmul(self._sigma(V), tf.linalg.cholesky_solve(chol, tf.linalg.diag(V)[:, None]))
            return log_r, means, 0.5 * (covs + tf.linalg.matrix_transpose(covs))

        def posterior(self, X, V):
            mean, var = super().posterior(X, V)
            if self.mode != "broad":
                return mean, var
            beyond = (self.ratio(V) > 1.0)[:, None]
            broad_mean, broad_var = self.broad.posterior(X, V)
            return tf.where(beyond, broad_mean, mean), tf.where(beyond, broad_var, var)

        def sample(self, X, V, noise, uniform):
            draws = super().sample(X, V, noise, uniform)
            if self.mode != "broad":
                return draws
            return tf.where((self.ratio(V) > 1.0)[None, :, None], self.broad.sample(X, V, noise, uniform), draws)

        def get_config(self):
            # the model's structure holds it, and a compiled prediction is shared by models of one structure: a
            # mixture's config alone would let this prior's predictions run a plain mixture's trace
            return {**super().get_config(), "kind": f"widened_{self.mode}", "limit": self.limit.tolist()}

    return WidenedPrior


#: The fitted background weight of each fit of the ``background`` variant and the seconds it took, beside the
#: mixture's EM (as the fit's unit reports them).
_VARIANT_FITS: list[dict] = []


@contextlib.contextmanager
def population_prior_variant(variant: str | None):
    """Within it, the population prior a fit builds (`gpal.models.input_prior.fit_mixture_prior`, which the model
    calls on the standardised training rows) is ``variant``'s; None: unchanged."""
    from gpal.models import input_prior
    from gpal.registry import BROAD_PRIOR_VARIANCE

    if variant is None:
        yield
        return
    original = input_prior.fit_mixture_prior

    def fit(X, V, n_components, random_state=0, **options):
        started = time.process_time()
        prior = original(X, V, n_components, random_state, **options)
        em = time.process_time() - started
        if variant == "background":
            weight = background_weight(prior, X, V, BROAD_PRIOR_VARIANCE)
            _VARIANT_FITS.append({"background_weight": weight, "em_cpu_seconds": round(em, 3),
                                  "weight_cpu_seconds": round(time.process_time() - started - em, 3)})
            return with_background(prior, weight, BROAD_PRIOR_VARIANCE)
        return widened_prior_class()(prior, np.max(V, axis=0), variant, BROAD_PRIOR_VARIANCE)

    input_prior.fit_mixture_prior = fit
    try:
        yield
    finally:
        input_prior.fit_mixture_prior = original


def unit_path(units: Path, check: str, seed: int, model: str) -> Path:
    return units / f"{check.replace(':', '_')}_seed{seed}_{model}.json"


def fit_unit(check: str, seed: int, model: str) -> dict:
    """One model's probabilities of one check's rows (before what the catalog knows is applied)."""
    from gpal import NoisyGPClassifier
    from gpal.catalog_jobs import later_labels

    if model in BASELINES:
        started = time.perf_counter()
        unit = later_labels.fit_unit(check, seed, model)  # the later-label checks' own baseline fit
        return {"check": check, "seed": seed, "model": model, "fit_seconds": round(time.perf_counter() - started, 1),
                **unit}
    train, rows, _ = later_labels.check_data(check, seed)
    params = MODELS[REMEDIES.get(model, "error_bars" if model in VARIANTS else model)]
    est = NoisyGPClassifier(random_state=seed, progress=False, **params)
    noisy = bool(params)
    unlabelled = (rows.X, rows.X_var) if model in REMEDIES else None
    _VARIANT_FITS.clear()
    started = time.perf_counter()
    with warnings.catch_warnings(), population_prior_variant(VARIANTS.get(model)):
        warnings.simplefilter("ignore", UserWarning)  # the long-fit notice; the catalog's dropped rows are the job's
        est.fit(train.X, train.y, train.X_var if noisy else None, unlabelled=unlabelled)
    seconds = time.perf_counter() - started
    proba = est.predict_proba(rows.X, rows.X_var if noisy else None)
    return {"check": check, "seed": seed, "model": model, "n_train": int(train.y.size), "n_rows": int(len(rows.X)),
            "fit_seconds": round(seconds, 1), "epochs": len(est.history_), "converged": bool(est.converged_),
            **(_VARIANT_FITS[0] if _VARIANT_FITS else {}), "proba": np.asarray(proba).tolist()}


def run(checks: list[str], seeds: list[int], units: Path, models: list[str]) -> None:
    units.mkdir(parents=True, exist_ok=True)
    for seed in seeds:  # every check at a seed before the next seed: a partial run still covers every check
        for check in checks:
            for model in models:
                path = unit_path(units, check, seed, model)
                if path.is_file():
                    continue
                unit = fit_unit(check, seed, model)
                path.write_text(json.dumps(unit), encoding="utf-8")
                print(json.dumps({k: v for k, v in unit.items() if k != "proba"}), flush=True)


def summarize(checks: list[str], seeds: list[int], units: Path, models: list[str], reference: str = REFERENCE) -> None:
    """Per check, each measure of ``reference`` and of every other model, with the paired interval of ``reference``
    minus the model."""
    from gpal.catalog_jobs.later_labels import check_probabilities, measure_check

    others = [m for m in models if m != reference]
    names = {"ignoring": "ignoring X_var", "error_bars": "error bars", **BASELINES,
             **{m: m.replace("_", " ") for m in (*REMEDIES, *VARIANTS)}}
    print(f"| check | measure | {names[reference]} | " + " | ".join(names[m] for m in others) + " | sources |")
    print("|---|---|---|" + "---|" * len(others) + "---|")
    for check in checks:
        probabilities, seconds = {}, {m: [] for m in (reference, *others)}
        for seed in seeds:
            loaded = {m: json.loads(unit_path(units, check, seed, m).read_text(encoding="utf-8")) for m in seconds}
            for m, u in loaded.items():
                seconds[m].append(u["fit_seconds"])
            probabilities[seed] = check_probabilities(check, seed, loaded)
        table = measure_check(check, seeds, probabilities, reference=reference)
        for measure in ("nll", "balanced_accuracy", "ece", "pulsar_blazar_auc"):
            part = table[table.measure == measure].set_index("model")
            ref = part.loc[reference]
            # measure_check's interval is the reference minus the other model
            cells = [f"{part.loc[m, 'value']:.3f} ({part.loc[m, 'diff']:+.3f} [{part.loc[m, 'diff_low']:+.3f}, "
                     f"{part.loc[m, 'diff_high']:+.3f}])" for m in others]
            print(f"| {check} | {measure} | {ref['value']:.3f} | " + " | ".join(cells) + f" | {int(ref['n'])} |")
        print(f"fit seconds {check} (a baseline's first fit of a check loads the catalogs): " + " / ".join(
            f"{names[m]} {np.mean(v):.0f}" for m, v in seconds.items()))


def recall(checks: list[str], seeds: list[int], units: Path, models: list[str]) -> None:
    """Where the error bars' balanced accuracy goes: per check and model, each class's recall (mean over the seeds)
    and the scored sources the model gets right where the default does not (or wrong where it gets right), by later
    class; and the mean change of log p(true class) from ignoring X_var to the error bars, in the half of each
    class's sources with the larger error bars (median over features of X_var over the feature's training variance)
    and the other half: a prior that pulls faint sources toward where most sources lie costs the rare classes there."""
    from gpal.catalog_jobs.later_labels import CLASSES, check_data, check_probabilities, scored_rows

    for check in checks:
        hits = {m: [] for m in models}
        moved = {c: ([], []) for c in range(len(CLASSES))}
        for seed in seeds:
            loaded = {m: json.loads(unit_path(units, check, seed, m).read_text(encoding="utf-8")) for m in models}
            proba = check_probabilities(check, seed, loaded)
            label = scored_rows(check, seed)["label"]
            train, rows, _ = check_data(check, seed)
            scored = label >= 0
            for m in models:
                hits[m].append(proba[m].argmax(axis=1)[scored] == label[scored])
            relative = np.median(rows.X_var / train.X.var(axis=0), axis=1)
            for c in range(len(CLASSES)):
                k = label == c
                change = np.log(proba[REFERENCE][k, c]) - np.log(proba["ignoring"][k, c])
                large = relative[k] > np.median(relative[k])
                moved[c][0].append(change[large])
                moved[c][1].append(change[~large])
        y = label[label >= 0]
        for m in models:
            recalls = [np.mean([h[y == c].mean() for h in hits[m]]) for c in range(len(CLASSES))]
            line = ", ".join(f"{name} {r:.3f}" for name, r in zip(CLASSES, recalls))
            if m != REFERENCE:
                gained = [np.mean([(h & ~d)[y == c].sum() for h, d in zip(hits[m], hits[REFERENCE])])
                          for c in range(len(CLASSES))]
                lost = [np.mean([(~h & d)[y == c].sum() for h, d in zip(hits[m], hits[REFERENCE])])
                        for c in range(len(CLASSES))]
                line += "; right where the error bars are wrong / wrong where they are right, per seed: " + ", ".join(
                    f"{name} {g:.1f} / {lo:.1f}" for name, g, lo in zip(CLASSES, gained, lost))
            print(f"recall {check} {m} (sources per class {', '.join(str(int((y == c).sum())) for c in range(3))}): "
                  f"{line}")
        print(f"log p(true) error bars minus ignoring X_var {check}, larger / smaller error bars half: " + ", ".join(
            f"{name} {np.mean(np.concatenate(moved[c][0])):+.3f} / {np.mean(np.concatenate(moved[c][1])):+.3f}"
            for c, name in enumerate(CLASSES)))


def nll_by_class(checks: list[str], seeds: list[int], units: Path, models: list[str]) -> None:
    """Where a model's test NLL against ignoring X_var comes from on a later-label check: the change of -log p(true
    class) summed per later class, per earlier-release group (bcu or unassociated) and per half by error-bar size
    (the median over features of X_var over the feature's training variance, split at the scored rows' median), as
    its share of the mean over the scored rows (means over the seeds); then each feature's median X_var over its
    training variance in the rows scored and in the training rows (the first seed's)."""
    from gpal.catalog_jobs.later_labels import CLASSES, check_data, check_probabilities, scored_rows

    for check in checks:
        for model in (m for m in models if m != "ignoring"):
            parts: dict[tuple[str, str, str], list[tuple[float, int]]] = {}
            totals = []
            for seed in seeds:
                loaded = {m: json.loads(unit_path(units, check, seed, m).read_text(encoding="utf-8"))
                          for m in (model, "ignoring")}
                proba = check_probabilities(check, seed, loaded)
                label = scored_rows(check, seed)["label"]
                train, rows, class1 = check_data(check, seed)
                scored = label >= 0
                at = (np.arange(label.size), np.maximum(label, 0))
                worse = np.log(proba["ignoring"][at]) - np.log(proba[model][at])  # > 0: the model is worse
                relative = np.median(rows.X_var / train.X.var(axis=0), axis=1)
                large = relative > np.median(relative[scored])
                totals.append((float(worse[scored].sum()), int(scored.sum())))
                for c, name in enumerate(CLASSES):
                    for group, in_group in (("bcu", class1 == "bcu"), ("unassociated", class1 != "bcu")):
                        for half, in_half in (("larger", large), ("smaller", ~large)):
                            k = scored & (label == c) & in_group & in_half
                            parts.setdefault((name, group, half), []).append((float(worse[k].sum()), int(k.sum())))
            n = np.mean([t[1] for t in totals])
            print(f"{check} {model} minus ignoring X_var, test NLL: {np.mean([t[0] for t in totals]) / n:+.4f} over "
                  f"{n:.0f} sources; by later class, group and error-bar half (sources, share of the mean, per source): "
                  + "; ".join(f"{c} {g} {h} {np.mean([v[1] for v in vs]):.0f}, "
                              f"{np.mean([v[0] for v in vs]) / n:+.4f}, "
                              f"{np.mean([v[0] for v in vs]) / np.mean([v[1] for v in vs]):+.3f}"
                              for (c, g, h), vs in parts.items() if np.mean([v[1] for v in vs]) > 0))
        train, rows, _ = check_data(check, seeds[0])
        ratio = {"scored": np.median(rows.X_var / train.X.var(axis=0), axis=0),
                 "training": np.median(train.X_var / train.X.var(axis=0), axis=0)}
        print(f"{check} median X_var over the feature's training variance, scored rows / training rows: " + ", ".join(
            f"{name} {a:.2f} / {b:.2f}" for name, a, b in zip(train.feature_names, ratio["scored"], ratio["training"])
            if a > 0 or b > 0))


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


def background_shares(checks: list[str], seeds: list[int]) -> None:
    """How much of each check's rows the broad component of ``background`` could take: the population prior fitted
    as the estimator fits it (standardised training rows, its components and seed), then the maximum-likelihood
    background weight (`background_weight`) on the training rows and, separately, on the rows the check classifies
    (as a weight fixed from the pool would be), and how many classified rows the broad component takes (posterior
    weight above one half) at the latter; how many classified rows the widened priors widen (an error bar beyond the
    training rows' largest); the EM's and the weight's CPU seconds.  One line a check and seed, then label lines."""
    from gpal import NoisyGPClassifier
    from gpal.catalog_jobs.later_labels import check_data, scored_rows
    from gpal.data.standardizer import Standardizer
    from gpal.models.input_prior import fit_mixture_prior
    from gpal.registry import BROAD_PRIOR_VARIANCE

    components = NoisyGPClassifier().get_params()["prior_components"]
    for check in checks:
        lines = []
        for seed in seeds:
            train, rows, _ = check_data(check, seed)
            scaler = Standardizer.fit(train.X)
            (X, V), (X_u, V_u) = scaler.transform_arrays(train.X, train.X_var), scaler.transform_arrays(rows.X,
                                                                                                          rows.X_var)
            started = time.process_time()
            prior = fit_mixture_prior(X, V, components, seed)
            em = time.process_time() - started
            trained = background_weight(prior, X, V, BROAD_PRIOR_VARIANCE)
            weight_seconds = time.process_time() - started - em
            pooled = background_weight(prior, X_u, V_u, BROAD_PRIOR_VARIANCE)
            taken = 0
            if pooled > 0:
                import tensorflow as tf

                log_r = with_background(prior, pooled, BROAD_PRIOR_VARIANCE)._components(tf.constant(X_u),
                                                                                        tf.constant(V_u))[0]
                log_r = log_r - tf.reduce_logsumexp(log_r, axis=1, keepdims=True)
                taken = int(np.sum(np.exp(log_r.numpy()[:, -1]) > 0.5))
            limit = V.max(axis=0)
            beyond = np.max(V_u[:, limit > 0] / limit[limit > 0], axis=1) > 1
            scored = scored_rows(check, seed)["label"] >= 0
            lines.append({"check": check, "seed": seed, "training_weight": trained, "pool_weight": pooled,
                          "pool_rows": len(X_u), "rows_taken": taken, "rows_beyond": int(beyond.sum()),
                          "scored": int(scored.sum()), "scored_beyond": int(beyond[scored].sum()),
                          "em_cpu_seconds": round(em, 3), "weight_cpu_seconds": round(weight_seconds, 3)})
            print(json.dumps(lines[-1]), flush=True)
        print(f"background {check}, weight fitted to the training rows / to the {lines[0]['pool_rows']} classified "
              "rows (classified rows it takes), per seed: " + "; ".join(
                  f"{r['training_weight']:.5f} / {r['pool_weight']:.5f} ({r['rows_taken']})" for r in lines))
        print(f"widened {check}, classified rows whose error bar exceeds the training rows' largest in a feature, "
              f"of {lines[0]['pool_rows']} (of the {lines[0]['scored']} scored), per seed: "
              + " / ".join(f"{r['rows_beyond']} ({r['scored_beyond']})" for r in lines))
        print(f"background {check}, CPU seconds of the prior's EM / of the weight, per seed: " + "; ".join(
            f"{r['em_cpu_seconds']:.2f} / {r['weight_cpu_seconds']:.2f}" for r in lines))


def variant_tasks(seeds: list[int]) -> None:
    """The population prior's `VARIANTS` on the tasks whose answer is known without a catalog: the synthetic task of
    ``--synthetic error_bars`` (5 features, 2000 rows, a known Bayes answer) and wine with heteroscedastic noise (the
    direct fit of ``--wine-pipeline``): per task and seed the defaults' test NLL without X_var (ignoring), given it
    (the population prior) and given it with each variant, one JSON line each; then per task the population prior's
    NLL minus ignoring, and each variant's minus ignoring and minus the population prior, mean over the seeds with its
    95 % t interval, and per seed."""
    from scipy import stats
    from sklearn.metrics import log_loss

    from gpal import NoisyGPClassifier
    from gpal.data.synthetic import wine_heteroscedastic
    from shared import benchmark_script

    heteroscedastic = benchmark_script("heteroscedastic")
    results: dict[str, list[dict]] = {"synthetic": [], "wine": []}
    for task in results:
        for seed in seeds:
            if task == "synthetic":
                data = heteroscedastic.make_task(2000, 2000, 5, seed=seed)
                X, y, V, X_test, y_test, V_test = (data[k] for k in ("X", "y", "X_var", "X_test", "y_test",
                                                                     "X_var_test"))
            else:
                train, test = wine_heteroscedastic(seed, units=1.0).split(test_size=0.5, seed=seed)
                X, y, V, X_test, y_test, V_test = train.X, train.y, train.X_var, test.X, test.y, test.X_var
            row = {"task": task, "seed": seed}
            for model in ("ignoring", "error_bars", *VARIANTS):
                noisy = model != "ignoring"
                _VARIANT_FITS.clear()
                with warnings.catch_warnings(), population_prior_variant(VARIANTS.get(model)):
                    warnings.simplefilter("ignore", UserWarning)
                    est = NoisyGPClassifier(random_state=seed).fit(X, y, V if noisy else None)
                proba = est.predict_proba(X_test, V_test if noisy else None)
                row[model] = log_loss(y_test, proba, labels=est.classes_)
                if _VARIANT_FITS:
                    row["background_weight"] = _VARIANT_FITS[0]["background_weight"]
            results[task].append(row)
            print(json.dumps(row), flush=True)
    pairs = [("error_bars", "ignoring"), *((v, against) for v in VARIANTS for against in ("ignoring", "error_bars"))]
    for task, rows in results.items():
        for model, against in pairs:
            diff = np.array([r[model] - r[against] for r in rows])
            half = stats.t.ppf(0.975, len(diff) - 1) * diff.std(ddof=1) / np.sqrt(len(diff))
            print(f"{task}, test NLL {model.replace('_', ' ')} minus {against.replace('_', ' ')}, mean over "
                  f"{len(diff)} seeds: {diff.mean():+.4f} [{diff.mean() - half:+.4f}, {diff.mean() + half:+.4f}]; "
                  "per seed " + " / ".join(f"{x:+.4f}" for x in diff))


def fit_time(curves: Path, seeds: list[int]) -> None:
    """The default fit given X_var on the 10-feature task (n = 2000), timed, beside the 750 epochs of a training
    curve (``curves``/noisy_d10_s<seed>.jsonl, whose epochs' seconds exclude its evaluations; the study's are of the
    former defaults, 100 inducing points, batch 50 and step 0.01): wall and CPU seconds, epochs and test NLL of
    each, one JSON line a seed, then the lines per seed."""
    from shared import benchmark_script

    heteroscedastic = benchmark_script("heteroscedastic")
    rows = []
    for seed in seeds:
        lines = [json.loads(line) for line in (curves / f"noisy_d10_s{seed}.jsonl").read_text(encoding="utf-8")
                 .splitlines() if line.strip()]
        epochs = [r for r in lines if "loss" in r]
        setup = next(r["setup_seconds"] for r in lines if "setup_seconds" in r)
        full = {"epochs": len(epochs), "wall_seconds": setup + sum(r["seconds"] for r in epochs),
                "cpu_seconds": sum(r["cpu_seconds"] for r in epochs), "test_nll": epochs[-1]["test_nll"]}
        rows.append({**heteroscedastic.default_fit(seed, noisy=True), "full": full})
        print(json.dumps(rows[-1]), flush=True)
    for label, default, full, form in (("wall seconds", "fit_wall_seconds", "wall_seconds", "{:.0f}"),
                                       ("CPU seconds", "fit_cpu_seconds", "cpu_seconds", "{:.0f}"),
                                       ("epochs", "epochs_run", "epochs", "{}"),
                                       ("test NLL", "test_nll", "test_nll", "{:.3f}")):
        print(f"given X_var, {label} per seed, the default ({rows[0]['full']['epochs']} epochs of the curves' settings): "
              + " / ".join(f"{form.format(r[default])} ({form.format(r['full'][full])})" for r in rows))
    print("given X_var, test NLL of the default minus all epochs', per seed: "
          + " / ".join(f"{r['test_nll'] - r['full']['test_nll']:+.3f}" for r in rows))


def wine_pipeline(seeds: list[int]) -> None:
    """The error bars through a scikit-learn Pipeline on wine with heteroscedastic noise
    (`gpal.data.synthetic.wine_heteroscedastic`, half the rows to train, stratified): the estimator's defaults fitted
    directly; gpal's scaler and the estimator (``NoisyStandardScaler`` and ``NoisyInputAdapter`` on ``[X | X_var]``);
    and a ``StandardScaler`` in front, X_var routed past it, in the set's units and in units 0.05 times them (spreads
    below 1), each with whether ``RescaledWithoutVariancesWarning`` said so.  Test NLL per seed, then the pipeline
    minus the direct fit."""
    import sklearn
    from sklearn.metrics import log_loss
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from gpal import NoisyGPClassifier
    from gpal.data.synthetic import wine_heteroscedastic
    from gpal.estimators.base import RescaledWithoutVariancesWarning
    from gpal.estimators.model_selection import NoisyInputAdapter, NoisyStandardScaler, stack_inputs

    rows = []
    for seed in seeds:
        row = {"seed": seed}
        for units in (1.0, 0.05):
            train, test = wine_heteroscedastic(seed, units=units).split(test_size=0.5, seed=seed)
            labels = np.asarray(train.class_names)
            y, y_test = labels[train.y], labels[test.y]
            if units == 1.0:
                direct = NoisyGPClassifier(random_state=seed).fit(train.X, y, train.X_var)
                row["direct"] = log_loss(y_test, direct.predict_proba(test.X, test.X_var), labels=direct.classes_)
                pipe = make_pipeline(NoisyStandardScaler(), NoisyInputAdapter(NoisyGPClassifier(random_state=seed)))
                pipe.fit(stack_inputs(train), y)
                row["noisy_scaler"] = log_loss(y_test, pipe.predict_proba(stack_inputs(test)), labels=pipe.classes_)
            with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                est = NoisyGPClassifier(random_state=seed).set_fit_request(X_var=True)
                scaled = make_pipeline(StandardScaler(), est.set_predict_proba_request(X_var=True))
                scaled.fit(train.X, y, X_var=train.X_var)
                proba = scaled.predict_proba(test.X, X_var=test.X_var)
            key = f"standard_scaler_units_{units:g}"
            row[key] = log_loss(y_test, proba, labels=scaled.classes_)
            row[f"{key}_warned"] = any(issubclass(w.category, RescaledWithoutVariancesWarning) for w in caught)
        rows.append(row)
        print(json.dumps(row), flush=True)
    for key in ("direct", "noisy_scaler", "standard_scaler_units_1", "standard_scaler_units_0.05"):
        print(f"wine with noise, test NLL {key.replace('_', ' ')}, per seed: "
              + " / ".join(f"{r[key]:.3f}" for r in rows))
    print("wine with noise, test NLL of gpal's scaler and the estimator minus the direct fit, per seed: "
          + " / ".join(f"{r['noisy_scaler'] - r['direct']:+.4f}" for r in rows))
    print("StandardScaler in front warned of (units 1 / 0.05), per seed: " + " / ".join(
        f"{r['standard_scaler_units_1_warned']} / {r['standard_scaler_units_0.05_warned']}" for r in rows))


#: The sizes whose steps price the long-fit warning (`gpal.training.budget`'s STEP_SECONDS, ROW_SECONDS and FLOPS):
#: input noise, inducing points, rows a step, on 2000 rows of 10 features and 3 classes; the first two are small steps
#: whose time is mostly the fixed part, the fifth and sixth the estimator's default.
STEP_SIZES = (("none", 20, 50), ("latent", 20, 50), ("latent", 50, 200), ("none", 50, 200), ("none", 100, 200),
              ("latent", 100, 200), ("latent", 100, 50), ("latent", 200, 200), ("none", 200, 500), ("latent", 50, 1000))
#: TensorFlow's thread pools at one thread each, for the step times: a process whose idle pool threads spin (as they
#: do in a process alone on a machine, and not beside another busy one) counts the spin as CPU time of its steps.
SPIN_FREE = {"TF_NUM_INTEROP_THREADS": "1", "TF_NUM_INTRAOP_THREADS": "1", "OMP_NUM_THREADS": "1"}


def step_time(noise: str, M: int, B: int) -> dict:
    """The CPU and wall seconds of one optimiser step of ``NoisyGPClassifier``'s compiled epochs at one size (the
    median of epochs 4 to 16 of a 16-epoch fit, each epoch's time from the fit's callback) beside the estimate the
    long-fit warning makes of it (`gpal.estimators.sizes.step_seconds`) and the step's floating-point work."""
    from gpal import NoisyGPClassifier
    from gpal.training.budget import minibatch_steps
    from gpal.estimators.sizes import step_flops, step_seconds
    from shared import benchmark_script

    task = benchmark_script("heteroscedastic").make_task(2000, 10, 10, seed=0)
    marks = []
    est = NoisyGPClassifier(input_noise=noise, input_prior="population" if noise == "latent" else "auto",
                            num_inducing=M, batch_size=B, epochs=16, tol=None, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est.fit(task["X"], task["y"], task["X_var"],
                callback=lambda epoch, loss: marks.append((time.perf_counter(), time.process_time())))
    steps = minibatch_steps(1, 2000, B)
    wall, cpu = (float(np.median(np.diff([m[i] for m in marks])[3:])) / steps for i in (0, 1))
    estimate = step_seconds(est, 2000, 10, 3)
    return {"input_noise": noise, "num_inducing": M, "batch_size": B, "wall_ms": round(1e3 * wall, 3),
            "cpu_ms": round(1e3 * cpu, 3), "estimate_ms": round(1e3 * estimate, 2),
            "estimate_over_cpu": round(estimate / cpu, 2), "flops": step_flops(est, 2000, 10, 3)}


def step_times() -> None:
    """`step_time` at each of `STEP_SIZES`, each in a process of its own with TensorFlow's pools at one thread
    (`SPIN_FREE`), one JSON line a size; then the fixed cost a step, the cost a row of the step and the floating-point
    rate that fit them (least squares of CPU seconds against the step's rows and flops, relative to each step's time)
    and each step's estimate over its CPU seconds with those."""
    import os
    import subprocess
    import sys

    rows = []
    for noise, M, B in STEP_SIZES:
        done = subprocess.run([sys.executable, __file__, "--step-time", noise, str(M), str(B)], check=True,
                              capture_output=True, text=True, env={**os.environ, **SPIN_FREE})
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), flush=True)
    cpu = np.array([r["cpu_ms"] for r in rows]) / 1e3
    flops = np.array([r["flops"] for r in rows])
    batch = np.array([r["batch_size"] for r in rows], dtype=float)
    weight = 1.0 / cpu  # relative errors: a 40 ms step should not outweigh a 1 ms one
    (fixed, per_row, per_flop), *_ = np.linalg.lstsq(np.column_stack([weight, batch * weight, flops * weight]),
                                                     cpu * weight, rcond=None)
    print(f"fitted to the CPU seconds a step: fixed part {1e3 * fixed:.2f} ms, {1e6 * per_row:.1f} us a row of the "
          f"step, rate {1 / per_flop:.3g} flop/s")
    for r in rows:
        fitted = fixed + r["batch_size"] * per_row + r["flops"] * per_flop
        print(f"a step of {r['input_noise']} inputs, {r['num_inducing']} inducing points, {r['batch_size']} rows, ms "
              f"CPU / wall / estimated: {r['cpu_ms']:.1f} / {r['wall_ms']:.1f} / {r['estimate_ms']:.1f} (estimate over "
              f"CPU {r['estimate_over_cpu']:.2f}; with the fitted constants {fitted / (r['cpu_ms'] / 1e3):.2f})")


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
    parser.add_argument("--models", nargs="+", default=[*MODELS, *BASELINES],
                        choices=[*MODELS, *BASELINES, *REMEDIES, *VARIANTS], help="the models fitted (default: all but remedies)")
    parser.add_argument("--units", type=Path, help="folder of the per-fit probabilities of the catalogs' checks")
    parser.add_argument("--summarize", action="store_true", help="print the table from the units kept")
    parser.add_argument("--reference", default=REFERENCE, help="the model the table's intervals are of (it minus "
                        "each other model); the error bars unless given")
    parser.add_argument("--recall", action="store_true", help="print each class's recall and the error bars' shift "
                        "by error-bar size from the units kept (of --models, which must hold ignoring and error_bars)")
    parser.add_argument("--by-class", action="store_true", help="print where each model's test NLL against ignoring "
                        "X_var comes from, by later class, group and error-bar size, from the units kept")
    parser.add_argument("--synthetic", choices=["error_bars", "default"], help="the synthetic task instead")
    parser.add_argument("--curves", nargs="+", type=Path, help="training curves to read the stop rules on instead")
    parser.add_argument("--fit-time", type=Path, help="folder of the 750-epoch curves given X_var (d = 10) to time "
                        "the default fit against instead")
    parser.add_argument("--wine-pipeline", action="store_true", help="the error bars through a Pipeline on wine "
                        "with heteroscedastic noise instead")
    parser.add_argument("--step-times", action="store_true", help="the seconds of an optimiser step beside the "
                        "long-fit warning's estimate instead")
    parser.add_argument("--step-time", nargs=3, metavar=("INPUT_NOISE", "M", "B"),
                        help="one size's step time, one JSON line (what --step-times runs in a process of its own)")
    parser.add_argument("--variant-tasks", action="store_true", help="the population prior's variants on the "
                        "synthetic task and wine with noise instead")
    parser.add_argument("--background-shares", action="store_true", help="the background component's weight "
                        "fitted to each check's training and classified rows, and the rows it takes, instead")
    args = parser.parse_args()
    if args.step_time:
        noise, M, B = args.step_time
        print(json.dumps(step_time(noise, int(M), int(B))))
        return
    # the modes whose printout is kept beside the record (keep_printed), the first one asked for
    printed = [(args.background_shares, lambda: background_shares(args.checks, args.seeds)),
               (args.variant_tasks, lambda: variant_tasks(args.seeds)),
               (args.wine_pipeline, lambda: wine_pipeline(args.seeds)),
               (args.step_times, step_times),
               (args.fit_time, lambda: fit_time(args.fit_time, args.seeds)),
               (args.curves, lambda: stops(args.curves)),
               (args.synthetic, lambda: synthetic(args.synthetic, args.seeds))]
    if args.units is not None:
        printed += [(args.by_class, lambda: nll_by_class(args.checks, args.seeds, args.units, args.models)),
                    (args.recall, lambda: recall(args.checks, args.seeds, args.units, args.models)),
                    (args.summarize, lambda: summarize(args.checks, args.seeds, args.units, args.models,
                                                       args.reference))]
    mode = next((work for asked, work in printed if asked), None)
    if mode is not None:
        with keep_printed("estimator_default", __file__):
            mode()
    elif args.units is None:
        parser.error("--units is required for the catalogs' checks")
    else:
        run(args.checks, args.seeds, args.units, args.models)

if __name__ == "__main__":
    main()
