"""Algorithm 1 of the logistic-bounds paper: alternate the analytic xi and q(u) updates with L-BFGS on theta.

vi-JJ-full skips the analytic stage: L-BFGS-B moves xi with theta.

Two schemes (``BoundOptimizer.run``): gpal's moves the kernel's unconstrained variables, restarts
L-BFGS-B every outer iteration (``max_fun`` evaluations, vi-JJ-full too) and starts vi-JJ-full's xi
from the prior; ``scheme="gplib"`` runs them as the paper's first author's gplib does (commit 37560b2,
``gplib/gpc/gpc_vi_jj.py``, ``gpc_vi_jj_full.py``): L-BFGS-B on the kernel's own values, sigma_f =
sqrt(variance) and the length scales, within gplib's box [1e-2, 1e3] (``gplib/covfun/se.py`` 22-23),
xi >= 1e-3 (``gpc_vi_jj_full.py`` 100); vi-JJ-full as one continuous L-BFGS-B of ``max_iter``
iterations from xi = 1 (98, 147-149); vi-JJ-hybrid from xi = 1, each outer iteration L-BFGS-B first,
then q and the analytic updates (110-139).

The bounds themselves (Jaakkola-Jordan, Taylor), the optimal q(u) for fixed xi and the
collapsed objective J^ are the model's (``gpal.models.families.logistic_bounds``); this
module only decides the order of the updates, packs the numerically optimised variables
for ``gpal.training.lbfgs`` and stops on convergence or Ctrl-C.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import gpflow
import numpy as np
import tensorflow as tf
from gpal.progress import progress_bar

from gpal.interrupts import check_stop
from gpal.models.compiled import instance_function
from gpal.models.families.logistic_bounds import (
    COEFFICIENTS,
    METHODS,
    LogisticBoundGP,
    Quadratic,
    WhitenedQ,
    collapsed_bound,
    marginals,
    optimal_q,
    quadrature_elbo,
    surrogate_elbo,
    update_xi,
)
from gpal.training import lbfgs
from gpal.training.svi import TrainingError

__all__ = ["RECORDS", "SCHEMES", "BoundOptimizer", "FitResult"]

#: How the hyperparameters are optimised (module docstring): gpal's, or the authors' gplib's.
SCHEMES = ("gpal", "gplib")
#: What a fit's callback sees after each outer iteration (`BoundOptimizer.run`): the current q, or gplib's record.
RECORDS = ("current", "authors")
# gplib's box on sigma_f and the length scales (se.py 22-23) and its lower bound on xi (gpc_vi_jj_full.py 100).
GPLIB_KERNEL_BOUNDS = (1e-2, 1e3)
GPLIB_XI_BOUNDS = (1e-3, None)

# The methods whose xi L-BFGS-B moves with theta (sec. 5.1's table); vi-JJ-full moves it only so.
NUMERICAL_XI = ("jj-hybrid", "jj-full")
# Stand-in for -J^/N where K_mm cannot be factorised (J^/N itself is O(1)).
_SINGULAR_PENALTY = 1e10


@dataclass
class FitResult:
    """Per outer iteration: the ELBO (11) by quadrature, the method's own objective J^; how it ended."""

    history: list[float] = field(default_factory=list)
    bound_history: list[float] = field(default_factory=list)
    converged: bool = False
    stopped_early: bool = False


class BoundOptimizer:
    """Algorithm 1 (vi-JJ, vi-JJ-hybrid, vi-Taylor) or vi-JJ-full for one ``LogisticBoundGP`` and one data set.

    ``y`` holds labels in {-1, +1}.  The numerically optimised variables are the
    kernel's trainable (unconstrained) variables, Z when ``train_inducing``, and
    xi for vi-JJ-hybrid and vi-JJ-full; ``objective`` maps them, packed in one
    vector, to -J^/N and its gradient by autodiff.
    """

    def __init__(self, model: LogisticBoundGP, X: np.ndarray, y: np.ndarray, method: str = "jj", train_inducing: bool = True):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {method!r}")
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.abs(y) == 1.0):
            raise ValueError("BoundOptimizer needs labels in {-1, +1}")
        self.model = model
        self.method = method
        self.X = tf.constant(X, dtype=tf.float64)
        self.y = tf.constant(y)
        self.n = len(y)
        self.xi = tf.Variable(np.zeros(self.n), name="xi")
        # By path, variances first (gplib packs sigma_f before the length scales); `_natural_scale` reads the names.
        named = [(path, p) for path, p in gpflow.utilities.parameter_dict(model.kernel).items() if p.trainable]
        named.sort(key=lambda item: not item[0].endswith("variance"))
        self._kernel_parameters = [p for _, p in named]
        self._variance_ids = {id(p) for path, p in named if path.endswith("variance")}
        self.variables = [p.unconstrained_variable for p in self._kernel_parameters]
        if train_inducing:
            self.variables.append(model.Z)
        if method in NUMERICAL_XI:
            self.variables.append(self.xi)
        self._coefficients = COEFFICIENTS[method]
        graphs = {
            "state": self._state_graph,
            "update_xi": self._update_xi_graph,
            "update_q": self._update_q_graph,
            "analytic_updates": self._analytic_updates_graph,
            "value_and_gradient": self._value_and_gradient_graph,
        }
        self._compiled = {name: instance_function(fn) for name, fn in graphs.items()}

    # ------------------------------------------------------------ quantities
    def coefficients(self) -> Quadratic:
        return self._coefficients(tf.convert_to_tensor(self.xi), self.y)

    def _state_graph(self) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        proj, quad, q = self.model.project(self.X), self.coefficients(), self.model.q
        return collapsed_bound(proj, quad), surrogate_elbo(proj, q, quad), quadrature_elbo(proj, q, self.y)

    def bound(self) -> float:
        """J^(theta, xi): the JJ lower bound (Taylor: approximation) at the optimal q for the current xi."""
        return float(self._compiled["state"]()[0])

    def surrogate_elbo(self) -> float:
        """J(q, xi, theta) at the model's current q (equals ``bound`` right after ``update_q``)."""
        return float(self._compiled["state"]()[1])

    def elbo(self) -> float:
        """The ELBO (11) of the current q by quadrature."""
        return float(self._compiled["state"]()[2])

    # ------------------------------------------------------- analytic updates
    def _assign_q(self, q: WhitenedQ) -> None:
        self.model.q_mean.assign(q.mean)
        self.model.q_sqrt.assign(q.sqrt)

    def _update_xi_graph(self) -> None:
        self.xi.assign(update_xi(self.method, *marginals(self.model.project(self.X), self.model.q)))

    def _update_q_graph(self) -> None:
        self._assign_q(optimal_q(self.model.project(self.X).A, self.coefficients()))

    def _analytic_updates_graph(self, n_updates: int) -> None:
        proj, q = self.model.project(self.X), self.model.q  # theta is fixed in stage 1: project once
        for _ in range(n_updates):
            xi = update_xi(self.method, *marginals(proj, q))
            q = optimal_q(proj.A, self._coefficients(xi, self.y))
        self.xi.assign(xi)
        self._assign_q(q)

    def update_xi(self) -> None:
        """xi <- xi(q) for the current q (eq. 14 / Taylor expansion point)."""
        self._compiled["update_xi"]()

    def update_q(self) -> None:
        """q <- q^(xi) for the current xi and theta."""
        self._compiled["update_q"]()

    def analytic_updates(self, n_updates: int) -> None:
        """Stage 1 of Algorithm 1: ``n_updates`` alternations of xi <- xi(q), q <- q^(xi)."""
        if n_updates < 1:
            raise ValueError(f"n_updates must be >= 1; got {n_updates}")
        self._compiled["analytic_updates"](int(n_updates))

    # ------------------------------------------------------------ L-BFGS-B
    def _value_and_gradient_graph(self) -> tuple[tf.Tensor, list[tf.Tensor]]:
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(self.variables)
            loss = -collapsed_bound(self.model.project(self.X), self.coefficients()) / self.n
        return loss, tape.gradient(loss, self.variables, unconnected_gradients=tf.UnconnectedGradients.ZERO)

    def get_vector(self) -> np.ndarray:
        """The optimised variables packed in one vector (``gpal.training.lbfgs.pack``)."""

        return lbfgs.pack(self.variables)

    def objective(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """-J^/N and its gradient at the packed variables ``x`` (left assigned).

        Where the Cholesky of K_mm fails (an error or NaNs, by TF version and device) it returns
        ``_SINGULAR_PENALTY`` with a zero gradient: L-BFGS-B's line search
        backtracks from a large finite value but gives up at inf.
        """

        return lbfgs.make_objective(self.variables, self._compiled["value_and_gradient"], failure_value=_SINGULAR_PENALTY)(x)

    def lbfgs_step(self, max_fun: int) -> None:
        """Stage 2: L-BFGS-B on J^ with at most ``max_fun`` evaluations, keeping the best point evaluated.

        scipy may stop on its evaluation limit at an untried line-search point;
        returning the best evaluated point (the start is evaluated first) keeps
        J^ from decreasing.
        """

        if self.variables:
            lbfgs.minimize(self.objective, self.variables, max_fun=max_fun, keep_best=True)

    # ---------------------------------------------------- gplib's L-BFGS-B
    def _natural_scale(self, p) -> bool:
        """A variance is optimised as its square root (gplib's sigma_f), any other value as itself."""
        return id(p) in self._variance_ids

    def natural_vector(self) -> np.ndarray:
        """The kernel's own values (sqrt of a variance), then Z and xi as they are."""
        parts = [np.ravel(np.sqrt(p.numpy()) if self._natural_scale(p) else p.numpy()) for p in self._kernel_parameters]
        return np.concatenate(parts + [np.ravel(v.numpy()) for v in self.variables[len(self._kernel_parameters):]])

    def natural_bounds(self) -> list[tuple[float | None, float | None]]:
        """gplib's box: the kernel's values in [1e-2, 1e3], xi >= 1e-3, Z free."""
        bounds = [GPLIB_KERNEL_BOUNDS] * sum(int(np.prod(p.shape)) for p in self._kernel_parameters)
        for v in self.variables[len(self._kernel_parameters):]:
            bounds += [GPLIB_XI_BOUNDS if v is self.xi else (None, None)] * int(np.prod(v.shape))
        return bounds

    def _assign_natural(self, x: np.ndarray) -> None:
        start = 0
        for p in self._kernel_parameters:
            size = int(np.prod(p.shape))
            value = x[start : start + size].reshape(p.shape)
            p.assign(value**2 if self._natural_scale(p) else value)
            start += size
        lbfgs.unpack(self.variables[len(self._kernel_parameters):], x[start:])

    def natural_objective(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """-J^/N and its gradient in the kernel's own values (chain rule through each parameter's transform)."""
        self._assign_natural(x)
        f, g = self.objective(lbfgs.pack(self.variables))
        if f == _SINGULAR_PENALTY:
            return f, np.zeros_like(x)
        start, g = 0, g.copy()
        for p in self._kernel_parameters:
            size = int(np.prod(p.shape))
            u = p.unconstrained_variable
            dvalue_du = np.ravel(np.exp(p.transform.forward_log_det_jacobian(u, event_ndims=0).numpy())) \
                if p.transform is not None else np.ones(size)
            dvalue_dx = 2.0 * x[start : start + size] if self._natural_scale(p) else np.ones(size)
            g[start : start + size] *= dvalue_dx / dvalue_du
            start += size
        return f, g

    def natural_lbfgs(self, max_iter: int | None = None, max_fun: int | None = None,
                      callback: Callable[[np.ndarray], None] | None = None) -> None:
        """gplib's L-BFGS-B: on `natural_vector` within `natural_bounds`, left at scipy's answer."""
        import scipy.optimize

        options = {"maxiter": int(max_iter)} if max_iter is not None else {}
        if max_fun is not None:
            options["maxfun"] = int(max_fun)
        result = scipy.optimize.minimize(self.natural_objective, self.natural_vector(), jac=True, method="L-BFGS-B",
                                         bounds=self.natural_bounds(), options=options, callback=callback)
        self._assign_natural(result.x)

    # --------------------------------------------------------------- the loop
    def run(
        self,
        max_iter: int = 100,
        n_updates: int = 3,
        max_fun: int = 5,
        tol: float = 1e-6,
        progress: bool = False,
        callback: Callable[[int, float], bool | None] | None = None,
        scheme: str = "gpal",
        record: str = "current",
    ) -> FitResult:
        """Algorithm 1 from q = prior, until |delta J^| <= tol |J^| or ``max_iter`` outer iterations.

        vi-JJ-full's outer iteration is the L-BFGS-B stage alone, from xi of eq. (14) under
        the prior (xi_i^2 = k_ii) rather than xi = 0, where every lambda(xi) is 1/8 whatever
        the kernel.  ``callback(iteration, bound)``, if given, runs after each outer iteration
        with q at q^(xi) for the current theta; returning False stops (``stopped_early``).
        Ctrl-C stops after restoring the best hyperparameters of the interrupted
        step.  q is left at q^(xi) for the final theta.  Raises
        ``TrainingError`` if J^ becomes non-finite.

        ``scheme="gplib"`` runs the authors' scheme (module docstring); vi-JJ-full's iterations are
        then those of its one L-BFGS-B run, each recorded as an outer iteration.

        ``record`` is what the callback sees.  "current" (gpal's): q^(xi) for the current theta.
        "authors": what gplib records (``gpc_vi_jj.py`` 84-97, ``gpc_vi_taylor.py`` 93-103). The
        callback first sees the start at iteration 0, with the initial theta and q = N(mu = 0,
        Sigma = I) in the space of u. After outer iteration ``it`` it sees iteration ``it + 1``.
        For vi-JJ and vi-Taylor that is the new theta with the q of the iteration's analytic stage,
        one step stale and held fixed in u.  For vi-JJ-hybrid and vi-JJ-full it is the current q.
        The training and its histories are the same either way.
        """
        if scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {list(SCHEMES)}; got {scheme!r}")
        if record not in RECORDS:
            raise ValueError(f"record must be one of {list(RECORDS)}; got {record!r}")
        self._authors_record, self._stale = record == "authors", None
        self.model.q_mean.assign(tf.zeros_like(self.model.q_mean))
        self.model.q_sqrt.assign(tf.eye(self.model.q_sqrt.shape[0], dtype=tf.float64))
        full = self.method == "jj-full"
        if self._authors_record and callback is not None:
            M = self.model.q_mean.shape[0]
            if self._see_q(callback, 0, np.zeros(M), np.eye(M)) is False:
                return FitResult(stopped_early=True)
        if scheme == "gplib":
            return self._run_gplib(int(max_iter), int(n_updates), int(max_fun), progress, callback)
        if full:
            self.update_xi()
        result = FitResult()
        bar = progress_bar(range(int(max_iter)), disable=not progress, desc=f"vi-{self.method}", unit="iter")
        try:
            for it in bar:
                check_stop()
                if not full:
                    self.analytic_updates(n_updates)
                    self._keep_stale()
                self.lbfgs_step(max_fun)
                self.update_q()
                previous = result.bound_history[-1] if result.bound_history else None
                if self._record(result, it, bar, callback):
                    break
                if previous is not None and abs(result.bound_history[-1] - previous) <= tol * abs(previous):
                    result.converged = True
                    break
        except KeyboardInterrupt:
            result.stopped_early = True
            self.update_q()
        finally:
            bar.close()
        return result

    def _record(self, result: FitResult, it: int, bar, callback) -> bool:
        """Append the state after outer iteration ``it``; True when the callback asks to stop."""
        bound, _, elbo = (float(v) for v in self._compiled["state"]())
        if not (np.isfinite(bound) and np.isfinite(elbo)):
            raise TrainingError(
                f"vi-{self.method}: the objective became non-finite ({bound}, ELBO {elbo}) at outer "
                f"iteration {it}; check the inputs or use a larger jitter"
            )
        result.bound_history.append(bound)
        result.history.append(elbo)
        bar.set_postfix(elbo=f"{elbo:.5g}", refresh=False)
        if callback is None:
            return False
        if not self._authors_record:
            stop = callback(it, bound) is False
        elif self._stale is not None:
            stop = self._see_q(callback, it + 1, *self._stale) is False
        else:
            stop = callback(it + 1, bound) is False
        if stop:
            result.stopped_early = True
        return stop

    # ------------------------------------------------ gplib's record of q
    def _kmm_cholesky(self) -> np.ndarray:
        Z = tf.convert_to_tensor(self.model.Z)
        K = self.model.kernel(Z).numpy() + self.model.jitter * np.eye(Z.shape[0])
        return np.linalg.cholesky(K)

    def u_space_q(self) -> tuple[np.ndarray, np.ndarray]:
        """q(u) = N(mu, Sigma) of the whitened q(v) at the current kernel: mu = L m, Sigma = L S S^T L^T."""
        L, S = self._kmm_cholesky(), self.model.q_sqrt.numpy()
        LS = L @ S
        return L @ self.model.q_mean.numpy(), LS @ LS.T

    def set_u_space_q(self, mu: np.ndarray, Sigma: np.ndarray) -> None:
        """Whiten q(u) = N(mu, Sigma) with the current kernel: m = L^-1 mu, S = chol(L^-1 Sigma L^-T)."""
        from scipy.linalg import solve_triangular

        L = self._kmm_cholesky()
        W = solve_triangular(L, solve_triangular(L, Sigma, lower=True).T, lower=True)
        self.model.q_mean.assign(solve_triangular(L, mu, lower=True))
        self.model.q_sqrt.assign(np.linalg.cholesky((W + W.T) / 2.0))

    def _keep_stale(self) -> None:
        """vi-JJ and vi-Taylor under ``record="authors"``: keep the analytic stage's q(u) for the next record."""
        if self._authors_record and self.method in ("jj", "taylor"):
            self._stale = self.u_space_q()

    def _see_q(self, callback, it: int, mu: np.ndarray, Sigma: np.ndarray) -> bool | None:
        """The callback at q(u) = N(mu, Sigma) under the current kernel, then the model's own q back."""
        kept = self.model.q_mean.numpy(), self.model.q_sqrt.numpy()
        try:
            self.set_u_space_q(mu, Sigma)
            return callback(it, self.bound())
        finally:
            self.model.q_mean.assign(kept[0])
            self.model.q_sqrt.assign(kept[1])

    def _run_gplib(self, max_iter: int, n_updates: int, max_fun: int, progress: bool, callback) -> FitResult:
        """`run` under gplib's scheme (module docstring)."""
        if self.method in NUMERICAL_XI:
            self.xi.assign(tf.ones_like(self.xi))
        result = FitResult()
        bar = progress_bar(range(max_iter), disable=not progress, desc=f"vi-{self.method} (gplib)", unit="iter")
        try:
            if self.method == "jj-full":
                count = iter(range(max_iter))

                def each_iteration(x: np.ndarray) -> None:
                    check_stop()
                    self._assign_natural(x)
                    self.update_q()
                    bar.update()
                    if self._record(result, next(count), bar, callback):
                        raise _Stop

                try:
                    self.natural_lbfgs(max_iter=max_iter, callback=each_iteration)
                    result.converged = len(result.history) < max_iter
                except _Stop:
                    pass
                self.update_q()
                return result
            for it in bar:
                check_stop()
                if self.method == "jj-hybrid":
                    self.natural_lbfgs(max_fun=max_fun)
                    self.update_q()
                    self.analytic_updates(n_updates)
                else:
                    self.analytic_updates(n_updates)
                    self._keep_stale()
                    self.natural_lbfgs(max_fun=max_fun)
                    self.update_q()
                if self._record(result, it, bar, callback):
                    break
        except KeyboardInterrupt:
            result.stopped_early = True
            self.update_q()
        finally:
            bar.close()
        return result


class _Stop(Exception):
    """Raised in scipy's callback to end gplib's vi-JJ-full run when the user's callback says stop."""
