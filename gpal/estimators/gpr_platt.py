"""``GPRPlattClassifier``: GP regression on the labels, calibrated by Platt scaling (paper 003's GPR baseline).

The estimator front of ``gpal.models.families.gpr_platt``: same contract as the other gpal
classifiers (``gpal.estimators.base``): fit on arrays or a labelled ``NoisyDataset``, labels of
any sortable type, ``predict_proba`` -> (n, C) in the order of ``classes_``, save/load as
``config.json`` + ``params.npz`` (no pickle).  It models exact inputs: a non-zero ``X_var`` is
accepted and ignored, with a warning.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from gpal.constraints import Integer, OneOf, Real
from gpal.estimators.base import GPClassifierMixin, check_fit_data, warn_ignored_noise
from gpal.estimators.params import SPARSE_GP_PARAMETERS
from gpal.registry import DEFAULT_NUM_INDUCING

__all__ = ["GPRPlattClassifier"]


class GPRPlattClassifier(GPClassifierMixin, BaseEstimator):
    """Least-squares GP classification: sparse GP regression on the labels, Platt-scaled (Milios et al., sec. 3.1).

    Fitted attributes: ``classes_``, ``n_features_in_``, ``standardizer_``, ``regression_``
    (``LabelRegression``: one output for two classes, else one per class), ``platt_``
    (``Platt``: a and b per output; ``ProbitPlatt``: a, for ``calibration="probit"``), ``history_``
    (the regression's final negative bound per row, its L-BFGS-B iterations and seconds).

    Parameters
    ----------
    calibration
        ``"platt"``: Platt's sigmoid of the regression mean, sigma(a f + b), one-vs-rest for C > 2;
        ``"probit"``: the form paper 003's authors coded for two classes, Phi(a (f - 0.5) / sqrt(1 + var f))
        with var f the latent predictive variance and no offset (two classes only).
    calibration_fraction
        share of each class's training rows held out to fit Platt's sigmoid
        (the paper's 20 %); the regression is fitted on the rest.
    num_inducing
        inducing inputs, k-means centres (kept fixed, as in the paper).
    inducing_rows
        the rows the k-means centres come from: ``"fit"``, the regression's own (the rows left after the
        calibration share); ``"all"``, every training row, as paper 003's authors' code computes one set for
        all its methods (with the same seed and M, the set the other families compute on these rows).
    kernel
        gpflow kernel shared by the outputs; ``None`` is squared exponential with one
        length scale per feature (ARD; the paper uses an isotropic one).
    max_iter
        L-BFGS-B iterations on the kernel and noise variance.
    standardize
        fit a ``gpal.data.standardizer.Standardizer`` on the training inputs.
    scaling
        the standardiser's map: "zscore" (mean 0, unit spread) or "range" (each feature's training range onto
        [-1, 1], as paper 003's authors scale their inputs).
    random_state
        seeds the calibration split and the k-means initialisation (an integer seed, None or a numpy generator, as scikit-learn's).
    progress
        accepted for a common interface; the fit shows no bar.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal.estimators.gpr_platt import GPRPlattClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2))
    >>> y = np.where(X[:, 0] > 0.5, "fsrq", np.where(X[:, 0] < -0.5, "bll", "psr"))
    >>> clf = GPRPlattClassifier(num_inducing=5, max_iter=20).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape, clf.platt_.a.shape
    ((2, 3), (3,))
    """

    saved_format = "gpal.GPRPlattClassifier"  # the ``format`` of its saved folders
    saved_version = 2  # 2: the regression's variance matrix and the calibration option
    _fitted_attribute = "platt_"
    _parameters = {
        **SPARSE_GP_PARAMETERS,
        "calibration": OneOf(("platt", "probit")),
        "calibration_fraction": Real(0, 1, low_open=True, high_open=True),
        "inducing_rows": OneOf(("fit", "all")),
        "max_iter": Integer(1),
    }

    def __init__(
        self,
        *,
        calibration: str = "platt",
        calibration_fraction: float = 0.2,
        num_inducing: int = DEFAULT_NUM_INDUCING,
        inducing_rows: str = "fit",
        kernel: Any = None,
        max_iter: int = 1000,
        standardize: bool = True,
        scaling: str = "zscore",
        random_state: Any = 0,
        progress: bool = False,
    ):
        self._store_params(locals())

    # ------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any = None, X_var: Any = None) -> "GPRPlattClassifier":
        """Fit on arrays ``X`` (n, d) and labels ``y`` (n,), or on a ``NoisyDataset``; ``X_var`` is ignored.

        Returns
        -------
        GPRPlattClassifier
            ``self``, fitted.
        """
        self._start_fit(X)
        data = check_fit_data(X, y, X_var, owner=type(self).__name__)
        warn_ignored_noise(data.X_var, "GPRPlattClassifier")
        from gpal.data.splits import holdout_per_class
        from gpal.models.families.gpr_platt import Platt, ProbitPlatt, fit_platt, fit_probit_platt, label_targets
        from gpal.training.collapsed import fit_label_regression

        C = len(data.classes)
        if self.calibration == "probit" and C != 2:
            raise ValueError(f"GPRPlattClassifier(calibration='probit') is paper 003's (Milios et al. 2018) two-class "
                             f"form; these labels have {C} classes: use calibration='platt' (one-vs-rest sigmoids, "
                             "as the authors' code on more classes)")
        standardizer, Xs, _ = self._standardize_fit(data)
        fit_rows, cal_rows = holdout_per_class(data.y, float(self.calibration_fraction),
                                               np.random.default_rng([self.random_seed_, 3]),
                                               "GPR + Platt holds out a calibration share",
                                               "every class needs at least 2")
        kernel, Z = self._sparse_start(Xs if self.inducing_rows == "all" else Xs[fit_rows], kernel_rows=Xs[fit_rows])
        start = time.perf_counter()
        regression, result = fit_label_regression(kernel, Z, Xs[fit_rows], label_targets(data.y[fit_rows], C),
                                                  int(self.max_iter))
        seconds = time.perf_counter() - start
        indicators = label_targets(data.y[cal_rows], C)
        probit = self.calibration == "probit"
        scores = (ProbitPlatt if probit else Platt).scores(regression, Xs[cal_rows])
        if probit:
            platt: Platt | ProbitPlatt = ProbitPlatt(np.array([fit_probit_platt(scores[:, 0], indicators[:, 0])]))
        else:
            a, b = zip(*(fit_platt(scores[:, k], indicators[:, k]) for k in range(scores.shape[1])))
            platt = Platt(np.array(a), np.array(b))
        self._set_fitted(data.classes, Xs.shape[1], standardizer)
        self.regression_ = regression
        self.platt_ = platt
        self.history_ = {"neg_bound_per_row": float(result.fun), "n_iter": int(result.nit), "seconds": seconds}
        return self

    @property
    def n_iter_(self) -> int:
        """L-BFGS-B iterations the regression's fit ran (at most ``max_iter``)."""
        self._require_fitted()
        return int(self.history_["n_iter"])

    # --------------------------------------------------------------- predict
    def predict_proba(self, X: Any, X_var: Any = None) -> np.ndarray:
        """(n, C) probabilities, columns as ``classes_``: the calibration of the regression (one-vs-rest, normalised).

        Returns
        -------
        numpy.ndarray
            (n, C) probabilities, rows summing to 1.
        """
        Xs = self._exact_inputs(X, X_var)
        p = self.platt_.probability(self.platt_.scores(self.regression_, Xs))
        if len(self.classes_) == 2:
            return np.column_stack([1.0 - p[:, 0], p[:, 0]])
        return p / p.sum(axis=1, keepdims=True)

    # ------------------------------------------------------------- save/load
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        from gpal.models.families.gpr_platt import Platt
        from gpal.models.state import kernel_state

        self._check_fitted()
        reg = self.regression_
        params, arrays = self._params_state("kernel_template/")
        kernel_config, kernel_arrays = kernel_state(reg.kernel, "kernel/")
        arrays.update({"Z": reg.Z, "weights": reg.weights, "offset": reg.offset,
                       "variance_weights": reg.variance_weights, "platt_a": self.platt_.a, **kernel_arrays})
        if isinstance(self.platt_, Platt):
            arrays["platt_b"] = self.platt_.b
        config = {"params": params, **self._fitted_state(), "kernel": kernel_config,
                  "noise_variance": reg.noise_variance, "history": self.history_}
        return config, arrays

    @classmethod
    def from_state(cls, config: dict[str, Any], arrays: dict[str, np.ndarray]) -> "GPRPlattClassifier":
        from gpal.models.families.gpr_platt import LabelRegression, Platt, ProbitPlatt
        from gpal.models.state import kernel_from_state

        clf = cls(**cls._params_from_state(config["params"], arrays, "kernel_template/"))
        kernel = kernel_from_state(config["kernel"], arrays, "kernel/")
        clf.regression_ = LabelRegression(kernel, arrays["Z"], arrays["weights"], arrays["offset"],
                                          float(config["noise_variance"]), arrays["variance_weights"])
        clf.platt_ = (ProbitPlatt(arrays["platt_a"]) if clf.calibration == "probit"
                      else Platt(arrays["platt_a"], arrays["platt_b"]))
        clf._restore_fitted_state(config)
        clf.history_ = dict(config["history"])
        return clf
