"""``NoisyGPClassifier``: the scikit-learn style front of the noisy-input GP classifiers.

One estimator covers MGP, NIMGP, NIMGP-NN and NIMGP-FO (``input_noise`` =
none / latent / amortized / first_order).  Inputs are validated and, by default,
standardised (variances mapped by 1/scale^2) before any TensorFlow work; labels
may be of any hashable type; a fitted model saves to a directory of plain files
(``config.json`` + ``params.npz``), never a pickle.
"""

from __future__ import annotations

import json
import numbers
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from gpal.data import NoisyDataset, Standardizer

__all__ = ["NoisyGPClassifier"]

_INPUT_NOISE = ("none", "latent", "amortized", "first_order")
_NOISE_VARIANCE = ("known", "learned", "both")
_FORMAT = "gpal.NoisyGPClassifier"
_FORMAT_VERSION = 1
# Prediction evaluates the GP at (rows x n_samples) inputs; chunks keep that bounded.
_PREDICT_BUDGET = 2**18


class NoisyGPClassifier(ClassifierMixin, BaseEstimator):
    """Sparse variational multi-class GP classifier for inputs with error bars.

    Parameters
    ----------
    input_noise : "none" | "latent" | "amortized" | "first_order"
        How input noise enters: ignored (MGP), a Gaussian q(x_i) per training point
        (NIMGP), q(x_i) from a network of (x~_i, y_i) (NIMGP-NN), or a first-order
        variance correction grad(mu)^T V grad(mu) (NIMGP-FO).
    noise_variance : "known" | "learned" | "both"
        Input-noise variances: the measured ``X_var``, one learned per-feature
        vector, or their sum.  Features whose measured variance is 0 are exact.
    likelihood : "robustmax" or a ``gpal.models.Likelihood``
    num_inducing : inducing points per latent function (capped at the training size).
    kernel : gpflow kernel copied per class; ``None`` is squared exponential with ARD.
    batch_size, epochs, learning_rate : Adam minibatch optimisation of the ELBO.
    n_samples : Monte Carlo draws of p(x* | x~*) per test point (latent, amortized).
    prior_variance : s of the broad prior N(0, s I) on the noiseless inputs.
    hidden_sizes : hidden layer widths of the amortisation network.
    epsilon, learn_epsilon : label-flip probability of the robust-max likelihood.
    standardize : fit a ``gpal.data.Standardizer`` on the training inputs.
    seed : all randomness (k-means, network init, minibatches, MC draws) derives from it.
    progress : show a tqdm bar while training.

    Fitted attributes: ``classes_``, ``n_features_in_``, ``model_`` (the
    ``NoisySVGP`` tf.Module), ``standardizer_``, ``history_`` (per-epoch mean of the
    minibatch negative-ELBO estimates), ``stopped_early_``.
    """

    def __init__(
        self,
        input_noise: str = "none",
        noise_variance: str = "known",
        likelihood: Any = "robustmax",
        num_inducing: int = 100,
        kernel: Any = None,
        batch_size: int = 50,
        epochs: int = 750,
        learning_rate: float = 0.01,
        n_samples: int = 300,
        prior_variance: float = 1000.0,
        hidden_sizes: tuple[int, ...] = (50,),
        epsilon: float = 1e-3,
        learn_epsilon: bool = False,
        standardize: bool = True,
        seed: int = 0,
        progress: bool = True,
    ):
        self.input_noise = input_noise
        self.noise_variance = noise_variance
        self.likelihood = likelihood
        self.num_inducing = num_inducing
        self.kernel = kernel
        self.batch_size = batch_size
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.n_samples = n_samples
        self.prior_variance = prior_variance
        self.hidden_sizes = hidden_sizes
        self.epsilon = epsilon
        self.learn_epsilon = learn_epsilon
        self.standardize = standardize
        self.seed = seed
        self.progress = progress

    # ------------------------------------------------------------ validation
    def _check_params(self) -> None:
        if self.input_noise not in _INPUT_NOISE:
            raise ValueError(f"input_noise must be one of {_INPUT_NOISE}; got {self.input_noise!r}")
        if self.noise_variance not in _NOISE_VARIANCE:
            raise ValueError(f"noise_variance must be one of {_NOISE_VARIANCE}; got {self.noise_variance!r}")
        for name, minimum in [("num_inducing", 1), ("batch_size", 1), ("epochs", 0), ("n_samples", 1)]:
            value = getattr(self, name)
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
                raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
        for name in ("learning_rate", "prior_variance"):
            value = getattr(self, name)
            if not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
        if not isinstance(self.epsilon, numbers.Real) or not 0 < self.epsilon < 1:
            raise ValueError(f"epsilon must be a probability in (0, 1); got {self.epsilon!r}")
        if not isinstance(self.seed, numbers.Integral) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer; got {self.seed!r}")
        sizes = tuple(self.hidden_sizes)
        if not all(isinstance(h, numbers.Integral) and h >= 1 for h in sizes):
            raise ValueError(f"hidden_sizes must be positive integers; got {self.hidden_sizes!r}")
        if isinstance(self.likelihood, str):
            from gpal.models.likelihoods import LIKELIHOODS

            if self.likelihood.lower() not in LIKELIHOODS:
                raise ValueError(f"likelihood must be one of {sorted(LIKELIHOODS)} or a Likelihood; got {self.likelihood!r}")
        else:
            from gpal.models.likelihoods import Likelihood

            if not isinstance(self.likelihood, Likelihood):
                raise TypeError(f"likelihood must be a name or a gpal.models.Likelihood; got {type(self.likelihood)}")
        if self.kernel is not None:
            import gpflow

            if not isinstance(self.kernel, gpflow.kernels.Kernel):
                raise TypeError(f"kernel must be None or a gpflow kernel; got {type(self.kernel)}")

    @property
    def _needs_X_var(self) -> bool:
        """Whether measured variances are part of the model (and so required at fit and predict)."""
        return self.input_noise != "none" and self.noise_variance != "learned"

    def _check_X(self, X: Any, X_var: Any, n_features: int | None, what: str) -> tuple[np.ndarray, np.ndarray]:
        """Float (n, d) inputs and variances; zeros for X_var where the model does not use it."""
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(f"X must be numeric; could not convert it to float ({err})") from None
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array (n_samples, n_features); got shape {X.shape}")
        if X.shape[0] == 0:
            raise ValueError(f"{what} needs at least one row; X is empty")
        if n_features is not None and X.shape[1] != n_features:
            raise ValueError(f"X has {X.shape[1]} features, but this classifier was fitted with {n_features}")
        _check_finite("X", X)
        if X_var is None:
            if self._needs_X_var:
                raise ValueError(
                    f"input_noise={self.input_noise!r} with noise_variance={self.noise_variance!r} uses the measured "
                    f"input variances, so {what} needs X_var (n, d); pass zeros for exact features"
                )
            return X, np.zeros_like(X)
        X_var = np.asarray(X_var, dtype=np.float64)
        if X_var.shape != X.shape:
            raise ValueError(f"X_var must have the same shape as X {X.shape}; got {X_var.shape}")
        _check_finite("X_var", X_var)
        if (X_var < 0).any():
            cols = sorted(set(np.nonzero(X_var < 0)[1].tolist()))
            raise ValueError(f"X_var must be >= 0 (variances, not standard deviations); negative in columns {cols}")
        return X, X_var

    # ------------------------------------------------------------------- fit
    def fit(
        self,
        X: Any,
        y: Any = None,
        X_var: Any = None,
        callback: Callable[[int, float], bool | None] | None = None,
    ) -> "NoisyGPClassifier":
        """Fit on arrays ``X`` (n, d), labels ``y`` (n,), variances ``X_var`` (n, d), or on a ``NoisyDataset``.

        ``callback(epoch, loss)`` runs after every epoch; returning False stops
        training (as does Ctrl-C), keeping the parameters reached.
        Raises ``gpal.training.TrainingError`` if the ELBO becomes non-finite.
        """
        if isinstance(X, NoisyDataset):
            if y is not None or X_var is not None:
                raise ValueError("pass either a NoisyDataset or arrays X, y, X_var, not both")
            if not X.is_labelled:
                raise ValueError("fit needs a labelled NoisyDataset; this one is an unlabelled pool")
            X, y, X_var = X.X, X.labels(), X.X_var
        self._check_params()
        X, X_var = self._check_X(X, X_var, None, "fit")
        if y is None:
            raise ValueError("fit needs labels y")
        classes, codes = _encode_labels(y, X.shape[0])

        from gpal.models.svgp import build_model
        from gpal.training import TrainData, train

        standardizer = Standardizer.fit(X) if self.standardize else None
        Z, Z_var = (X, X_var) if standardizer is None else standardizer.transform_arrays(X, X_var)
        model = build_model(
            Z,
            codes,
            num_classes=len(classes),
            input_noise=self.input_noise,
            noise_variance=self.noise_variance,
            likelihood=self.likelihood,
            num_inducing=self.num_inducing,
            kernel=self.kernel,
            prior_variance=float(self.prior_variance),
            hidden_sizes=tuple(int(h) for h in self.hidden_sizes),
            epsilon=float(self.epsilon),
            learn_epsilon=bool(self.learn_epsilon),
            seed=int(self.seed),
        )
        result = train(
            model,
            TrainData.from_arrays(Z, Z_var, codes),
            epochs=int(self.epochs),
            batch_size=int(self.batch_size),
            learning_rate=float(self.learning_rate),
            seed=int(self.seed),
            progress=bool(self.progress),
            callback=callback,
        )
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self.standardizer_ = standardizer
        self.model_ = model
        self.history_ = result.history
        self.stopped_early_ = result.stopped_early
        self._predict_fn = None
        return self

    # --------------------------------------------------------------- predict
    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise RuntimeError("this NoisyGPClassifier is not fitted yet; call fit first")

    def predict_proba(self, X: Any, X_var: Any = None) -> np.ndarray:
        """Class probabilities (n, C), columns in the order of ``classes_``."""
        self._check_fitted()
        if isinstance(X, NoisyDataset):
            if X_var is not None:
                raise ValueError("pass either a NoisyDataset or arrays X, X_var, not both")
            X, X_var = X.X, X.X_var
        X, X_var = self._check_X(X, X_var, self.n_features_in_, "predict")
        if self.standardizer_ is not None:
            X, X_var = self.standardizer_.transform_arrays(X, X_var)
        import tensorflow as tf

        model = self.model_
        S = int(self.n_samples) if model.strategy.stochastic_prediction else 1
        if getattr(self, "_predict_fn", None) is None:
            spec = tf.TensorSpec([None, self.n_features_in_], tf.float64)
            self._predict_fn = tf.function(
                lambda a, b, seed: model.predict_proba(a, b, seed, S),
                input_signature=[spec, spec, tf.TensorSpec([2], tf.int64)],
                autograph=False,
            )
        rows = max(1, _PREDICT_BUDGET // (S * len(self.classes_) ** 2))
        out = []
        for k, start in enumerate(range(0, X.shape[0], rows)):
            seed = tf.constant([int(self.seed), -1 - k], dtype=tf.int64)  # stream apart from training's
            out.append(self._predict_fn(X[start : start + rows], X_var[start : start + rows], seed).numpy())
        return np.concatenate(out)

    def predict(self, X: Any, X_var: Any = None) -> np.ndarray:
        """Most probable class label per row."""
        p = self.predict_proba(X, X_var)
        return self.classes_[np.argmax(p, axis=1)]

    def score(self, X: Any, y: Any = None, X_var: Any = None, sample_weight: Any = None) -> float:
        """Accuracy (optionally weighted); ``X`` may be a labelled ``NoisyDataset``."""
        if isinstance(X, NoisyDataset):
            y = X.labels()
        y = _labels_array(y.tolist() if isinstance(y, np.ndarray) and y.ndim == 1 else list(y))
        pred = self.predict(X, X_var)
        if y.shape != pred.shape:
            raise ValueError(f"y must have {pred.shape[0]} labels; got {y.shape[0]}")
        correct = np.array([a == b for a, b in zip(pred, y)], dtype=float)
        return float(np.average(correct, weights=sample_weight))

    def predictive_entropy(self, X: Any, X_var: Any = None) -> np.ndarray:
        """Entropy (nats) of the predictive class distribution per row, (n,)."""
        p = self.predict_proba(X, X_var)
        return -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=1)

    # ------------------------------------------------------------- save/load
    def save(self, path: str | os.PathLike) -> None:
        """Write ``config.json`` and ``params.npz`` into directory ``path`` (replaced atomically)."""
        self._check_fitted()
        from gpal.models.svgp import kernel_to_config

        values = _variable_values(self.model_)
        bad = [k for k, v in values.items() if not np.all(np.isfinite(v))]
        if bad:
            raise ValueError(f"refusing to save a model with non-finite parameters: {bad}")
        params = {k: _plain(v) for k, v in self.get_params(deep=False).items()}
        if params["kernel"] is not None:
            params["kernel"] = {"kernel_config": kernel_to_config(params["kernel"])}
        if not isinstance(params["likelihood"], str):
            params["likelihood"] = {"likelihood_config": params["likelihood"].get_config()}
        params["hidden_sizes"] = [int(h) for h in params["hidden_sizes"]]
        config = {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            "params": params,
            "classes": [_label_to_json(c) for c in self.classes_],
            "n_features_in": int(self.n_features_in_),
            "standardizer": None if self.standardizer_ is None else self.standardizer_.to_dict(),
            "structure": self.model_.structure(),
            "history": [float(h) for h in self.history_],
            "stopped_early": bool(self.stopped_early_),
        }
        text = json.dumps(config, indent=1)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
        try:
            (tmp / "config.json").write_text(text)
            np.savez(tmp / "params.npz", **values)
            if path.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old.", dir=path.parent))
                os.replace(path, old / "model")
                os.replace(tmp, path)
                shutil.rmtree(old)
            else:
                os.replace(tmp, path)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "NoisyGPClassifier":
        """Rebuild a classifier saved by ``save``; its predictions equal the saved one's."""
        path = Path(path)
        config = json.loads((path / "config.json").read_text())
        if config.get("format") != _FORMAT or config.get("version") != _FORMAT_VERSION:
            raise ValueError(f"{path} does not hold a {_FORMAT} v{_FORMAT_VERSION} model")
        from gpal.models.likelihoods import likelihood_from_config
        from gpal.models.svgp import NoisySVGP, kernel_from_config

        params = dict(config["params"])
        if isinstance(params["kernel"], dict):
            params["kernel"] = kernel_from_config(params["kernel"]["kernel_config"])
        if isinstance(params["likelihood"], dict):
            params["likelihood"] = likelihood_from_config(params["likelihood"]["likelihood_config"])
        params["hidden_sizes"] = tuple(params["hidden_sizes"])
        clf = cls(**params)
        model = NoisySVGP.from_structure(config["structure"])
        with np.load(path / "params.npz") as npz:
            _assign_values(model, {k: npz[k] for k in npz.files})
        clf.classes_ = _labels_array([_label_from_json(c) for c in config["classes"]])
        clf.n_features_in_ = config["n_features_in"]
        clf.standardizer_ = None if config["standardizer"] is None else Standardizer.from_dict(config["standardizer"])
        clf.model_ = model
        clf.history_ = list(config["history"])
        clf.stopped_early_ = config["stopped_early"]
        clf._predict_fn = None
        return clf


# ------------------------------------------------------------------ helpers
def _check_finite(name: str, arr: np.ndarray) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        rows, cols = np.nonzero(bad)
        raise ValueError(
            f"{name} contains {bad.sum()} non-finite value(s) (NaN or inf), e.g. row {rows[0]}, column {cols[0]} "
            f"= {arr[rows[0], cols[0]]}; columns affected: {sorted(set(cols.tolist()))}"
        )


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers, so that hyper-parameters serialise to JSON."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


def _labels_array(values: list) -> np.ndarray:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    try:
        typed = np.asarray(values)
        if typed.ndim == 1 and typed.dtype != object and all(t == v for t, v in zip(typed.tolist(), values)):
            return typed
    except (TypeError, ValueError):
        pass
    return arr


def _encode_labels(y: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(classes_, integer codes); classes sorted when they can be, else in order of appearance."""
    values = y.tolist() if isinstance(y, np.ndarray) and y.ndim == 1 else list(y)
    if len(values) != n:
        raise ValueError(f"y has {len(values)} labels for {n} rows of X")
    try:
        unique = sorted(set(values))
    except TypeError:
        unique = list(dict.fromkeys(values))
    if any(isinstance(v, float) and np.isnan(v) for v in unique):
        raise ValueError("y contains NaN labels")
    if len(unique) < 2:
        raise ValueError(f"y must contain at least 2 classes; got only {unique!r}")
    code = {v: k for k, v in enumerate(unique)}
    return _labels_array(unique), np.array([code[v] for v in values], dtype=np.int64)


def _label_to_json(label: Any) -> list:
    if isinstance(label, (bool, np.bool_)):
        return ["bool", bool(label)]
    if isinstance(label, numbers.Integral):
        return ["int", int(label)]
    if isinstance(label, numbers.Real):
        return ["float", float(label)]
    if isinstance(label, str):
        return ["str", label]
    raise TypeError(f"cannot save class label {label!r} of type {type(label).__name__}: use str, int, float or bool")


def _label_from_json(item: list) -> Any:
    kind, value = item
    return {"bool": bool, "int": int, "float": float, "str": str}[kind](value)


def _variable_values(model: Any) -> dict[str, np.ndarray]:
    """Every variable of the model by path; parameters in their unconstrained (stored) form."""
    import gpflow
    from gpflow.utilities import parameter_dict

    out = {}
    for key, var in parameter_dict(model).items():
        raw = var.unconstrained_variable if isinstance(var, gpflow.Parameter) else var
        out[key] = raw.numpy()
    return out


def _assign_values(model: Any, values: dict[str, np.ndarray]) -> None:
    import gpflow
    from gpflow.utilities import parameter_dict

    variables = parameter_dict(model)
    if set(variables) != set(values):
        raise ValueError(
            f"saved parameters do not match the model: missing {sorted(set(variables) - set(values))}, "
            f"unexpected {sorted(set(values) - set(variables))}"
        )
    for key, var in variables.items():
        raw = var.unconstrained_variable if isinstance(var, gpflow.Parameter) else var
        raw.assign(values[key])
