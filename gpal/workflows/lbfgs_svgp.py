"""Paper 003's GPC as its authors train it: the sparse variational GP's ELBO over every training row, by L-BFGS-B.

dirichletGPC's ``evaluate_vgp`` (``src/evaluation.py``) fits GPflow's SVGP with ``ScipyOptimizer``: full-batch
L-BFGS-B on the ELBO until scipy's convergence test stops it.  This is gpal's SVGP (the same model, likelihood,
inducing inputs and kernel as the workflow's ``svgp-`` methods) built untrained by ``NoisyGPClassifier`` and then
optimised the same way, its iterations capped by ``max_iter``.  A Monte Carlo ELBO (the softmax's) is evaluated
with one fixed set of draws for the whole fit, so that L-BFGS-B sees one deterministic function (GPflow 1 drew anew
at each evaluation, which a line search only tolerates).
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

__all__ = ["LbfgsSVGPClassifier"]

#: The loss L-BFGS-B is shown where the ELBO cannot be evaluated (a failed Cholesky): large, so its line search
#: backs off (`gpal.training.lbfgs.make_objective`).
_FAILED_LOSS = 1e10


class LbfgsSVGPClassifier:
    """A sparse variational GP classifier fitted by full-batch L-BFGS-B on its ELBO (paper 003's GPC training).

    Parameters
    ----------
    likelihood, likelihood_options, num_inducing, kernel, train_inducing, share_kernel_and_inducing, scaling
        ``NoisyGPClassifier``'s, for the model that is optimised.
    max_iter
        L-BFGS-B's iteration cap; it stops sooner when scipy's convergence test is met (``converged_``).
    random_state
        seeds k-means and the ELBO's Monte Carlo draws.
    progress
        accepted for a common interface; the fit shows no bar (L-BFGS-B runs inside scipy), so True warns.

    Fitted attributes: ``classes_``, ``estimator_`` (the ``NoisyGPClassifier`` holding the optimised model),
    ``n_iter_``, ``converged_``, ``history_`` (scipy's message, the final loss per row, the seconds).
    """

    def __init__(self, *, likelihood: str = "softmax", likelihood_options: dict | None = None,
                 num_inducing: int = 50, kernel: Any = None, train_inducing: bool = True,
                 share_kernel_and_inducing: bool = False, scaling: str = "zscore", max_iter: int = 1000,
                 random_state: int = 0, progress: bool = False):
        self.likelihood, self.likelihood_options = likelihood, dict(likelihood_options or {})
        self.num_inducing, self.kernel, self.train_inducing = int(num_inducing), kernel, bool(train_inducing)
        self.share_kernel_and_inducing = bool(share_kernel_and_inducing)
        self.scaling, self.max_iter, self.random_state = scaling, int(max_iter), int(random_state)
        self.progress = bool(progress)
        if self.progress:
            warnings.warn("LbfgsSVGPClassifier shows no progress bar (L-BFGS-B runs inside scipy): progress=True is "
                          "ignored", UserWarning, stacklevel=2)
        if self.max_iter < 1:
            raise ValueError(f"max_iter must be a positive number of L-BFGS-B iterations; got {max_iter!r}")
        self._estimator(0).validate_params()  # a bad setting is refused when made, as the workflow checks it

    def __repr__(self) -> str:
        return (f"LbfgsSVGPClassifier(likelihood={self.likelihood!r}, likelihood_options={self.likelihood_options!r}, "
                f"num_inducing={self.num_inducing}, kernel={self.kernel!r}, train_inducing={self.train_inducing}, "
                f"share_kernel_and_inducing={self.share_kernel_and_inducing}, scaling={self.scaling!r}, "
                f"max_iter={self.max_iter})")

    def _estimator(self, seed: int) -> Any:
        from gpal.estimators.noisy_gp import NoisyGPClassifier

        return NoisyGPClassifier(input_noise="none", likelihood=self.likelihood,
                                 likelihood_options=self.likelihood_options, num_inducing=self.num_inducing,
                                 kernel=self.kernel, train_inducing=self.train_inducing,
                                 share_kernel_and_inducing=self.share_kernel_and_inducing, scaling=self.scaling,
                                 epochs=0, early_stopping=False, random_state=seed)

    def fit(self, X: Any, y: Any, X_var: Any = None) -> "LbfgsSVGPClassifier":
        """Fit on ``X`` (n, d) and labels ``y``; ``X_var`` is refused, as the authors' GPC takes exact inputs."""
        import tensorflow as tf

        from gpal.training.lbfgs import make_objective, minimize

        if X_var is not None:
            raise ValueError("LbfgsSVGPClassifier takes exact inputs: X_var must be None")
        X = np.asarray(X, dtype=float)
        est = self._estimator(self.random_state).fit(X, y)  # the model at its start: k-means Z, kernel, q(u) = prior
        model = est.model_
        codes = np.searchsorted(est.classes_, np.asarray(y))
        Xs = est.standardizer_.transform_arrays(X)[0] if est.standardizer_ is not None else X
        n = Xs.shape[0]
        data = (tf.constant(Xs), tf.zeros_like(tf.constant(Xs)), tf.constant(codes, dtype=tf.int64),
                tf.range(n, dtype=tf.int64), tf.constant([self.random_state, 0], dtype=tf.int64))
        variables = list(model.trainable_variables)

        @tf.function
        def loss_and_gradients() -> tuple[tf.Tensor, list[tf.Tensor]]:
            with tf.GradientTape() as tape:
                loss = -model.elbo(*data, num_data=n) / n  # per row, so L-BFGS-B's tolerances mean the same at any n
            return loss, tape.gradient(loss, variables)

        start = time.perf_counter()
        result = minimize(make_objective(variables, loss_and_gradients, failure_value=_FAILED_LOSS), variables,
                          max_iter=self.max_iter, keep_best=True)
        self.classes_, self.estimator_ = est.classes_, est
        self.n_iter_, self.converged_ = int(result.nit), bool(result.success)
        self.history_ = {"message": str(result.message), "loss_per_row": float(result.fun),
                         "seconds": time.perf_counter() - start}
        return self

    def predict_proba(self, X: Any, X_var: Any = None) -> np.ndarray:
        """(n, C) class probabilities, the classes in ``classes_``'s order."""
        if X_var is not None:
            raise ValueError("LbfgsSVGPClassifier takes exact inputs: X_var must be None")
        return self.estimator_.predict_proba(np.asarray(X, dtype=float))
