"""Priors over the noiseless inputs of the noisy-input models, and the posteriors p(x | x~) they give.

The paper's prior is broad, N(0, s I) with s = 1000 (paper 001 eq. 12-13): a source is then
averaged over N(x~, V) as if sources were spread uniformly, so a faint source with wide error
bars is blurred far outside the populated region, towards the class prior.  Astronomers answer
heteroscedastic errors by deconvolving against the population instead (extreme deconvolution,
Bovy, Hogg & Roweis 2011): fit a Gaussian mixture p_pop(x) = sum_k w_k N(x | mu_k, Sigma_k) to
the observed inputs *with their error covariances*, so that it describes the noiseless inputs,
and use it as the prior.  The posterior of a source is then itself a mixture,

    p(x | x~) = sum_k r_k N(x | m_k, S_k),   r_k ∝ w_k N(x~ | mu_k, Sigma_k + V),
    m_k = x~ - V T_k^-1 (x~ - mu_k),          S_k = V - V T_k^-1 V = Sigma_k T_k^-1 V,   T_k = Sigma_k + V,

written so that a dimension with V_jj = 0 (an exact feature) keeps x_j = x~_j exactly.

Two priors share one interface, used by the Gaussian q(x_i) strategies (``input_noise.py``):
``base`` (where q(x_i) starts), ``neg_kl`` (the ELBO's -KL(q(x_i) || p(x_i)) term, in closed form
for the broad prior and by the reparameterised draw for the mixture) and ``sample`` (draws of
p(x* | x~*) for prediction).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import threading
from collections import OrderedDict
from typing import Any, Iterator

import numpy as np
import tensorflow as tf

from gpal.registry import BROAD_PRIOR_VARIANCE, ROWS_PER_PRIOR_COMPONENT

__all__ = ["BroadPrior", "MixturePrior", "check_prior_rows", "fit_mixture_prior", "prior_from_config"]

_LOG_2PI = math.log(2.0 * math.pi)
# Added to S_k's diagonal before its Cholesky factor: S_k is exactly singular in the exact
# dimensions (whose draws are then replaced by x~) and can round to slightly indefinite.
_SAMPLE_JITTER = 1e-10


class BroadPrior:
    """N(0, s I): the paper's prior; its posterior is N(s x~ / (V + s), V s / (V + s)) per dimension."""

    kind = "broad"

    def __init__(self, variance: float = BROAD_PRIOR_VARIANCE):
        if not variance > 0:
            raise ValueError(f"prior_variance must be > 0; got {variance}")
        self.variance = float(variance)

    def posterior(self, X: tf.Tensor, V: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """Mean and variance of p(x | x~) per dimension; V = 0 gives exactly N(x~, 0)."""
        s = tf.cast(self.variance, X.dtype)
        return s * X / (V + s), V * s / (V + s)

    def base(self, X: tf.Tensor, V: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """Where q(x_i) starts: x~ with the posterior variance (the shrinkage s / (V + s) of the mean is negligible)."""
        return X, self.posterior(X, V)[1]

    def neg_kl(self, q_mean: tf.Tensor, q_var: tf.Tensor, sample: tf.Tensor, noisy: tf.Tensor) -> tf.Tensor:
        """-KL(N(q_mean, q_var) || N(0, s)) summed over the noisy dimensions of each row, (B,)."""
        s = tf.cast(self.variance, q_mean.dtype)
        safe_var = tf.where(noisy, q_var, tf.ones_like(q_var))
        kl = 0.5 * ((safe_var + tf.square(q_mean)) / s - 1.0 + tf.math.log(s) - tf.math.log(safe_var))
        return -tf.reduce_sum(tf.where(noisy, kl, tf.zeros_like(kl)), axis=1)

    def sample(self, X: tf.Tensor, V: tf.Tensor, noise: tf.Tensor, uniform: tf.Tensor) -> tf.Tensor:
        """Draws (S, N, d) of p(x | x~) from standard normals ``noise`` (S, 1, d) shared by the rows."""
        mean, var = self.posterior(X, V)
        return mean[None] + tf.sqrt(var)[None] * noise

    def get_config(self) -> dict[str, Any]:
        return {"kind": self.kind, "variance": self.variance}


# A mixture prior's arrays that compiled functions read (`MixturePrior.arrays`): the mixture and log_prob's
# whitening, computed once in numpy.
_ARRAYS = ("weights", "means", "covariances", "_whiten", "_whitened_means", "_log_det")


class MixturePrior:
    """A Gaussian mixture over the noiseless inputs (fitted by ``fit_mixture_prior``), read by compiled code from
    variables of its values."""

    kind = "mixture"

    def __init__(self, weights: Any, means: Any, covariances: Any):
        weights = np.asarray(weights, dtype=np.float64)
        means = np.asarray(means, dtype=np.float64)
        covariances = np.asarray(covariances, dtype=np.float64)
        K = weights.shape[0] if weights.ndim == 1 else -1
        if K < 1 or means.ndim != 2 or means.shape[0] != K or covariances.shape != (K, means.shape[1], means.shape[1]):
            raise ValueError(
                f"a mixture prior needs weights (K,), means (K, d) and covariances (K, d, d); got shapes "
                f"{weights.shape}, {means.shape}, {covariances.shape}"
            )
        if not (np.all(np.isfinite(weights)) and np.all(weights > 0) and abs(weights.sum() - 1.0) < 1e-6):
            raise ValueError(f"mixture weights must be positive and sum to 1; got {weights}")
        if not (np.all(np.isfinite(means)) and np.all(np.isfinite(covariances))):
            raise ValueError("mixture means and covariances must be finite")
        try:
            chol = np.linalg.cholesky(covariances)
        except np.linalg.LinAlgError:
            raise ValueError("mixture covariances must be symmetric positive definite") from None
        self.weights, self.means, self.covariances = weights, means, covariances
        # log_prob's constants, from the factor the check above computed: each component's whitening
        # W_k = chol(Sigma_k)^-1 (lower triangular), W_k mu_k, and log det Sigma_k.
        self._whiten = np.linalg.inv(chol)
        self._whitened_means = np.einsum("kde,ke->kd", self._whiten, means)
        self._log_det = 2.0 * np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
        self._held = self._variables()

    def _variables(self) -> dict[str, tf.Variable]:
        """The arrays as variables, which compiled functions read: a function traced on one model's prior then
        serves every prior of its shape (``gpal.training.signatures.trace_key`` leaves the values out), where
        constants made each fit of the default estimator trace its step and predictor anew."""
        return {name: tf.Variable(getattr(self, name), trainable=False, name=f"prior_{name.lstrip('_')}")
                for name in _ARRAYS}

    def arrays(self) -> dict[str, np.ndarray]:
        """What compiled functions read of the prior, by name."""
        return {name: getattr(self, name) for name in _ARRAYS}

    def tensors(self) -> dict[str, Any]:
        """The variables compiled functions read (``held``), by name: pass them to a function traced on another
        prior of this shape, which reads them through ``reading``."""
        return dict(self._held)

    def assign(self, other: "MixturePrior") -> None:
        """Take ``other``'s values (a prior of this shape): a template's prior lent to another model."""
        for name, value in other.arrays().items():
            if value.shape != getattr(self, name).shape:
                raise ValueError(f"a prior of shape {self.means.shape} cannot take the values of one of shape "
                                 f"{other.means.shape}")
            setattr(self, name, value)
            self._held[name].assign(value)

    @contextlib.contextmanager
    def reading(self, tensors: dict[str, Any]) -> Iterator[None]:
        """While inside, compiled code reads ``tensors`` (``tensors()``' names) in place of this prior's variables."""
        held, self._held = self._held, dict(tensors)
        try:
            yield
        finally:
            self._held = held

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_held"}  # variables are remade, not pickled

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._held = self._variables()

    def _read(self, name: str, dtype: tf.DType) -> tf.Tensor:
        return tf.cast(tf.convert_to_tensor(self._held[name]), dtype)

    def _joint(self, X: tf.Tensor, V: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """log w_k N(x~ | mu_k, T_k) (B, K), T_k = Sigma_k + V, with chol(T_k) and T_k^-1 (x~ - mu_k)."""
        mu = self._read("means", X.dtype)
        Sigma = self._read("covariances", X.dtype)
        T = Sigma[None] + tf.linalg.diag(V)[:, None]  # (B, K, d, d)
        chol = tf.linalg.cholesky(T)
        diff = X[:, None, :] - mu[None]  # (B, K, d)
        solved = tf.linalg.cholesky_solve(chol, diff[..., None])[..., 0]  # T^-1 (x~ - mu)
        log_det = 2.0 * tf.reduce_sum(tf.math.log(tf.linalg.diag_part(chol)), axis=-1)
        d = tf.cast(tf.shape(X)[1], X.dtype)
        log_joint = (tf.math.log(self._read("weights", X.dtype))[None]
                     - 0.5 * (d * _LOG_2PI + log_det + tf.reduce_sum(diff * solved, axis=-1)))
        return log_joint, chol, solved

    def mahalanobis(self, X: tf.Tensor, V: tf.Tensor) -> tf.Tensor:
        """-2 log sum_k w_k exp(-D_k^2 / 2), D_k^2 = (x~ - mu_k)^T (Sigma_k + V)^-1 (x~ - mu_k), (B,).

        The distance of a measurement from the population in units of its spread plus the error
        bars.  For one component it is D^2, chi-squared with d degrees of freedom for sources
        of the population whatever their error bars; the density log p(x~ | V) also falls as the error
        bars widen (its normalisation), and so would rank faint sources as unusual for being faint.
        """
        log_joint, chol, _ = self._joint(X, V)
        d = tf.cast(tf.shape(X)[1], X.dtype)
        log_det = 2.0 * tf.reduce_sum(tf.math.log(tf.linalg.diag_part(chol)), axis=-1)
        return -2.0 * tf.reduce_logsumexp(log_joint + 0.5 * (d * _LOG_2PI + log_det), axis=1)

    def _components(self, X: tf.Tensor, V: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """Posterior log weights (B, K), means m_k (B, K, d) and covariances S_k (B, K, d, d)."""
        log_r, chol, solved = self._joint(X, V)
        log_r -= tf.reduce_logsumexp(log_r, axis=1, keepdims=True)
        Sigma = self._read("covariances", X.dtype)
        means = X[:, None, :] - V[:, None, :] * solved
        # S_k = V - V T^-1 V = Sigma_k T^-1 V: the product form has no difference to cancel, whether
        # an error bar is far below the population's spread or far above it.
        # (the solve and the product broadcast V over the components and Sigma over the rows themselves)
        T_inv_V = tf.linalg.cholesky_solve(chol, tf.linalg.diag(V)[:, None])
        covs = tf.linalg.matmul(Sigma[None], T_inv_V)
        return log_r, means, 0.5 * (covs + tf.linalg.matrix_transpose(covs))

    def posterior(self, X: tf.Tensor, V: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """Mean and per-dimension variance of the mixture posterior p(x | x~), each (B, d)."""
        log_r, means, covs = self._components(X, V)
        r = tf.exp(log_r)[..., None]
        mean = tf.reduce_sum(r * means, axis=1)
        var = tf.reduce_sum(r * (tf.linalg.diag_part(covs) + tf.square(means - mean[:, None])), axis=1)
        return mean, tf.maximum(var, 0.0) * tf.cast(V > 0, X.dtype)

    def base(self, X: tf.Tensor, V: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """Where q(x_i) starts: the moment-matched posterior, so that q needs no long walk to the population."""
        return self.posterior(X, V)

    def log_prob(self, x: tf.Tensor) -> tf.Tensor:
        """log p_pop(x) for rows x (B, d), (B,).

        Each component whitens by its inverse Cholesky factor W_k = chol(Sigma_k)^-1, computed once:
        W_k (x - mu_k) for all rows and components is one matrix product (B, d) x (d, K d), where a
        triangular solve per row and component is B K small ops in every training step.
        """
        K, d = self._whiten.shape[:2]
        W = tf.reshape(tf.transpose(self._read("_whiten", x.dtype), [2, 0, 1]), [d, K * d])  # (e, K d): W_k[d, e]
        white = tf.reshape(tf.linalg.matmul(x, W), [-1, K, d]) - self._read("_whitened_means", x.dtype)[None]
        log_det = self._read("_log_det", x.dtype)
        log_comp = -0.5 * (d * _LOG_2PI + log_det[None] + tf.reduce_sum(tf.square(white), axis=-1))
        return tf.reduce_logsumexp(tf.math.log(self._read("weights", x.dtype))[None] + log_comp, axis=1)

    def neg_kl(self, q_mean: tf.Tensor, q_var: tf.Tensor, sample: tf.Tensor, noisy: tf.Tensor) -> tf.Tensor:
        """One-draw estimate of -KL(q(x_i) || p_pop) = H(q) + E_q log p_pop(x), per row (B,).

        Unbiased at the reparameterised ``sample``.  p_pop is a density over all d dimensions;
        in the exact ones the draw is x~ itself, which adds a term no parameter moves, so the
        ELBO is right up to a constant and its gradients are exact.
        """
        safe_var = tf.where(noisy, q_var, tf.ones_like(q_var))
        entropy = 0.5 * (_LOG_2PI + 1.0 + tf.math.log(safe_var))
        return tf.reduce_sum(tf.where(noisy, entropy, tf.zeros_like(entropy)), axis=1) + self.log_prob(sample)

    def sample(self, X: tf.Tensor, V: tf.Tensor, noise: tf.Tensor, uniform: tf.Tensor) -> tf.Tensor:
        """Draws (S, N, d) of the mixture posterior: a component by inverse CDF of ``uniform`` (S, 1), then
        m_k + chol(S_k) z with ``noise`` (S, 1, d); both shared by the rows (common random numbers)."""
        log_r, means, covs = self._components(X, V)
        d = tf.shape(X)[1]
        chol = tf.linalg.cholesky(covs + _SAMPLE_JITTER * tf.eye(d, dtype=X.dtype))  # (N, K, d, d)
        cdf = tf.math.cumsum(tf.exp(log_r), axis=1)  # (N, K)
        last = tf.shape(cdf)[1] - 1
        k = tf.minimum(tf.reduce_sum(tf.cast(cdf[None] < uniform[:, :, None], tf.int32), axis=-1), last)  # (S, N)
        # Every component's draw from the shared normals, then the chosen one: (S, N, K, d) is K d values per
        # input draw, where gathering chol(S_k) per draw would hold d^2.  One GEMM, (S, d) x (d, N K d), writes
        # them in that layout (an einsum transposed its result, and a GEMM per row was slower still).
        n, K = tf.shape(X)[0], tf.shape(log_r)[1]
        factors = tf.reshape(tf.transpose(chol, [3, 0, 1, 2]), [d, -1])  # [e, (i K + k) d + j] = chol_ik[j, e]
        offsets = tf.reshape(tf.linalg.matmul(noise[:, 0, :], factors), [-1, n, K, d])
        chosen_means = tf.transpose(tf.gather(means, tf.transpose(k), axis=1, batch_dims=1), [1, 0, 2])
        draws = chosen_means + tf.gather(offsets, k, axis=2, batch_dims=2)  # (S, N, d)
        return tf.where((V > 0)[None], draws, X[None])

    def get_config(self) -> dict[str, Any]:
        return {"kind": self.kind, "weights": self.weights.tolist(), "means": self.means.tolist(),
                "covariances": self.covariances.tolist()}


def check_prior_rows(n: int, n_components: int, min_per_component: int = ROWS_PER_PRIOR_COMPONENT) -> None:
    """Refuse a mixture of more components than ``n`` rows can fit (``min_per_component`` each)."""
    if n_components < 1:
        raise ValueError(f"prior_components must be >= 1; got {n_components!r}")
    if n < n_components * min_per_component:
        raise ValueError(
            f"a {n_components}-component population prior needs at least {min_per_component} training rows per "
            f"component ({n_components * min_per_component}); got {n} rows: use fewer prior_components or "
            "input_prior='broad'"
        )


def fit_mixture_prior(X: np.ndarray, V: np.ndarray, n_components: int, random_state: int = 0, *,
                      max_iter: int = 30, tol: float = 1e-4, reg_covar: float = 1e-3,
                      min_per_component: int = ROWS_PER_PRIOR_COMPONENT) -> MixturePrior:
    """Extreme deconvolution (Bovy, Hogg & Roweis 2011): the Gaussian mixture of the noiseless inputs.

    Each observed row x~_i = x_i + e_i, e_i ~ N(0, diag V_i), x_i ~ p_pop; EM on the marginal
    likelihood prod_i sum_k w_k N(x~_i | mu_k, Sigma_k + V_i).  E step: responsibilities and
    each row's posterior moments b_ik, B_ik per component; M step: weights, means and
    covariances from those moments, plus ``reg_covar`` I (components cannot collapse onto a
    feature's floor value).  With V = 0 it is ordinary Gaussian-mixture EM.  Stops when the
    mean log-likelihood per row gains less than ``tol`` nats, or after ``max_iter`` steps: 30 classify
    as well as 100 on held-out and later labels, in a third of the time: the mixture only has to be
    broad where the sources are, not converged.  Initialised by k-means (one
    thread, as ``kmeans_inducing``, for the same result everywhere).  The n K small
    factorisations of a step run batched in TensorFlow (4x numpy's per-matrix LAPACK calls), of the
    dimensions that carry an error bar only (``_deconvolve``).
    A fit repeated on the same inputs and settings in one process is not run again.
    """
    X = np.asarray(X, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    n, d = X.shape
    K = int(n_components)
    check_prior_rows(n, K, min_per_component)
    if V.shape != X.shape or not np.all(np.isfinite(V)) or np.any(V < 0):
        raise ValueError(f"input variances for the population prior must be finite, >= 0 and shaped {X.shape}")
    key = (hashlib.sha256(X.tobytes() + V.tobytes()).hexdigest(), X.shape, K, int(random_state), int(max_iter),
           float(tol), float(reg_covar))
    with _FITTING_LOCK:
        fitting = _FITTING.setdefault(key, threading.Lock())
    with fitting:  # a second thread asking for the same fit waits for the first's, rather than running it again
        if key not in _FITTED:
            _FITTED[key] = _deconvolve(X, V, K, random_state, max_iter, tol, reg_covar)
            while len(_FITTED) > _FITTED_KEPT:
                _FITTED.popitem(last=False)
        fitted = _FITTED[key]
    with _FITTING_LOCK:
        _FITTING.pop(key, None)
    return MixturePrior(*(a.copy() for a in fitted))


#: The last few fits by their inputs and settings: the main job fits the model's prior and the outlier
#: score's density on the same standardised training rows, at once in two threads, and a fit is seconds of EM.
_FITTED: "OrderedDict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]]" = OrderedDict()
_FITTED_KEPT = 4
_FITTING: dict[tuple, threading.Lock] = {}
_FITTING_LOCK = threading.Lock()


def _deconvolve(X, V, K, random_state, max_iter, tol, reg_covar) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The EM of ``fit_mixture_prior`` on checked inputs: weights (normalised), means, covariances.

    Dimensions exact in every row (V = 0: a significance, a latitude) are observed without noise, so
    each row's posterior there is its value, and only the other dimensions need a per-row factorisation:
    the EM runs with the exact dimensions first, conditions on them per component, and factorises the
    (d - e)-square Schur complement per row and component instead of the d-square T_ik.
    """
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    d = X.shape[1]
    with threadpool_limits(limits=1):
        labels = KMeans(n_clusters=K, n_init=1, random_state=random_state).fit(X).labels_
    eye = np.eye(d)
    weights = np.array([np.mean(labels == k) for k in range(K)])
    means = np.stack([X[labels == k].mean(axis=0) for k in range(K)])
    covs = np.stack([np.cov(X[labels == k].T).reshape(d, d) if np.sum(labels == k) > 1 else eye for k in range(K)])
    exact = np.all(V == 0, axis=0)
    order = np.concatenate([np.flatnonzero(exact), np.flatnonzero(~exact)])  # exact dimensions first
    state = [tf.constant(a) for a in (weights, means[:, order], (covs + reg_covar * eye)[:, order][:, :, order])]
    X_t, V_t = tf.constant(X[:, order]), tf.constant(V[:, order][:, int(exact.sum()):])
    V_diag = tf.linalg.diag(V_t)
    previous = -np.inf
    for _ in range(max_iter):
        *state, mean_loglik = _deconvolution_step(X_t, V_diag, *state, tf.constant(reg_covar, tf.float64))
        if float(mean_loglik) - previous < tol:
            break
        previous = float(mean_loglik)
    weights, means, covs = (a.numpy() for a in state)
    back = np.argsort(order)
    return weights / weights.sum(), means[:, back], covs[:, back][:, :, back]


@tf.function(autograph=False, reduce_retracing=True)
def _deconvolution_step(X, V_diag, weights, means, covs, reg_covar):
    """One EM step of extreme deconvolution; returns the new (weights, means, covariances) and the
    mean log-likelihood per row under the old ones.

    ``V_diag`` (n, d - e, d - e): the noise variances of the last d - e dimensions as diagonal matrices, built once
    for every step; the first e dimensions of X are exact.  Per component, with Sigma = [[A, B],
    [B^T, C]] split there: x~_e ~ N(mu_e, A), and given it the rest is N(m_ik, G_k) with
    m_ik = mu_r + B^T A^-1 (x~_e - mu_e), G_k = C - B^T A^-1 B, observed with noise V_i: x~_r ~ N(m_ik, S_ik),
    S_ik = G_k + V_i.  The posterior of x_i is x~_e in the exact dimensions and, in the rest, mean
    m_ik + G_k S_ik^-1 (x~_r - m_ik) and covariance G_k - G_k S_ik^-1 G_k.
    """
    n, d = tf.shape(X)[0], tf.shape(X)[1]
    e = d - tf.shape(V_diag)[1]
    A, B, C = covs[:, :e, :e], covs[:, :e, e:], covs[:, e:, e:]
    chol_A = tf.linalg.cholesky(A)  # (K, e, e): per component, not per row
    A_inv_B = tf.linalg.cholesky_solve(chol_A, B)
    G = C - tf.linalg.matmul(B, A_inv_B, transpose_a=True)
    diff_e = tf.transpose(X[:, None, :e] - means[None, :, :e], [1, 0, 2])  # (K, n, e): per component, the rows
    A_inv_diff_e = tf.linalg.matrix_transpose(tf.linalg.cholesky_solve(chol_A, tf.linalg.matrix_transpose(diff_e)))
    m = means[:, None, e:] + tf.linalg.matmul(A_inv_diff_e, B)  # (K, n, d - e)
    chol_S = tf.linalg.cholesky(G[:, None] + V_diag[None])  # (K, n, d - e, d - e)
    # One triangular inverse per row and component serves every product with S_ik^-1 = L^-T L^-1 (a
    # small batched solve costs the same whatever its right-hand side, so solving once is four times cheaper); the
    # identity broadcast by the solve, not materialised per row and component.
    L_inv = tf.linalg.triangular_solve(chol_S, tf.eye(d - e, batch_shape=[1, 1], dtype=X.dtype))
    diff_r = X[None, :, e:] - m
    white_r = tf.linalg.matvec(L_inv, diff_r)  # L^-1 (x~_r - m_ik)
    S_inv_diff_r = tf.linalg.matvec(L_inv, white_r, transpose_a=True)
    log_det = (2.0 * tf.reduce_sum(tf.math.log(tf.linalg.diag_part(chol_A)), axis=-1)[:, None]
               + 2.0 * tf.reduce_sum(tf.math.log(tf.linalg.diag_part(chol_S)), axis=-1))
    mahalanobis = tf.reduce_sum(diff_e * A_inv_diff_e, axis=-1) + tf.reduce_sum(tf.square(white_r), axis=-1)
    log_p = tf.math.log(weights)[:, None] - 0.5 * (tf.cast(d, X.dtype) * _LOG_2PI + log_det + mahalanobis)  # (K, n)
    total = tf.reduce_logsumexp(log_p, axis=0)
    resp = tf.exp(log_p - total[None])  # (K, n)
    b = tf.concat([tf.broadcast_to(X[None, :, :e], tf.shape(diff_e)),
                   m + tf.linalg.matmul(S_inv_diff_r, G, transpose_b=True)], axis=-1)  # E[x_i | x~_i, k], (K, n, d)
    Nk = tf.reduce_sum(resp, axis=1) + 1e-12
    # sum_i r_ik Cov[x_i | x~_i, k] in the noisy block: N_k G_k - G_k (sum_i r_ik S_ik^-1) G_k, the sum one
    # product per component over the rows' weighted inverse factors
    weighted = tf.reshape(tf.sqrt(resp)[..., None, None] * L_inv, [tf.shape(resp)[0], -1, d - e])
    posterior_cov = Nk[:, None, None] * G - G @ tf.linalg.matmul(weighted, weighted, transpose_a=True) @ G
    new_means = tf.linalg.matvec(b, resp, transpose_a=True) / Nk[:, None]
    centred = b - new_means[:, None]
    spread = tf.linalg.matmul(resp[..., None] * centred, centred, transpose_a=True)
    spread += tf.pad(posterior_cov, [[0, 0], [e, 0], [e, 0]])
    new_covs = spread / Nk[:, None, None]
    new_covs = 0.5 * (new_covs + tf.linalg.matrix_transpose(new_covs)) + reg_covar * tf.eye(d, dtype=X.dtype)
    return Nk / tf.cast(n, X.dtype), new_means, new_covs, tf.reduce_mean(total)


def prior_from_config(config: dict[str, Any]) -> BroadPrior | MixturePrior:
    """Inverse of the priors' ``get_config``."""
    config = dict(config)
    kind = config.pop("kind", None)
    if kind == BroadPrior.kind:
        return BroadPrior(**config)
    if kind == MixturePrior.kind:
        return MixturePrior(**config)
    raise ValueError(f"unknown input prior {kind!r}; known: {[BroadPrior.kind, MixturePrior.kind]}")
