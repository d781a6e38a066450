"""Expectations under independent Gaussian latent marginals q(f_ic) = N(Fmu_ic, Fvar_ic).

The integrals that more than one likelihood needs, written once:

* ``normal_cdf``: the standard normal CDF;
* ``hermite_rule``: Gauss-Hermite nodes and weights for E_{x ~ N(0, 1)}[h(x)];
* ``hermite_expectation``: E_{f ~ N(mean, var)}[h(f)] per point with that rule;
* ``panel_rule``: Gauss-Legendre nodes and weights for each panel of ``prob_largest``;
* ``prob_largest`` / ``argmax_probabilities``: P(g_y > g_c for all c != y) for
  independent g_c ~ N(mu_c, var_c), a 1-D integral over g_y (the S_i of paper 000
  eq. 18; robust-max is its special case with no added noise);
* ``monte_carlo_mean``: E_q[h(f)] from seeded, stateless draws of f;
* ``robust_expected_log`` / ``robust_predictive``: the ELBO term and the predictive
  probability of a label-flip rule (1 - delta for the class ranked first, delta / (C - 1)
  for each other) once S = q(class ranked first) is known;
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

import numpy as np
import tensorflow as tf
from check_shapes import check_shapes

from gpal.constraints import Integer

__all__ = [
    "MIN_VARIANCE",
    "PANEL_EDGES_PER_CLASS",
    "sigma_point_mean",
    "normal_cdf",
    "hermite_rule",
    "hermite_expectation",
    "panel_rule",
    "prob_largest",
    "argmax_probabilities",
    "monte_carlo_mean",
    "robust_expected_log",
    "robust_predictive",
]

_QUADRATURE_POINTS = Integer(2)
# Variances below this are treated as this: a zero variance would put 0/0 into
# the standardised differences (e.g. the step likelihood, a = 0, at a point
# where the latent variance vanishes).
MIN_VARIANCE = 1e-12


def normal_cdf(z: tf.Tensor) -> tf.Tensor:
    """Phi(z); the erfc form keeps relative accuracy in the lower tail, where 1 + erf loses it."""
    return 0.5 * tf.math.erfc(-z / math.sqrt(2.0))


def hermite_rule(num_points: int) -> tuple[tf.Tensor, tf.Tensor]:
    """Nodes x_k and weights w_k (float64) with sum_k w_k h(x_k) ~ E_{x ~ N(0,1)}[h(x)].

    Gauss-Hermite integrates against exp(-t^2); x = sqrt(2) t, w = w_t / sqrt(pi)
    change the weight function to the standard normal density.
    """
    t, w = np.polynomial.hermite.hermgauss(_QUADRATURE_POINTS.check("num_quadrature", num_points))
    return tf.constant(t * math.sqrt(2.0), tf.float64), tf.constant(w / math.sqrt(math.pi), tf.float64)


def hermite_expectation(
    fn: Callable[[tf.Tensor], tf.Tensor], mean: tf.Tensor, var: tf.Tensor, num_points: int
) -> tf.Tensor:
    """E_{N(f | mean, var)} fn(f) per element of ``mean`` by ``hermite_rule``: f = mean + sqrt(var) x_k.

    ``fn`` maps the nodes f (..., K) to values (..., K), elementwise in the leading dimensions.
    A variance rounded below 0 counts as 0.
    """
    x, w = hermite_rule(num_points)
    f = mean[..., None] + tf.sqrt(tf.maximum(var, 0.0))[..., None] * tf.cast(x, mean.dtype)
    return tf.linalg.matvec(fn(f), tf.cast(w, mean.dtype))


def panel_rule(num_points: int) -> tuple[tf.Tensor, tf.Tensor]:
    """Gauss-Legendre nodes and weights on [-1, 1] (float64), used on every panel of ``prob_largest``."""
    t, w = np.polynomial.legendre.leggauss(_QUADRATURE_POINTS.check("num_quadrature", num_points))
    return tf.constant(t, tf.float64), tf.constant(w, tf.float64)


# Panel edges at mu_c + k sd_c for every class c: each class's CDF step, and g_y's density, fall on
# panels no wider than their own scale, whatever the ratio of the variances.
_PANEL_EDGES = tf.constant([-7.0, -3.0, 0.0, 3.0, 7.0], tf.float64)
#: Panel edges each class adds to ``prob_largest``'s rule (C classes: 5 C - 1 panels), for its memory's count.
PANEL_EDGES_PER_CLASS = int(_PANEL_EDGES.shape[0])


@check_shapes("Fmu: [N, C]", "Fvar: [N, C]", "Y: [N]", "nodes: [K]", "weights: [K]", "return: [N]")
def prob_largest(Fmu: tf.Tensor, Fvar: tf.Tensor, Y: tf.Tensor, nodes: tf.Tensor, weights: tf.Tensor) -> tf.Tensor:
    """P(g_y > g_c for every c != y), g_c ~ N(Fmu_c, Fvar_c) independent, y = ``Y`` per row.

    = int N(t | mu_y, var_y) prod_{c != y} Phi((t - mu_c) / sd_c) dt over mu_y +- 8 sd_y, by a
    composite Gauss-Legendre rule (``nodes``, ``weights`` from ``panel_rule``) whose panel
    edges sit at mu_c + k sd_c of every class.  A Gauss-Hermite rule on g_y alone misses
    the step of a class whose variance is much smaller than g_y's (errors of 0.05-0.1 at
    variance ratios of 40-1e4); here every step lies on panels of its own width.
    """
    Y = tf.cast(Y, tf.int32)
    sd = tf.sqrt(tf.maximum(Fvar, MIN_VARIANCE))
    num_classes = Fmu.shape[1] or tf.shape(Fmu)[1]  # static where known: the product below is then unrolled
    mu_y = tf.gather(Fmu, Y, axis=1, batch_dims=1)[:, None]  # (N, 1)
    sd_y = tf.gather(sd, Y, axis=1, batch_dims=1)[:, None]
    edges = tf.reshape(Fmu[:, :, None] + sd[:, :, None] * _PANEL_EDGES, [tf.shape(Fmu)[0], -1])
    edges = tf.sort(tf.clip_by_value(edges, mu_y - 8.0 * sd_y, mu_y + 8.0 * sd_y), axis=1)  # (N, E)
    left, width = edges[:, :-1], edges[:, 1:] - edges[:, :-1]  # (N, P) panels
    t = tf.reshape(left[:, :, None] + 0.5 * width[:, :, None] * (nodes + 1.0), [tf.shape(Fmu)[0], -1])  # (N, P K)
    w = tf.reshape(0.5 * width[:, :, None] * weights, tf.shape(t))
    density = tf.exp(-0.5 * tf.square((t - mu_y) / sd_y)) / (sd_y * math.sqrt(2.0 * math.pi))
    # The C - 1 other classes of each row, c = y + 1, ..., y + C - 1 (mod C).
    others = tf.math.floormod(Y[:, None] + 1 + tf.range(num_classes - 1), num_classes)  # (N, C - 1)
    mu_o = tf.gather(Fmu, others, axis=1, batch_dims=1)
    scale_o = tf.math.reciprocal(math.sqrt(2.0) * tf.gather(sd, others, axis=1, batch_dims=1))
    # Phi((t - mu_c) / sd_c) = erfc((mu_c - t) / (sqrt(2) sd_c)) / 2, the halves gathered into the weights.
    halves = tf.pow(tf.constant(0.5, Fmu.dtype), tf.cast(num_classes - 1, Fmu.dtype))
    return tf.reduce_sum((halves * w) * density * _product_of_tails(mu_o, scale_o, t), axis=1)


def _product_of_tails(mu: tf.Tensor, scale: tf.Tensor, t: tf.Tensor) -> tf.Tensor:
    """prod_j erfc((mu_j - t) scale_j) for ``mu``, ``scale`` (N, J) at the nodes ``t`` (N, T); (N, T).

    Where J is static, one (N, T) factor at a time: the arrays that each cost a pass over memory
    are (N, T), and the gradient is products, where ``tf.reduce_prod``'s runs two cumulative
    products over an (N, J, T) array.
    """
    count = mu.shape[1]
    if count is None:
        return tf.reduce_prod(tf.math.erfc((mu[:, :, None] - t[:, None, :]) * scale[:, :, None]), axis=1)
    tails = [tf.math.erfc((mu[:, j, None] - t) * scale[:, j, None]) for j in range(count)]
    return functools.reduce(tf.multiply, tails)


@check_shapes("Fmu: [N, C]", "Fvar: [N, C]", "nodes: [K]", "weights: [K]", "return: [N, C]")
def argmax_probabilities(Fmu: tf.Tensor, Fvar: tf.Tensor, nodes: tf.Tensor, weights: tf.Tensor) -> tf.Tensor:
    """``prob_largest`` for every class, renormalised: they sum to 1 exactly, quadrature leaves ~1e-8."""
    n, num_classes = tf.shape(Fmu)[0], tf.shape(Fmu)[1]
    rows = tf.repeat(tf.range(n), num_classes)
    labels = tf.tile(tf.range(num_classes), [n])
    p = prob_largest(tf.gather(Fmu, rows), tf.gather(Fvar, rows), labels, nodes, weights)
    p = tf.reshape(p, [n, num_classes])
    return p / tf.reduce_sum(p, axis=1, keepdims=True)


@check_shapes("Fmu: [N, L]", "Fvar: [N, L]")
def monte_carlo_mean(
    fn: Callable[[tf.Tensor], tf.Tensor], Fmu: tf.Tensor, Fvar: tf.Tensor, num_samples: int, seed: int | tf.Tensor,
    *, at_once: bool = False,
) -> tf.Tensor:
    """(1/S) sum_s fn(Fmu + sqrt(Fvar) eps_s), eps_s ~ N(0, I) drawn statelessly from (seed, s).

    Reparameterised, so gradients reach Fmu and Fvar.  Deterministic for given inputs:
    the same seed gives the same estimate, eager or in a ``tf.function``, at every
    training step (an XLA-compiled function draws a different, equally fixed stream).
    The draws are common to all rows, so each row's estimate is a function of its own
    marginals and the seed alone.

    By default one draw at a time, in a loop: memory stays O(N L) however large
    ``num_samples`` is, which matters when the model predicts at many input samples.
    ``at_once`` evaluates the S draws in one call of ``fn`` on the (S N, L) stack of them
    (row s N + i is draw s of row i; ``fn`` must be row-wise, any per-row data it holds tiled S
    times): the same draws, summed in another order, for a training ELBO whose batch is small,
    where a loop's per-iteration dispatch (forward and backward) would cost more than its
    arithmetic.
    """
    sd = tf.sqrt(tf.maximum(Fvar, 0.0))
    if at_once:
        if not isinstance(seed, tf.Tensor) and Fmu.shape[1] is not None:
            with tf.init_scope():  # a fixed seed: the draws are a constant of the trace, not ops of every step
                eps = _stacked_draws(tf.constant(int(seed), tf.int64), num_samples, Fmu.shape[1], Fmu.dtype)
        else:
            eps = _stacked_draws(tf.cast(seed, tf.int64), num_samples, tf.shape(Fmu)[1], Fmu.dtype)
        values = fn(tf.reshape(Fmu[None] + sd[None] * eps, [-1, tf.shape(Fmu)[1]]))
        values = tf.reshape(values, tf.concat([[num_samples, tf.shape(Fmu)[0]], tf.shape(values)[1:]], axis=0))
        return tf.reduce_sum(values, axis=0) / tf.cast(num_samples, Fmu.dtype)

    # A scalar tensor seed lets one trace serve any seed (the augmented model's shared predictor).
    seed = tf.cast(seed, tf.int64) if isinstance(seed, tf.Tensor) else tf.constant(int(seed), tf.int64)

    def value(s: tf.Tensor) -> tf.Tensor:
        return fn(Fmu + sd * _draw(seed, s, tf.shape(Fmu)[1], Fmu.dtype))

    first = value(tf.constant(0, tf.int64))
    _, total = tf.while_loop(
        lambda s, _: s < num_samples,
        lambda s, acc: (s + 1, acc + value(s)),
        (tf.constant(1, tf.int64), first),
        maximum_iterations=num_samples,  # a static bound lets XLA differentiate through the loop
    )
    return total / tf.cast(num_samples, Fmu.dtype)


def _draw(seed: tf.Tensor, s: tf.Tensor, latents: Any, dtype: tf.DType) -> tf.Tensor:
    """Draw s of ``monte_carlo_mean``, (1, latents): one value per latent, shared by every row, so that a row's
    estimate does not depend on its position.  Philox named, not "auto_select", so the stream does not depend on
    the device."""
    return tf.random.stateless_normal([1, latents], seed=tf.stack([seed, s]), dtype=dtype, alg="philox")


@tf.function(autograph=False, reduce_retracing=True)
def _stacked_draws(seed: tf.Tensor, num_samples: Any, latents: Any, dtype: tf.DType) -> tf.Tensor:
    """Draws 0 .. S - 1 of ``monte_carlo_mean`` stacked, (S, 1, latents): compiled, as S eager draws cost
    milliseconds each."""
    return tf.map_fn(lambda s: _draw(seed, s, latents, dtype), tf.range(num_samples, dtype=tf.int64),
                     fn_output_signature=dtype)


def robust_expected_log(S: tf.Tensor, S_other: tf.Tensor, delta: tf.Tensor, num_classes: int) -> tf.Tensor:
    """E_q[log p(y | g)] = S log(1 - delta) + (1 - S) log(delta / (C - 1)) (paper 000 eq. 8, 18).

    ``S_other`` is 1 - S, passed separately so the binary form can keep it accurate as Phi(-z).
    """
    return S * tf.math.log1p(-delta) + S_other * tf.math.log(delta / (num_classes - 1))


def robust_predictive(S: tf.Tensor, S_other: tf.Tensor, delta: tf.Tensor, num_classes: int) -> tf.Tensor:
    """p(y | data) = (1 - delta) S + delta / (C - 1) (1 - S) (paper 000 eq. 9, 19)."""
    return (1.0 - delta) * S + delta / (num_classes - 1) * S_other


@check_shapes("mean: [N, L]", "var: [N, L]", "return: [N, C]")
def sigma_point_mean(g: Any, mean: tf.Tensor, var: tf.Tensor) -> tf.Tensor:
    """E g(f) for f ~ N(mean, diag var) by the unscented rule: exact for g of degree <= 3 per axis.

    Points mean and mean +- sqrt(L + k) sd_l e_l with weights k / (L + k) and 1 / (2 (L + k)),
    k = max(3 - L, 0) (Julier & Uhlmann 1997: k = 3 - L also matches the Gaussian's fourth
    moments; a negative centre weight is avoided).  2L + 1 evaluations of ``g`` (N, L) -> (N, C) per row.
    """
    L = mean.shape[-1]
    k = float(max(3 - L, 0))
    offsets = np.concatenate([np.zeros((1, L)), np.sqrt(L + k) * np.eye(L), -np.sqrt(L + k) * np.eye(L)])
    weights = np.concatenate([[k / (L + k)], np.full(2 * L, 0.5 / (L + k))])
    F = mean[:, None, :] + tf.sqrt(var)[:, None, :] * tf.constant(offsets, mean.dtype)  # (N, 2L + 1, L)
    p = tf.reshape(g(tf.reshape(F, [-1, L])), [tf.shape(mean)[0], 2 * L + 1, -1])
    return tf.einsum("npc,p->nc", p, tf.constant(weights, p.dtype))
