"""The kernel every gpal family starts from when the user gives none.

Squared exponential with one length scale per feature (ARD), all starting at
sqrt(d) on standardised inputs: the expected scaled squared distance between two
points, sum_j (x_j - x'_j)^2 / l^2, is then about 2 whatever the dimension d, so
the kernel starts neither near-diagonal in many dimensions (where gradients of the
bound vanish and L-BFGS stops at once, as it did on 64-d digits with l = 1) nor
flat in few.  For d = 1 this is GPflow's usual unit length scale.
"""

from __future__ import annotations

import gpflow
import numpy as np

from gpal.models.module_copy import module_copy
from gpal.registry import KERNELS

__all__ = ["data_spread_lengthscale", "default_kernel", "default_lengthscale", "make_kernel", "matern52_plus_se",
           "matern52_plus_se_iso", "se_ard_liu", "se_iso_liu", "LIU_2019_SHORT_SCALE", "LIU_2019_VARIANCE", "median_distance", "se_ard_plus_noise",
           "se_ard_plus_noise_median", "se_ard_plus_noise_median_log", "se_iso_plus_fixed_white", "se_iso_plus_fixed_white_spread", "se_iso_plus_noise",
           "se_iso_spread", "se_isotropic", "starts_from_rows", "MILIOS_2018_WHITE"]

#: The initial sigma_0^2 of ``se_ard_plus_noise`` and ``se_iso_plus_noise``: small beside the unit signal variance,
#: then learned.
INITIAL_NOISE_TERM = 0.01


def default_lengthscale(n_features: int) -> float:
    """sqrt(d): the starting length scale of every feature."""
    if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) or n_features < 1:
        raise ValueError(f"n_features must be an integer >= 1; got {n_features!r}")
    return float(np.sqrt(n_features))


def default_kernel(n_features: int) -> gpflow.kernels.SquaredExponential:
    """A fresh SE-ARD kernel, unit variance, length scales sqrt(d)."""
    return gpflow.kernels.SquaredExponential(lengthscales=np.full(n_features, default_lengthscale(n_features)))


def se_isotropic(n_features: int) -> gpflow.kernels.SquaredExponential:
    """SE with one length scale shared by all features (unit variance, length scale sqrt(d)).

    Paper 003's kernel (Milios et al. 2018 run ``ARD=False`` in dirichletGPC's ``src/evaluation.py``; their start,
    mean(std(X)) sqrt(d), is `se_iso_spread`'s): fewer parameters than SE-ARD, for when the features are on
    comparable scales.
    """
    return gpflow.kernels.SquaredExponential(lengthscales=default_lengthscale(n_features))


def data_spread_lengthscale(X: np.ndarray) -> float:
    """mean(std(X)) sqrt(d): paper 003's authors' length-scale start, from the training rows after scaling.

    dirichletGPC (``src/evaluation.py`` 85-87, 217-220, 364-366) starts every method's isotropic length scale there:
    sqrt(d) scaled by the inputs' typical spread, so on inputs scaled to [-1, 1] (spread well below 1) it starts
    shorter than `default_lengthscale`.  A set whose every feature is constant has no spread and is refused.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or len(X) < 2:
        raise ValueError(f"the data-spread length scale needs a 2-d array of at least two rows; got shape {X.shape}")
    ell = float(np.mean(np.std(X, axis=0)) * np.sqrt(X.shape[1]))
    if not (np.isfinite(ell) and ell > 0):
        raise ValueError(f"the training rows' mean feature spread is {ell / np.sqrt(X.shape[1])}: no length scale "
                         f"follows from it (every feature constant, or non-finite values); use a kernel that starts "
                         f"from the width alone, e.g. 'se_iso'")
    return ell


def starts_from_rows(factory):
    """Mark a kernel factory as one `make_kernel` calls with the training rows and a seed, ``factory(X, seed=...)``,
    rather than with their width: for starts taken from the data (a median distance, the rows' spread)."""
    factory.from_rows = True
    return factory


@starts_from_rows
def se_iso_spread(X: np.ndarray, seed: int = 0) -> gpflow.kernels.SquaredExponential:
    """`se_isotropic` started at `data_spread_lengthscale` of the training rows, as paper 003's authors start it."""
    return gpflow.kernels.SquaredExponential(lengthscales=data_spread_lengthscale(X))



def se_iso_plus_noise(n_features: int) -> gpflow.kernels.Sum:
    """Paper 002's first author's kernel (gplib 37560b2, ``gplib/covfun/se.py`` 42, ``covfun/utility.py`` 11-19): SE
    with one length scale plus a noise term sigma_l^2 I[x = x'], all three learned.

    As in gplib, the noise term adds to K_mm's diagonal and to each point's own prior variance but not to K_nm: it
    keeps K_mm well conditioned as the length scale grows.  Started at unit signal variance, length scale sqrt(d)
    and sigma_l^2 = 0.01 (sigma_l = 0.1), the start the study ``paper002_gplib`` gives gplib and gpal alike.
    """
    return se_isotropic(n_features) + gpflow.kernels.White(variance=INITIAL_NOISE_TERM)


#: The white-noise variance paper 003's authors add, held fixed, to their GPC's kernel (dirichletGPC's
#: ``src/evaluation.py``, ``evaluate_vgp``: ``gpflow.kernels.White(1, variance=1e-4)``, not trainable).
MILIOS_2018_WHITE = 1e-4


def se_iso_plus_fixed_white(n_features: int) -> gpflow.kernels.Sum:
    """`se_isotropic` plus a fixed white-noise term of variance 1e-4: paper 003's GPC kernel as its code builds it.

    The white term adds its variance to the prior variance of f at every input and to K(Z, Z)'s diagonal, a small
    floor on the latent marginals and a jitter of the inducing covariance, and is never learned.
    """
    white = gpflow.kernels.White(variance=MILIOS_2018_WHITE)
    gpflow.set_trainable(white.variance, False)
    return se_isotropic(n_features) + white


@starts_from_rows
def se_iso_plus_fixed_white_spread(X: np.ndarray, seed: int = 0) -> gpflow.kernels.Sum:
    """`se_iso_plus_fixed_white` with its length scale started at `data_spread_lengthscale`: paper 003's GPC kernel
    started where its authors start it."""
    white = gpflow.kernels.White(variance=MILIOS_2018_WHITE)
    gpflow.set_trainable(white.variance, False)
    return se_iso_spread(X, seed) + white



def se_ard_plus_noise(n_features: int) -> gpflow.kernels.Sum:
    """The noisy-input paper's kernel (paper 001, sec. 2): SE-ARD + sigma_0^2 I[x = x'], sigma_0^2 learned.

    The white term adds sigma_0^2 to the prior variance of f at every input but correlates no two
    inputs: it widens the latent marginals, so a source far from every inducing point is predicted
    less confidently than by SE-ARD alone.
    """
    return default_kernel(n_features) + gpflow.kernels.White(variance=INITIAL_NOISE_TERM)


#: Where paper 001's authors start their kernel (GPInputNoise at 0e9268a, ``experiments/uci/*/*/*/test_real.py``
#: 41-47, ``RBF_ARD(log_l, -20.0, 1.0)``): log signal variance 1, log noise term -20, from a sample of 1000 rows.
AUTHORS_001_LOG_VARIANCE = 1.0
AUTHORS_001_LOG_NOISE_TERM = -20.0
#: Their kernel's fixed jitter, added to the noise term (``rbf_ard.py`` 15, 22).
AUTHORS_001_JITTER = 1e-3
MEDIAN_SAMPLE = 1000


def median_distance(X: np.ndarray, seed: int = 0) -> float:
    """The median Euclidean distance between two of X's rows, over all pairs of at most `MEDIAN_SAMPLE` of them.

    More rows than that are sampled without replacement (the authors draw with replacement, which only adds a few
    zero distances between a row and itself); a median of zero (most rows equal) is refused, since no length scale
    follows from it.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or len(X) < 2:
        raise ValueError(f"the median distance needs a 2-d array of at least two rows; got shape {X.shape}")
    if len(X) > MEDIAN_SAMPLE:
        X = X[np.random.default_rng(seed).choice(len(X), size=MEDIAN_SAMPLE, replace=False)]
    from scipy.spatial.distance import pdist

    median = float(np.median(pdist(X)))
    if not median > 0:
        raise ValueError(f"the median distance between the {len(X)} rows is {median}: more than half the pairs are "
                         f"equal rows, so it gives no length scale; use a kernel that starts from the width alone "
                         f"(e.g. 'se_ard_plus_noise')")
    return median


@starts_from_rows
def se_ard_plus_noise_median(X: np.ndarray, seed: int = 0) -> gpflow.kernels.Sum:
    """``se_ard_plus_noise`` started where paper 001's authors start it, from the training rows X.

    Their ``RBF_ARD`` divides the inputs by sqrt(exp(log_lengthscales)) (``gp_input_noise/rbf_ard.py`` 38-39, 45) and
    their scripts set log_lengthscales to log of the median distance, so each squared length scale starts at the
    median distance between training rows (not each length scale); the signal variance starts at e and the noise
    term at exp(-20), all learned.  Their fixed 1e-3 under the noise term is `se_ard_plus_noise_median_log`'s, not
    this one's.  On standardised inputs the length scales start shorter than
    `default_kernel`'s sqrt(d) and the signal variance higher: a rougher prior to start from.
    """
    X = np.asarray(X, dtype=float)
    ell = np.sqrt(median_distance(X, seed))
    return (gpflow.kernels.SquaredExponential(variance=np.exp(AUTHORS_001_LOG_VARIANCE),
                                              lengthscales=np.full(X.shape[1], ell))
            + gpflow.kernels.White(variance=np.exp(AUTHORS_001_LOG_NOISE_TERM)))



@starts_from_rows
def se_ard_plus_noise_median_log(X: np.ndarray, seed: int = 0) -> gpflow.kernels.Sum:
    """``se_ard_plus_noise_median`` as paper 001's authors code it: its parameters stepped as they step them, and
    their fixed jitter under the noise term.

    Their ``RBF_ARD`` keeps log l^2, log sigma^2 and log sigma_0^2 as the variables Adam moves
    (``gp_input_noise/rbf_ard.py`` 19-21, 37-38, 44), so a step moves each by a share of its value; GPflow's
    softplus moves a large length scale by a fixed amount.  The optimum is the same, the path is not: on the
    authors' waveform splits their parameterisation lets the length scales grow further over 1000 epochs and
    the test NLL with them.  They add a jitter of `AUTHORS_001_JITTER` to sigma_0^2 wherever the noise term enters
    (K(X, X)'s diagonal, K_ZZ's and the marginal variances, rbf_ard.py 22, 32, 56): here the noise term's variance
    is that jitter plus exp of the variable stepped, so it can never fall below it.
    """
    import tensorflow_probability as tfp

    exp, scale = tfp.bijectors.Exp(), tfp.bijectors.Scale(np.float64(0.5))
    kernel = se_ard_plus_noise_median(X, seed)
    se, noise = kernel.kernels
    se.lengthscales = gpflow.Parameter(se.lengthscales.numpy(), transform=tfp.bijectors.Chain([exp, scale]))
    se.variance = gpflow.Parameter(se.variance.numpy(), transform=exp)
    floor = tfp.bijectors.Shift(np.float64(AUTHORS_001_JITTER))
    noise.variance = gpflow.Parameter(noise.variance.numpy() + AUTHORS_001_JITTER,
                                      transform=tfp.bijectors.Chain([floor, exp]))
    return kernel


#: Paper 000's kernel start (Appendix D: "RBF kernel with length-scale of 0.1 sqrt(d) and variance of 5.0", the
#: values its ref. [33] gives, stated for GPCep and GPCaug, which its own GPCs "also use"; inferred thereafter, sec.
#: II-B1): the length-scale factor on sqrt(d) and the variance.
LIU_2019_SHORT_SCALE = 0.1
LIU_2019_VARIANCE = 5.0


def matern52_plus_se(n_features: int) -> gpflow.kernels.Sum:
    """Paper 000's Table V kernel (its ref. [33]'s): Matern 5/2 + SE, both ARD with variance 5, learned.

    The paper starts the Matern part at length scale 0.1 sqrt(d) (short-range structure) and the SE
    part at sqrt(d) (the smooth trend, as `default_kernel`); whether its length scales were one per
    feature is not said, here they are, as the authors' GPflow 1 demos pass one value with ``ARD=True``
    (`matern52_plus_se_iso`: one each).
    """
    ell = default_lengthscale(n_features)
    return (gpflow.kernels.Matern52(variance=LIU_2019_VARIANCE, lengthscales=np.full(n_features, LIU_2019_SHORT_SCALE * ell))
            + gpflow.kernels.SquaredExponential(variance=LIU_2019_VARIANCE, lengthscales=np.full(n_features, ell)))


def se_ard_liu(n_features: int) -> gpflow.kernels.SquaredExponential:
    """Paper 000's Tables III-IV kernel as its Appendix D gives it (for its competitors, whose RBF its GPCs "also
    use"), "RBF kernel with length-scale of 0.1 sqrt(d) and variance of 5.0": SE-ARD with every length scale started
    there, variance 5, all learned.

    One length scale per input, as the authors' own GPflow 1 code passes a single value with ``ARD=True`` (GPCnoise's
    demos; the paper does not say); `se_iso_liu` is the one-length-scale reading.  0.1 sqrt(d) starts the kernel
    near-diagonal on standardised inputs (a tenth of `default_lengthscale`), variance 5 well above the unit start of
    gpal's own kernels.
    """
    return gpflow.kernels.SquaredExponential(
        variance=LIU_2019_VARIANCE, lengthscales=np.full(n_features, LIU_2019_SHORT_SCALE * default_lengthscale(n_features)))


def se_iso_liu(n_features: int) -> gpflow.kernels.SquaredExponential:
    """`se_ard_liu` with one length scale shared by the inputs, the other reading of the paper's single value."""
    return gpflow.kernels.SquaredExponential(variance=LIU_2019_VARIANCE,
                                             lengthscales=LIU_2019_SHORT_SCALE * default_lengthscale(n_features))


def matern52_plus_se_iso(n_features: int) -> gpflow.kernels.Sum:
    """`matern52_plus_se` with one length scale per part, the other reading of the paper's single values."""
    ell = default_lengthscale(n_features)
    return (gpflow.kernels.Matern52(variance=LIU_2019_VARIANCE, lengthscales=LIU_2019_SHORT_SCALE * ell)
            + gpflow.kernels.SquaredExponential(variance=LIU_2019_VARIANCE, lengthscales=ell))


def make_kernel(kernel: "str | gpflow.kernels.Kernel | None", n_features: int, X: np.ndarray | None = None,
                seed: int = 0) -> gpflow.kernels.Kernel:
    """A fresh kernel for ``n_features`` inputs: a name in ``gpal.registry.KERNELS``, a kernel (copied), None (SE-ARD).

    A name whose factory starts from the training rows (`starts_from_rows`, e.g. ``se_ard_plus_noise_median``) needs
    ``X``, the standardised training rows, and ``seed`` for its sample of them.
    """
    if kernel is None:
        return default_kernel(n_features)
    if isinstance(kernel, str):
        factory = KERNELS.get_class(kernel)
        if not getattr(factory, "from_rows", False):
            return factory(n_features)
        if X is None:
            raise ValueError(f"kernel {kernel!r} starts from the training rows, which this model does not give its "
                             f"kernel (it builds it from the number of features alone); use a kernel that starts from "
                             f"the width alone, e.g. 'se_ard_plus_noise'")
        return factory(X, seed=seed)
    return module_copy(kernel)
