"""``LatentGPs``: the L sparse latent functions of a model, with their inducing points and whitened q(u).

It holds L independent latent functions f_c, each with its own kernel and M inducing points Z_c
(or, ``shared_by=L``, one kernel and one Z that every f_c uses, as paper 000's authors' GPflow 1 SVGP has them),
and a whitened Gaussian q(v_c) = N(m_c, S_c S_c^T) with u_c = chol(K_ZcZc) v_c, so that
p(v_c) = N(0, I).  It returns the marginals q(f_c(x)) = N(mu_c(x), nu_c(x)) at any inputs and
KL(q(v)||p(v)); it knows nothing of input noise or likelihoods, which ``NoisySVGP``
(`gpal.models.svgp`) and the augmented model (`gpal.models.families.augmented_logistic_softmax`)
put around it.
"""

from __future__ import annotations

from typing import Sequence

import gpflow
import numpy as np
import tensorflow as tf
from check_shapes import check_shapes
from gpflow.utilities import triangular

from gpal.models.sparse import (
    DEFAULT_JITTER,
    PredictiveFactors,
    Projection,
    cholesky_with_jitter,
    factored_marginals,
    predictive_factors,
    whiten,
    whitened_kl,
    whitened_marginals,
)

__all__ = ["LatentGPs"]


def _scaled_se(A: tf.Tensor, B: tf.Tensor, variances: tf.Tensor) -> tf.Tensor:
    """The squared-exponential kernel (L, M, N) between inputs already divided by their lengthscales, A (L, M, d)
    and B (L or 1, N, d), batched over the L latents: GPflow's arithmetic (squared distances by a GEMM)."""
    dist = -2 * tf.linalg.matmul(A, B, transpose_b=True)
    dist += tf.reduce_sum(tf.square(A), axis=-1)[:, :, None] + tf.reduce_sum(tf.square(B), axis=-1)[:, None, :]
    return variances[:, None, None] * tf.exp(-0.5 * dist)


class LatentGPs(gpflow.base.Module):
    """L independent sparse GPs with whitened q(u); evaluated together at shared or per-latent inputs.

    Examples
    --------
    >>> import gpflow
    >>> import numpy as np
    >>> import tensorflow as tf
    >>> from gpal.models import LatentGPs
    >>> kernels = [gpflow.kernels.SquaredExponential() for _ in range(2)]   # L = 2 latent functions
    >>> gp = LatentGPs(kernels, Z=np.linspace(-1.0, 1.0, 4)[:, None])       # M = 4 inducing inputs, a copy per latent
    >>> gp.num_latent, gp.num_inducing
    (2, 4)
    >>> mean, var = gp.marginals(tf.constant([[0.0], [3.0]], tf.float64))
    >>> mean.numpy(), var.numpy()               # q(v) starts at the prior: mean 0, the kernel's variance
    (array([[0., 0.],
           [0., 0.]]), array([[1., 1.],
           [1., 1.]]))
    >>> float(gp.kl())
    0.0
    """

    def __init__(self, kernels: Sequence[gpflow.kernels.Kernel], Z: np.ndarray, jitter: float = DEFAULT_JITTER,
                 train_inducing: bool = True, *, shared_by: int | None = None):
        super().__init__(name="latent_gps")
        Z = np.asarray(Z, dtype=np.float64)
        if shared_by is not None:
            # One kernel and one (1, M, d) Z, stored once: every latent reads the same variables, so their gradients
            # add up and a step moves them once for all; the (1, ...) factors broadcast against q(v)'s L slices.
            if len(kernels) != 1 or not (isinstance(shared_by, int) and shared_by >= 1):
                raise ValueError(f"shared_by={shared_by!r} shares one kernel among that many latent functions: it "
                                 f"needs one kernel and a positive integer; got {len(kernels)} kernels")
            if Z.ndim == 3 and Z.shape[0] == 1:
                Z = Z[0]
            if Z.ndim != 2:
                raise ValueError(f"Z shared by every latent function must be (M, d) or (1, M, d); got shape {Z.shape}")
            Z = Z[None]
        elif Z.ndim == 2:
            Z = np.tile(Z[None], (len(kernels), 1, 1))
        if Z.ndim != 3 or Z.shape[0] != len(kernels):
            raise ValueError(f"Z must be (M, d) or (L, M, d) with L = {len(kernels)} kernels; got shape {Z.shape}")
        self.num_latent = len(kernels) if shared_by is None else int(shared_by)
        #: Whether one kernel and one Z serve every latent function (``kernels`` and ``Z`` then hold one of each).
        self.shared = shared_by is not None
        self.num_inducing = Z.shape[1]
        self.kernels = list(kernels)
        # (L, M, d), or (1, M, d) shared; held where they start when not ``train_inducing`` (paper 003's authors' GPC)
        self.Z = gpflow.Parameter(Z, name="inducing_points", trainable=bool(train_inducing))
        self.q_mu = gpflow.Parameter(np.zeros((self.num_inducing, self.num_latent)), name="q_mu")  # (M, L)
        self.q_sqrt = gpflow.Parameter(
            np.tile(np.eye(self.num_inducing)[None], (self.num_latent, 1, 1)), transform=triangular(), name="q_sqrt"
        )  # (L, M, M)
        # Added to K_ZZ's diagonal; training raises it when a Cholesky fails.
        self.jitter = tf.Variable(float(jitter), dtype=tf.float64, trainable=False, name="jitter")

    def kl(self) -> tf.Tensor:
        """sum_c KL(q(u_c) || p(u_c)) = sum_c KL(N(m_c, S_c S_c^T) || N(0, I)) in the whitened frame.

        Returns
        -------
        tf.Tensor
            Scalar KL divergence.
        """
        return whitened_kl(tf.transpose(self.q_mu), self.q_sqrt)

    def _slot(self, c: int) -> int:
        """Which of ``kernels`` and ``Z`` latent function ``c`` reads: its own, or the one every latent shares."""
        return 0 if self.shared else c

    def cholesky_Kzz(self) -> tf.Tensor:
        """Cholesky factors of K_ZcZc + jitter I, (L, M, M); (1, M, M) when ``shared``.

        Returns
        -------
        tf.Tensor
            (L, M, M) or (1, M, M) lower-triangular factors.
        """
        return cholesky_with_jitter(self._Kzz(self._stacked_se()), self.jitter)

    def _stacked_se(self) -> tuple[tf.Tensor, tf.Tensor] | None:
        """Every latent's lengthscales (L, d) and variance (L,) when all L kernels are squared exponentials over
        all features (the library's kernel), read once; None for any other kernel, which computes on its own.

        A training step is dispatch-bound: L kernel calls, each reading and transforming its parameters again,
        are several hundred graph operations where one batched computation of the same formulas is a few dozen.
        """
        if not all(type(k) is gpflow.kernels.SquaredExponential and k.active_dims == slice(None) for k in self.kernels):
            return None
        d = tf.shape(self.Z)[-1]
        lengthscales = tf.stack([tf.broadcast_to(tf.convert_to_tensor(k.lengthscales), [d]) for k in self.kernels])
        return lengthscales, tf.stack([tf.convert_to_tensor(k.variance) for k in self.kernels])

    def _Kzz(self, se: tuple[tf.Tensor, tf.Tensor] | None) -> tf.Tensor:
        """K_ZcZc (L, M, M), (1, M, M) when ``shared``; with ``se``, GPflow's squared-exponential arithmetic batched
        over the latents."""
        Z = tf.convert_to_tensor(self.Z)
        if se is None:
            return tf.stack([k(Z[c]) for c, k in enumerate(self.kernels)])
        lengthscales, variances = se
        Zs = Z / lengthscales[:, None, :]
        return _scaled_se(Zs, Zs, variances)

    def _kernel_blocks(self, Xs: Sequence[tf.Tensor],
                       se: tuple[tf.Tensor, tf.Tensor] | None = None) -> tuple[tf.Tensor, tf.Tensor]:
        """K_ZcX (L, M, N) and diag K_XX (L, N), one latent's kernel and inputs per slice (``se``: ``_stacked_se``);
        when ``shared`` and one input serves every latent, (1, M, N) and (1, N), computed once."""
        Z = tf.convert_to_tensor(self.Z)
        one_input = all(X is Xs[0] for X in Xs)  # one input for every latent: scaled by broadcasting, not stacked
        if se is None:
            if self.shared and one_input:
                Xs = Xs[:1]
            slots = [self._slot(c) for c in range(len(Xs))]
            Kzx = tf.stack([self.kernels[k](Z[k], X) for k, X in zip(slots, Xs)])
            kxx = tf.stack([self.kernels[k](X, full_cov=False) for k, X in zip(slots, Xs)])
            return Kzx, kxx
        lengthscales, variances = se
        X = Xs[0][None] if one_input else tf.stack(Xs)
        kxx = tf.broadcast_to(variances[:, None], [len(self.kernels) if one_input else self.num_latent, tf.shape(X)[1]])
        return _scaled_se(Z / lengthscales[:, None, :], X / lengthscales[:, None, :], variances), kxx

    def _projection(self, Xs: Sequence[tf.Tensor]) -> Projection:
        """One projection per latent at its inputs, batched, the kernels' parameters read once."""
        se = self._stacked_se()
        Kzx, kxx = self._kernel_blocks(Xs, se)
        return whiten(cholesky_with_jitter(self._Kzz(se), self.jitter), Kzx, kxx)

    def _marginals(self, Xs: Sequence[tf.Tensor]) -> tuple[tf.Tensor, tf.Tensor]:
        mean, var = whitened_marginals(self._projection(Xs), tf.transpose(self.q_mu), self.q_sqrt)  # (L, N) each
        return tf.transpose(mean), tf.transpose(var)

    @check_shapes("X: [N, D]", "return[0]: [N, L]", "return[1]: [N, L]")
    def marginals(self, X: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """Means and variances of q(f_c(x_n)), each (N, L).

        Returns
        -------
        mean, var : tf.Tensor
            (N, L) each.
        """
        return self._marginals([X] * self.num_latent)

    def _predictive_kernel_blocks(self, X: tf.Tensor, dtype: tf.DType) -> tuple[tf.Tensor, tf.Tensor]:
        """K_XZc (L, N, M) and diag K_XX (L, N) in ``dtype``, (1, N, M) and (1, N) when ``shared``; squared-exponential
        kernels in one GEMM and one exp.

        sigma^2 exp(-|x - z|^2_l / 2) = exp(x_a . z_a) with x_a = [x, x^2, 1], shared by every
        latent, and z_a = [z / l^2, -1 / (2 l^2), log sigma^2 - |z / l|^2 / 2] per latent: the
        squared distances, scales and variances come out of one broadcast product (both
        augmented matrices formed in float64, then cast), where a kernel call makes several
        passes over (N, M) arrays per latent.  Any other kernel takes its own K(X, Z) in float64.
        """
        se = self._stacked_se()
        if se is None:
            Kzx, kxx = self._kernel_blocks([X] * self.num_latent)
            return tf.cast(tf.linalg.matrix_transpose(Kzx), dtype), tf.cast(kxx, dtype)
        Z = tf.convert_to_tensor(self.Z)
        lengthscales, variances = se
        inv_sq = lengthscales ** -2
        offsets = tf.math.log(variances)[:, None] - 0.5 * tf.reduce_sum(tf.square(Z) * inv_sq[:, None], -1)  # (L, M)
        z_a = tf.concat([Z * inv_sq[:, None], tf.broadcast_to(-0.5 * inv_sq[:, None], tf.shape(Z)),
                         offsets[..., None]], axis=-1)  # (L, M, 2 d + 1)
        x_a = tf.concat([X, tf.square(X), tf.ones_like(X[:, :1])], axis=-1)  # (N, 2 d + 1)
        Kxz = tf.exp(tf.linalg.matmul(tf.cast(x_a, dtype)[None], tf.cast(z_a, dtype), transpose_b=True))
        return Kxz, tf.broadcast_to(tf.cast(variances, dtype)[:, None], [len(self.kernels), tf.shape(X)[0]])

    @check_shapes("X: [N, D]", "return[0]: [N, L]", "return[1]: [N, L]")
    def predictive_marginals(self, X: tf.Tensor, dtype: tf.DType = tf.float64) -> tuple[tf.Tensor, tf.Tensor]:
        """``marginals`` for prediction at many inputs: q(u) folded in once, then one GEMM per latent.

        The training ELBO keeps ``marginals`` (a solve per input, no cancellation in the
        variance's gradient); here the O(M^3) factors are formed once per call in float64 and
        every input costs O(M^2) in a matrix product, computed in ``dtype``: float64 equals
        ``marginals`` up to rounding; float32 (twice the GEMM and exp rate on a CPU, more on a
        GPU) keeps means and variances to ~1e-5 of the prior variance (``PredictiveFactors``).
        Returned in float64 either way.

        Returns
        -------
        mean, var : tf.Tensor
            (N, L) each, in float64.
        """
        factors = predictive_factors(self.cholesky_Kzz(), tf.transpose(self.q_mu), self.q_sqrt)
        Kxz, kxx = self._predictive_kernel_blocks(X, dtype)
        means, variances = [], []
        for c in range(self.num_latent):  # a 2-D GEMM per latent: faster than one batched product here
            own, slot = PredictiveFactors(*(tf.cast(f[c], dtype) for f in factors)), self._slot(c)
            mean, var = factored_marginals(own, Kxz[slot], kxx[slot])
            means.append(mean)
            variances.append(var)
        return tf.cast(tf.stack(means, axis=1), X.dtype), tf.cast(tf.stack(variances, axis=1), X.dtype)

    @check_shapes("X: [N, D]", "return: [L, M, N]")
    def inducing_spread(self, X: tf.Tensor) -> tf.Tensor:
        """S_c^T L_c^-1 K_ZcX: how f_c(x) moves with a draw of q(v_c) = N(m_c, S_c S_c^T), v_c = m_c + S_c e.

        Returns
        -------
        tf.Tensor
            (L, M, N): f_c(x_n) moves by its column's dot product with the draw's standard-normal e_c.
        """
        return tf.linalg.matmul(self.q_sqrt, self._projection([X] * self.num_latent).A, transpose_a=True)

    @check_shapes("X: [N, D]", "return[0]: [N, L]", "return[1]: [N, L]", "return[2]: [L, N, D]")
    def marginals_and_mean_gradients(self, X: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """Marginals plus d mu_c(x_n) / d x_n for every latent c and point n, (L, N, D).

        mu_c(x_n) depends on x_n alone, so the gradient of sum_n mu_c(x_n) with
        respect to X holds every per-point gradient.  Each latent gets its own
        copy of X, so one backward pass gives all L of them.

        Returns
        -------
        mean, var : tf.Tensor
            (N, L) each, as `marginals`.
        grads : tf.Tensor
            (L, N, D) gradients of the means.
        """
        copies = [tf.identity(X) for _ in range(self.num_latent)]
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(copies)
            mean, var = self._marginals(copies)
            total = tf.reduce_sum(mean)
        grads = tape.gradient(total, copies)
        return mean, var, tf.stack(grads)
