"""``DirichletGPClassifier``: Dirichlet-based GP classification (paper 003) behind gpal's estimator contract.

Training is C heteroskedastic sparse GP regressions on transformed labels with a
closed-form q(u) (see ``gpal.models.families.dirichlet``), so only the shared kernel and
the inducing inputs are optimised, by L-BFGS-B: far fewer parameters than a
variational classifier's q(u), the source of the speed-ups over full-batch
variational GPC that the paper reports (sec. 5, Fig. 5).
Inputs are validated by ``gpal.estimators.base`` and, by default, standardised with
variances mapped by 1/scale^2; a fitted model saves to ``config.json`` +
``params.npz``, never a pickle.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from gpal.constraints import Boolean, Integer, OneOf, Optional, Real, Satisfies
from gpal.data.dataset import NoisyDataset
from gpal.estimators.base import GPClassifierMixin, check_fit_data, warn_ignored_noise
from gpal.estimators.params import SPARSE_GP_PARAMETERS
from gpal.registry import DEFAULT_INPUT_NOISE, DEFAULT_NUM_INDUCING

__all__ = ["DirichletGPClassifier"]

# GPD's own closed-form versions of two ``INPUT_NOISE`` strategies (written here, not their classes).
_INPUT_NOISE = ("none", "first_order")
# GPD's prior means and kernel-variance starts (gpal.training.collapsed.PRIOR_MEANS / VARIANCE_STARTS;
# repeated so that the constraint is checked without importing TensorFlow).
_PRIOR_MEANS = ("zero", "class_frequency")
_VARIANCE_STARTS = ("kernel", "targets")
# The alpha_eps values paper 003 explores and selects from (sec. 4.2, Fig. 3; sec. 5 picks 0.1, 0.01 or 0.001).
_PAPER_GRID = (0.1, 0.01, 0.001)


class DirichletGPClassifier(GPClassifierMixin, BaseEstimator):
    """GP classification by heteroskedastic regression on Dirichlet-transformed labels (GPD).

    Fitted attributes: ``classes_``, ``n_features_in_``, ``alpha_epsilon_`` (chosen),
    ``posterior_`` (a ``DirichletPosterior``), ``standardizer_``, ``history_`` (one
    dict per alpha_eps tried: per-round negative bound, iterations, seconds, and the
    training MNLL).

    Parameters
    ----------
    alpha_epsilon
        Dirichlet pseudo-count added to every class (sec. 4); ``None``
        picks the value of ``alpha_grid`` with the lowest training MNLL (sec. 4.2).
    alpha_grid
        candidates for ``alpha_epsilon``; default the paper's 0.1, 0.01, 0.001.
    num_inducing
        inducing inputs, shared by the C regressions (capped at the distinct training rows).
    kernel
        gpflow kernel shared by all classes, or a name ("se_iso": one length scale, the
        paper's); ``None`` is squared exponential with one length scale per feature (ARD, gpal's).
    prior_mean
        "zero" (gpal's, the paper's eq. 7) regresses the transformed labels with a zero prior mean,
        so far from the data the probabilities return to uniform; "class_frequency" (the authors'
        code) subtracts a per-class offset whose softmax is the training class frequencies, and
        adds it back at prediction, so they return to the class prior.
    variance_start
        "kernel" (gpal's) starts from the kernel's variance; "targets" (the authors' code) from
        the variance of the regressed targets.
    train_inducing
        optimise the inducing inputs with the kernel (gpal's) or keep them at their k-means
        start (False, the authors').
    input_noise
        "none" ignores ``X_var``; "first_order" turns it into extra output
        noise grad(mu_c)^T V_i grad(mu_c) at training and test inputs (needs ``X_var``).
    first_order_rounds
        refits with updated extra noise after the first fit ("first_order" only).
    n_samples
        Monte Carlo draws of the latent marginals per prediction (eq. 8).
    standardize
        fit a ``gpal.data.standardizer.Standardizer`` on the training inputs.
    scaling
        the standardiser's map: "zscore" (mean 0, unit spread) or "range" (each feature's training range onto
        [-1, 1], as paper 003's authors scale their inputs).
    max_iter
        L-BFGS-B iterations per fit.
    random_state
        k-means of the inducing inputs and the Monte Carlo draws derive from it (an integer seed, None or a numpy generator, as scikit-learn's).
    progress
        show a tqdm bar while fitting (off by default, as scikit-learn estimators are quiet).

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import DirichletGPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] > 0.5, "fsrq", np.where(X[:, 0] < -0.5, "bll", "psr"))
    >>> clf = DirichletGPClassifier(alpha_epsilon=0.01, num_inducing=5, max_iter=5).fit(X, y)
    >>> clf.classes_.tolist(), clf.alpha_epsilon_
    (['bll', 'fsrq', 'psr'], 0.01)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """

    saved_format = "gpal.DirichletGPClassifier"  # the ``format`` of its saved folders
    saved_version = 2
    _fitted_attribute = "posterior_"
    _parameters = {
        **SPARSE_GP_PARAMETERS,
        "alpha_epsilon": Optional(Real(0, low_open=True, meaning="a Dirichlet pseudo-count")),
        "alpha_grid": Satisfies(lambda g: len(g) > 0 and all(Real(0, low_open=True).ok(a) for a in g),
                                "a non-empty sequence of numbers > 0 (Dirichlet pseudo-counts)"),
        "input_noise": OneOf(_INPUT_NOISE),
        "prior_mean": OneOf(_PRIOR_MEANS),
        "variance_start": OneOf(_VARIANCE_STARTS),
        "train_inducing": Boolean(),
        "first_order_rounds": Integer(0),
        "n_samples": Integer(1),
        "max_iter": Integer(1),
    }

    def __init__(
        self,
        *,
        alpha_epsilon: float | None = None,
        alpha_grid: tuple[float, ...] = _PAPER_GRID,
        num_inducing: int = DEFAULT_NUM_INDUCING,
        kernel: Any = None,
        prior_mean: str = "zero",
        variance_start: str = "kernel",
        train_inducing: bool = True,
        input_noise: str = DEFAULT_INPUT_NOISE,
        first_order_rounds: int = 2,
        n_samples: int = 1000,
        standardize: bool = True,
        scaling: str = "zscore",
        max_iter: int = 1000,
        random_state: Any = 0,
        progress: bool = False,
    ):
        self._store_params(locals())

    # ------------------------------------------------------------ validation
    def _alphas(self) -> tuple[float, ...]:
        """The alpha_eps candidates: the one given, or the grid to select from."""
        if self.alpha_epsilon is not None:
            return (float(self.alpha_epsilon),)
        return tuple(float(a) for a in self.alpha_grid)

    def _require_variance(self, X: Any, X_var: Any, what: str) -> None:
        if self.input_noise == "first_order" and X_var is None and not isinstance(X, NoisyDataset):
            raise ValueError(
                f"input_noise='first_order' turns the inputs' measured variances into output noise, so {what} "
                "needs X_var (n_samples, n_features), or a NoisyDataset; pass zeros for exact features"
            )

    # ------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any = None, X_var: Any = None) -> "DirichletGPClassifier":
        """Fit on arrays ``X`` (n, d), labels ``y`` (n,), variances ``X_var`` (n, d), or on a ``NoisyDataset``.

        Without ``alpha_epsilon`` one model is fitted per ``alpha_grid`` value and the
        one with the lowest training MNLL is kept (paper 003, sec. 4.2).

        Returns
        -------
        DirichletGPClassifier
            ``self``, fitted.
        """
        self._start_fit(X)
        alphas = self._alphas()
        self._require_variance(X, X_var, "fit")
        data = check_fit_data(X, y, X_var, owner=type(self).__name__)
        if self.input_noise != "first_order" and X_var is not None:
            warn_ignored_noise(data.X_var, f"{type(self).__name__}(input_noise={self.input_noise!r})",
                               fix="input_noise='first_order' uses them")

        from gpal.progress import progress_bar

        from gpal.models.families.dirichlet import HeteroskedasticSGPR, dirichlet_targets
        from gpal.training.collapsed import fit_dirichlet_gp

        standardizer, Xs, Vs = self._standardize_fit(data)
        n, d = Xs.shape
        C = len(data.classes)
        first_order = self.input_noise == "first_order"
        kernel, Z = self._sparse_start(Xs)
        # One model serves every candidate: fit_dirichlet_gp resets kernel and Z and swaps the targets.
        model = HeteroskedasticSGPR(kernel, Z, Xs, *dirichlet_targets(data.y, C, alphas[0]),
                                    train_inducing=bool(self.train_inducing))
        history, best = [], None
        for alpha in progress_bar(alphas, disable=not self.progress, desc="Dirichlet GP (alpha_eps)", unit="fit"):
            posterior, record = fit_dirichlet_gp(
                model, data.y, alpha,
                X_var=Vs if first_order else None,
                first_order_rounds=int(self.first_order_rounds),
                max_iter=int(self.max_iter),
                prior_mean=self.prior_mean,
                variance_start=self.variance_start,
            )
            proba = self._proba(posterior, Xs, Vs if first_order else None)
            mnll = float(-np.mean(np.log(np.maximum(proba[np.arange(n), data.y], np.finfo(float).tiny))))
            history.append({**record.to_dict(), "train_mnll": mnll})
            if best is None or mnll < best[0]:
                best = (mnll, alpha, posterior)

        self._set_fitted(data.classes, d, standardizer)
        self.alpha_epsilon_ = best[1]
        self.posterior_ = best[2]
        self.history_ = history
        return self

    @property
    def n_iter_(self) -> int:
        """L-BFGS-B iterations of the kept fit (the chosen ``alpha_epsilon_``), summed over its first-order rounds."""
        self._require_fitted()
        kept = next(h for h in self.history_ if h["alpha_epsilon"] == self.alpha_epsilon_)
        return sum(int(r["n_iter"]) for r in kept["rounds"])

    # --------------------------------------------------------------- predict
    def _proba(self, posterior: Any, X: np.ndarray, V: np.ndarray | None) -> np.ndarray:
        from gpal.models.families.dirichlet import mc_softmax

        mean, var = posterior.predict(X, V)
        return mc_softmax(mean, var, int(self.n_samples), [self.prediction_seed, 2])

    def predict_proba(self, X: Any, X_var: Any = None) -> np.ndarray:
        """Class probabilities (n, C), columns in the order of ``classes_`` (eq. 8 by Monte Carlo).

        Returns
        -------
        numpy.ndarray
            (n, C) probabilities, rows summing to 1.
        """
        self._check_fitted()
        self._require_variance(X, X_var, "predict")
        Xa, Va = self._prediction_inputs(X, X_var)
        return self._proba(self.posterior_, Xa, Va if self.input_noise == "first_order" else None)

    # ------------------------------------------------------------- save/load
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        self._check_fitted()
        from gpal.models.state import kernel_state

        # A user kernel is kept as the initial values a refit of the loaded estimator would start from.
        params, arrays = self._params_state("template/")
        kernel_config, kernel_arrays = kernel_state(self.posterior_.kernel, "kernel/")
        params["alpha_grid"] = [float(a) for a in params["alpha_grid"]]
        arrays.update({f"posterior/{k}": v for k, v in self.posterior_.arrays().items()})
        arrays.update(kernel_arrays)
        config = {
            "params": params,
            **self._fitted_state(),
            "alpha_epsilon": float(self.alpha_epsilon_),
            "kernel": kernel_config,
            "history": self.history_,
        }
        return config, arrays

    @classmethod
    def from_state(cls, config: dict[str, Any], arrays: dict[str, np.ndarray]) -> "DirichletGPClassifier":
        from gpal.models.families.dirichlet import DirichletPosterior
        from gpal.models.state import kernel_from_state

        params = cls._params_from_state(config["params"], arrays, "template/")
        params["alpha_grid"] = tuple(params["alpha_grid"])
        clf = cls(**params)
        kernel = kernel_from_state(config["kernel"], arrays, "kernel/")
        post = {k[len("posterior/") :]: v for k, v in arrays.items() if k.startswith("posterior/")}
        clf.posterior_ = DirichletPosterior(kernel, post["Z"], post["Lm"], post["LB"], post["w"], post.get("offset"))
        clf._restore_fitted_state(config)
        clf.alpha_epsilon_ = float(config["alpha_epsilon"])
        clf.history_ = config["history"]
        return clf
