"""Seeded synthetic problems for offline experiments (noisy-input GP paper, sec. 5.1-5.3, 5.5).

Every generator returns `gpal.data.dataset.NoisyDataset`s and draws all randomness from
``np.random.default_rng(seed)``: the same seed gives identical arrays, and nothing
touches global random state.

The GP-prior problems (`toy_1d`, `synthetic_2d`) return a `SyntheticProblem` that
also knows the truth: the latent functions and the Bayes-optimal predictive
p(y | observed x), the yardstick a noisy-input classifier is measured against.

How the latent functions are drawn: the GP is sampled *exactly* (eigendecomposition
of the kernel matrix, no jitter guesswork) on a fine regular grid over the input box
and interpolated with cubic splines.  Random Fourier features would give functions
evaluable anywhere too, but only approximately GP-distributed (the kernel is matched
in expectation over the random frequencies); the grid sample has exactly the prior's
law at the nodes, and with a grid step of ~1/50 of the lengthscale the spline error is
far below anything a classifier can see (relative error ~ (step/lengthscale)^4).  The
squared-exponential kernel is a product over axes, so the grid covariance is a
Kronecker product and the 2-D sample costs two small 1-D factorisations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from scipy import interpolate, optimize, special

from gpal.data.dataset import NoisyDataset
from gpal.data.standardizer import Standardizer

__all__ = ["SyntheticProblem", "digits", "inject_noise", "synthetic_2d", "toy_1d", "toy_1d_heteroscedastic", "waveform",
           "wine", "wine_heteroscedastic"]


@dataclass(frozen=True)
class SyntheticProblem:
    """A generated problem whose generating process is known.

    ``bayes_proba(X_obs)`` maps observed (noisy) inputs (n, d) to the Bayes-optimal
    class probabilities (n, C); ``latent(X)`` evaluates the true latent functions at
    noiseless inputs (n, d) -> (n, C); ``params`` records the hyper-parameters.  The
    noiseless inputs of each data set are in ``dataset.aux["X_true"]``.

    A GP draw can leave a class with no region at all (roughly 1 seed in 10 for both
    `toy_1d` and `synthetic_2d` at the defaults); check ``train.class_counts()`` where
    an experiment needs every class.
    """

    train: NoisyDataset
    test: NoisyDataset
    bayes_proba: Callable[..., np.ndarray]
    latent: Callable[[np.ndarray], np.ndarray]
    params: Mapping[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- validation
def _check_count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1; got {value!r}")
    return int(value)


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {seed!r}")
    return int(seed)


def _check_nonnegative(name: str, value: Any) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number; got {value!r}") from None
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}")
    return value


def _check_positive(name: str, value: Any) -> float:
    if _check_nonnegative(name, value) == 0:
        raise ValueError(f"{name} must be > 0; got {value!r}")
    return float(value)


def _as_points(name: str, X: Any, dim: int) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1 and dim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[1] != dim:
        raise ValueError(f"{name} must have shape (n, {dim}); got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError(f"{name} contains NaN or inf")
    return X


def _ids(prefix: str, n: int) -> np.ndarray:
    return np.array([f"{prefix}-{i:06d}" for i in range(n)])


def _class_names(n_classes: int) -> tuple[str, ...]:
    return tuple(f"class_{c}" for c in range(n_classes))


# ------------------------------------------------------- GP-prior latent draws
def _se_grid_factor(grid: np.ndarray, lengthscale: float) -> np.ndarray:
    """A with A @ A.T = K, K the unit-variance SE correlation on ``grid``.

    The SE matrix on a fine grid is numerically singular, so Cholesky would need
    jitter; eigh with negative round-off eigenvalues clipped to 0 is exact instead.
    """
    K = np.exp(-0.5 * ((grid[:, None] - grid[None, :]) / lengthscale) ** 2)
    eigval, eigvec = np.linalg.eigh(K)
    return eigvec * np.sqrt(np.clip(eigval, 0.0, None))


class _GridLatent:
    """C independent GP(0, variance * SE(lengthscale)) draws on a box, as cubic splines."""

    def __init__(self, rng: np.random.Generator, low: float, high: float, dim: int, n_classes: int,
                 variance: float, lengthscale: float, n_grid: int):
        self.low, self.high, self.dim = low, high, dim
        self.grid = np.linspace(low, high, n_grid)
        factor = _se_grid_factor(self.grid, lengthscale)
        values = rng.standard_normal((n_classes,) + (n_grid,) * dim)
        for axis in range(dim):  # Kronecker product of per-axis factors, one axis at a time
            values = np.moveaxis(np.tensordot(factor, values, axes=(1, axis + 1)), 0, axis + 1)
        values *= np.sqrt(variance)
        if dim == 1:
            spline = interpolate.make_interp_spline(self.grid, values.T, k=3)
            self._evaluate = lambda X: spline(X[:, 0])
        elif dim == 2:
            splines = [interpolate.RectBivariateSpline(self.grid, self.grid, v, kx=3, ky=3) for v in values]
            self._evaluate = lambda X: np.stack([s.ev(X[:, 0], X[:, 1]) for s in splines], axis=1)
        else:
            raise ValueError(f"only 1-D and 2-D GP-prior problems are implemented; got dim={dim}")

    def __call__(self, X: Any) -> np.ndarray:
        """Latent values (n, C) at noiseless inputs inside the box."""
        X = _as_points("X", X, self.dim)
        outside = (X < self.low) | (X > self.high)
        if outside.any():
            row = int(np.nonzero(outside.any(axis=1))[0][0])
            raise ValueError(
                f"latent functions are defined on [{self.low}, {self.high}]^{self.dim} only; "
                f"row {row} is {X[row].tolist()}"
            )
        return self._evaluate(X)

    def labels(self, X: np.ndarray) -> np.ndarray:
        """Eq. (1) of the paper: y = argmax_c f_c(x), no label noise."""
        return np.argmax(self(X), axis=1).astype(np.int64)


# ------------------------------------------------- Bayes-optimal predictive
def _log_normal_interval_mass(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log(Phi(b) - Phi(a)) for a <= b, accurate far into either tail.

    Intervals above 0 are reflected below it, where Phi is small and its log is
    exact, so the difference never cancels catastrophically.
    """
    flip = a > 0
    lo = np.where(flip, -b, a)
    hi = np.where(flip, -a, b)
    log_hi = special.log_ndtr(hi)
    with np.errstate(divide="ignore"):
        return log_hi + np.log1p(-np.exp(special.log_ndtr(lo) - log_hi))


def _box_posterior_proba(X_obs: np.ndarray, noise_std: Any, edges: Sequence[np.ndarray],
                         cell_labels: np.ndarray, n_classes: int, chunk: int = 1024) -> np.ndarray:
    """p(y = c | x~) when x ~ U(box), x~ = x + N(0, noise_std^2 I), labels constant on cells.

    ``noise_std`` is one number, or one per row (n,) for heteroscedastic noise.

    The box is cut into a rectangular grid of cells (``edges[j]`` along axis j) with
    one label each.  The posterior p(x | x~) is a product of truncated normals, so the
    probability of each cell is a product of 1-D normal interval masses and the sum
    over cells contracts one axis at a time.  Exact when the cells are the true class
    regions (1-D); a midpoint rule on the label field otherwise.  Rows are processed in
    chunks so memory stays bounded for large inputs.
    """
    one_hot = np.eye(n_classes)[cell_labels]  # (m_1, ..., m_d, C), first axis contracted first
    out = np.empty((X_obs.shape[0], n_classes))
    std = np.broadcast_to(np.asarray(noise_std, dtype=np.float64), X_obs.shape[:1])
    for start in range(0, X_obs.shape[0], chunk):
        rows = X_obs[start : start + chunk]
        row_std = std[start : start + chunk, None]
        proba = one_hot
        for j, e in enumerate(edges):
            z = (e[None, :] - rows[:, j : j + 1]) / row_std
            log_w = _log_normal_interval_mass(z[:, :-1], z[:, 1:])
            w = np.exp(log_w - special.logsumexp(log_w, axis=1, keepdims=True))
            proba = np.einsum("ni,ni...->n...", w, proba) if j else np.einsum("ni,i...->n...", w, proba)
        out[start : start + chunk] = proba
    return out


def _class_intervals(latent: _GridLatent, resolution: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """Exact 1-D class regions: edges [low, b_1, ..., high] and the label of each interval.

    The argmax is scanned on a grid of step ``resolution`` and every change of label is
    refined by root finding on f_a - f_b.  A region narrower than the step can be missed;
    its probability mass is below resolution / (high - low).
    """
    xs = np.linspace(latent.low, latent.high, int(np.ceil((latent.high - latent.low) / resolution)) + 1)
    lab = latent.labels(xs)
    edges, labels = [latent.low], [lab[0]]
    for i in np.nonzero(lab[1:] != lab[:-1])[0]:
        left, right = lab[i], lab[i + 1]

        def gap(x: float, left: int = left, right: int = right) -> float:
            f = latent(np.array([[x]]))[0]
            return float(f[left] - f[right])

        edges.append(optimize.brentq(gap, xs[i], xs[i + 1], xtol=1e-12))
        labels.append(right)
    edges.append(latent.high)
    return np.asarray(edges), np.asarray(labels, dtype=np.int64)


def _one_hot_at(latent: _GridLatent, X_obs: np.ndarray, n_classes: int) -> np.ndarray:
    """Noise-free limit: the observed input is the true one."""
    return np.eye(n_classes)[latent.labels(X_obs)]


def _gp_prior_problem(generator: str, prefix: str, dim: int, box: tuple[float, float], variance: float,
                      lengthscale: float, noise_var: float, n_train: Any, n_test: Any, seed: Any,
                      feature_names: tuple[str, ...], n_classes: int = 3
                      ) -> tuple[_GridLatent, NoisyDataset, NoisyDataset, dict[str, Any]]:
    """Shared recipe of sec. 5.1 / 5.2: latent draws, uniform true inputs, argmax labels, Gaussian input noise.

    The latent functions, the train set and the test set come from independent child
    streams of ``seed``, so changing ``n_train`` changes neither the functions nor the
    test set.
    """
    n_train, n_test, seed = _check_count("n_train", n_train), _check_count("n_test", n_test), _check_seed(seed)
    variance, lengthscale = _check_positive("variance", variance), _check_positive("lengthscale", lengthscale)
    low, high = box
    n_grid = int(np.ceil(50 * (high - low) / lengthscale)) + 1  # grid step = lengthscale / 50
    rng_latent, rng_train, rng_test = np.random.default_rng(seed).spawn(3)
    latent = _GridLatent(rng_latent, low, high, dim, n_classes, variance, lengthscale, n_grid)
    params = {
        "generator": generator, "n_train": n_train, "n_test": n_test, "seed": seed, "n_classes": n_classes,
        "kernel": "squared_exponential", "variance": variance, "lengthscale": lengthscale,
        "domain": [low, high], "noise_variance": noise_var, "latent_grid_points_per_axis": n_grid,
    }
    splits = []
    for split, n, rng in [("train", n_train, rng_train), ("test", n_test, rng_test)]:
        X_true = rng.uniform(low, high, size=(n, dim))
        X_obs = X_true + np.sqrt(noise_var) * rng.standard_normal(X_true.shape)
        splits.append(NoisyDataset(
            X=X_obs,
            X_var=np.full_like(X_obs, noise_var),
            y=latent.labels(X_true),
            class_names=_class_names(n_classes),
            feature_names=feature_names,
            ids=_ids(f"{prefix}-{split}", n),
            aux={"X_true": X_true},
            meta={**params, "split": split},
        ))
    return latent, splits[0], splits[1], params


# ------------------------------------------------------------------ toy 1-D
def toy_1d(n_train: int = 1000, n_test: int = 1000, noise_std: float = 0.1, seed: int = 0, *,
           variance: float = 1.0, lengthscale: float = 0.75) -> SyntheticProblem:
    """The 1-D three-class toy problem of sec. 5.1 (Villacampa-Calvo et al.).

    Three latent functions are drawn from a zero-mean GP prior with SE kernel
    (``variance`` 1, ``lengthscale`` 0.75: on [-3, 3] the argmax then changes class
    about 2-6 times, so the classes alternate and the boundaries are far apart compared
    with the noise), true x ~ U[-3, 3], y = argmax_c f_c(x) at the noiseless x, and the
    observed x~ = x + N(0, noise_std^2); ``X_var`` is noise_std^2 everywhere.

    ``bayes_proba(X_obs)`` is exact: the class regions are located by root finding and
    p(y = c | x~) is the mass of c's intervals under the truncated normal
    p(x | x~) ∝ U[-3, 3](x) N(x~ | x, noise_std^2), i.e. differences of normal CDFs.
    ``params["decision_boundaries"]`` lists the boundaries.

    The paper writes the noise as "V_i = 0.1 I"; V is a covariance elsewhere in the
    paper, so its table may correspond to noise_std = sqrt(0.1) rather than 0.1.
    """
    noise_std = _check_nonnegative("noise_std", noise_std)
    n_classes = 3
    latent, train, test, params = _gp_prior_problem(
        "toy_1d", "toy1d", 1, (-3.0, 3.0), variance, lengthscale, noise_std**2, n_train, n_test, seed, ("x",), n_classes
    )
    edges, labels = _class_intervals(latent)

    def bayes_proba(X_obs: Any) -> np.ndarray:
        """Bayes-optimal p(y | observed x~), shape (n, 3)."""
        X_obs = _as_points("X_obs", X_obs, 1)
        if noise_std == 0:
            return _one_hot_at(latent, X_obs, n_classes)
        return _box_posterior_proba(X_obs, noise_std, [edges], labels, n_classes)

    params = {**params, "noise_std": noise_std, "decision_boundaries": tuple(edges[1:-1].tolist())}
    return SyntheticProblem(train, test, bayes_proba, latent, params)


# ------------------------------------------------- heteroscedastic toy 1-D
def toy_1d_heteroscedastic(n_train: int = 800, n_test: int = 2000, seed: int = 0, *,
                           train_noise_std: tuple[float, float] = (0.02, 1.0),
                           test_noise_std: tuple[float, float] | None = None,
                           variance: float = 1.0, lengthscale: float = 0.75) -> SyntheticProblem:
    """``toy_1d`` with a noise level of its own for every point: the catalog's situation.

    As `toy_1d` (same latent functions for the same seed, x ~ U[-3, 3], y the argmax at the
    noiseless x), but point i is observed as x~_i = x_i + N(0, sd_i^2) with sd_i log-uniform
    in ``train_noise_std`` for the training points and in ``test_noise_std`` (default: the
    same range) for the test points, and ``X_var`` holds each sd_i^2.  Training on precise
    points and testing on noisy ones (e.g. (0.02, 0.15) and (0.3, 1.0)) is the shift from
    bright associated sources to faint unassociated ones.

    ``bayes_proba(X_obs, X_var)`` is exact: p(x | x~_i) ∝ U[-3, 3](x) N(x~_i | x, sd_i^2),
    integrated over the class intervals (differences of normal CDFs).
    """
    ranges = {"train": _check_range("train_noise_std", train_noise_std)}
    ranges["test"] = ranges["train"] if test_noise_std is None else _check_range("test_noise_std", test_noise_std)
    n_classes = 3
    latent, train, test, params = _gp_prior_problem(
        "toy_1d_heteroscedastic", "toy1dh", 1, (-3.0, 3.0), variance, lengthscale, 0.0, n_train, n_test, seed,
        ("x",), n_classes,
    )
    edges, labels = _class_intervals(latent)
    rng_train, rng_test = np.random.default_rng([_check_seed(seed), 1]).spawn(2)
    noisy = {}
    for split, data, rng in (("train", train, rng_train), ("test", test, rng_test)):
        low, high = np.log(ranges[split])
        sd = np.exp(rng.uniform(low, high, size=data.X.shape))
        X_obs = data.aux["X_true"] + sd * rng.standard_normal(data.X.shape)
        noisy[split] = NoisyDataset(X=X_obs, X_var=sd**2, y=data.y, class_names=data.class_names,
                                    feature_names=data.feature_names, ids=data.ids, aux=data.aux,
                                    meta={**data.meta, "noise_std_range": list(ranges[split])})

    def bayes_proba(X_obs: Any, X_var: Any) -> np.ndarray:
        """Bayes-optimal p(y | observed x~ with its variance), shape (n, 3)."""
        X_obs = _as_points("X_obs", X_obs, 1)
        var = np.asarray(X_var, dtype=np.float64).reshape(-1)
        if var.shape != X_obs.shape[:1] or not np.all(np.isfinite(var)) or np.any(var <= 0):
            raise ValueError(f"X_var must hold one positive variance per row ({X_obs.shape[0]}); got shape {var.shape}")
        return _box_posterior_proba(X_obs, np.sqrt(var), [edges], labels, n_classes)

    params = {**params, "noise_variance": None, "train_noise_std": list(ranges["train"]),
              "test_noise_std": list(ranges["test"]), "decision_boundaries": tuple(edges[1:-1].tolist())}
    return SyntheticProblem(noisy["train"], noisy["test"], bayes_proba, latent, params)


def _check_range(name: str, value: Any) -> tuple[float, float]:
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a (low, high) pair of noise standard deviations; got {value!r}") from None
    if not (np.isfinite(low) and np.isfinite(high) and 0 < low <= high):
        raise ValueError(f"{name} must satisfy 0 < low <= high; got {value!r}")
    return low, high


# -------------------------------------------------------------- synthetic 2-D
def synthetic_2d(n_train: int = 1000, n_test: int = 1000, noise_variance: float = 0.1, seed: int = 0, *,
                 variance: float = 0.5, lengthscale: float = float(np.sqrt(2.0))) -> SyntheticProblem:
    """The 2-D three-class problems of sec. 5.2 (the paper repeats them over 100 seeds).

    Latent functions from a GP prior with SE kernel, amplitude sigma^2 = 0.5 and no
    white-noise term on f (sigma_0^2 = 0).  The paper's "l_j = 2" divides the *squared*
    distance, k = sigma^2 exp(-1/2 sum_j (x_j - x'_j)^2 / l_j), so the lengthscale is sqrt(2).
    True inputs are uniform in [-2.5, 2.5]^2, labels the argmax at the noiseless x,
    observed x~ = x + N(0, noise_variance I); the paper uses variances 0.1, 0.25, 0.5.

    ``bayes_proba(X_obs, n_cells=400)`` integrates the label field against
    p(x | x~) ∝ 1_box(x) N(x~ | x, noise_variance I) by quadrature on an
    n_cells x n_cells grid (label at each cell centre, exact truncated-normal mass per
    cell).  Unlike Monte Carlo it is deterministic and does not report probability 0
    for a class just because no sample landed in it (an infinite test NLL); its error
    shrinks with ``n_cells`` (~1e-3 at the default for the paper's noise levels).
    """
    noise_variance = _check_nonnegative("noise_variance", noise_variance)
    n_classes = 3
    latent, train, test, params = _gp_prior_problem(
        "synthetic_2d", "synth2d", 2, (-2.5, 2.5), variance, lengthscale, noise_variance, n_train, n_test, seed,
        ("x1", "x2"), n_classes,
    )

    def bayes_proba(X_obs: Any, n_cells: int = 400) -> np.ndarray:
        """Bayes-optimal p(y | observed x~), shape (n, 3), by quadrature on n_cells^2 cells."""
        X_obs = _as_points("X_obs", X_obs, 2)
        n_cells = _check_count("n_cells", n_cells)
        if noise_variance == 0:
            return _one_hot_at(latent, X_obs, n_classes)
        edges = np.linspace(latent.low, latent.high, n_cells + 1)
        mid = 0.5 * (edges[:-1] + edges[1:])
        grid = np.stack(np.meshgrid(mid, mid, indexing="ij"), axis=-1).reshape(-1, 2)
        labels = latent.labels(grid).reshape(n_cells, n_cells)
        return _box_posterior_proba(X_obs, np.sqrt(noise_variance), [edges, edges], labels, n_classes)

    return SyntheticProblem(train, test, bayes_proba, latent, params)


# ------------------------------------------------------------------ waveform
def _waveform_base() -> np.ndarray:
    """Breiman's base waves (3, 21): h1(i) = max(6 - |i - 11|, 0), h2(i) = h1(i - 4), h3(i) = h1(i + 4)."""
    i = np.arange(1, 22)
    return np.stack([np.maximum(6 - np.abs(i - centre), 0) for centre in (11, 15, 7)]).astype(np.float64)


_WAVEFORM_PAIRS = ((0, 1), (0, 2), (1, 2))  # class 0 mixes (h1, h2), class 1 (h1, h3), class 2 (h2, h3)


def waveform(n: int = 1000, seed: int = 0) -> NoisyDataset:
    """Breiman's waveform data (CART book, Breiman et al. 1984, pp. 49-55): 21 features, 3 classes.

    Classes are equiprobable; class k mixes two base waves with one u ~ U[0, 1] per
    example, x_i = u h_a(i) + (1 - u) h_b(i) + N(0, 1).  The N(0, 1) is part of the
    generating process, not a measurement error bar, so ``X_var`` is zero (sec. 5.3
    injects noise on top with `inject_noise`).  The paper uses n = 1000.
    """
    n, seed = _check_count("n", n), _check_seed(seed)
    rng = np.random.default_rng(seed)
    base = _waveform_base()
    y = rng.integers(0, 3, size=n)
    u = rng.uniform(size=(n, 1))
    first, second = np.array(_WAVEFORM_PAIRS).T
    X = u * base[first[y]] + (1 - u) * base[second[y]] + rng.standard_normal((n, 21))
    return NoisyDataset(
        X=X,
        X_var=np.zeros_like(X),
        y=y.astype(np.int64),
        class_names=_class_names(3),
        feature_names=tuple(f"x{i}" for i in range(1, 22)),
        ids=_ids("waveform", n),
        aux={"u": u[:, 0]},
        meta={"generator": "waveform", "n": n, "seed": seed},
    )


# ------------------------------------------------------------ noise injection
def inject_noise(dataset: NoisyDataset, variance: float | Sequence[float] | np.ndarray, seed: int = 0) -> NoisyDataset:
    """Add N(0, variance) to X and ``variance`` to X_var, as in sec. 5.3 of the paper.

    ``variance`` is a scalar, one value per feature, or one per value (an array of X's shape: heteroscedastic
    noise, each source with its own error bars), in the units of ``dataset.X``;
    the paper's levels (0.1, 0.25, 0.5) assume standardised features, so standardise
    first: fit `gpal.data.standardizer.Standardizer` on the training split, transform train and
    test, then inject (each split with its own seed).  Returns a new data set; the
    input is untouched.  ``meta["noise_injections"]`` accumulates what was added.
    """
    if not isinstance(dataset, NoisyDataset):
        raise TypeError(f"dataset must be a NoisyDataset; got {type(dataset).__name__}")
    seed = _check_seed(seed)
    try:
        var = np.asarray(variance, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"variance must be a number or one number per feature; got {variance!r}") from None
    if var.ndim == 1 and var.shape != (dataset.n_features,) or var.ndim == 2 and var.shape != dataset.X.shape \
            or var.ndim > 2:
        raise ValueError(
            f"variance must be a scalar, have shape ({dataset.n_features},) (one per feature "
            f"{list(dataset.feature_names)}) or X's shape {dataset.X.shape} (one per value); got shape {var.shape}"
        )
    bad = np.any(np.broadcast_to(~np.isfinite(var) | (var < 0), dataset.X.shape), axis=0)
    if bad.any():
        names = [f for f, b in zip(dataset.feature_names, bad) if b]
        raise ValueError(f"variance must be finite and >= 0 (a variance, not a std); got {variance!r}, bad for {names}")
    noise = np.random.default_rng(seed).standard_normal(dataset.X.shape) * np.sqrt(var)
    # one value per source is the data set's X_var itself: the record says so rather than copy it
    record = {"variance": "per value" if var.ndim == 2 else var.tolist(), "seed": seed}
    return dataset.with_features(
        dataset.X + noise,
        dataset.X_var + var,
        noise_injections=[*dataset.meta.get("noise_injections", []), record],
    )


# -------------------------------------------------------- scikit-learn sets
def _sklearn_dataset(name: str, loader: Callable[[], Any], noise_variance: float | None, seed: int) -> NoisyDataset:
    bunch = loader()
    X = np.asarray(bunch.data, dtype=np.float64)
    data = NoisyDataset(
        X=X,
        X_var=np.zeros_like(X),
        y=np.asarray(bunch.target, dtype=np.int64),
        class_names=tuple(str(c) for c in bunch.target_names),
        feature_names=tuple(bunch.feature_names),
        ids=_ids(name, X.shape[0]),
        meta={"generator": name, "source": f"sklearn.datasets.load_{name}", "noise_variance": noise_variance,
              "seed": seed},
    )
    if noise_variance is None:
        return data
    return inject_noise(Standardizer.fit(data).transform(data), noise_variance, seed)


def _check_optional_variance(noise_variance: Any) -> float | None:
    return None if noise_variance is None else _check_nonnegative("noise_variance", noise_variance)


def wine(noise_variance: float | None = None, seed: int = 0) -> NoisyDataset:
    """UCI wine (178 x 13, 3 classes) from scikit-learn's bundled copy, no download.

    ``noise_variance=None`` gives the raw features.  A number (0.0 included, so a
    sweep over 0.0, 0.1, 0.25, 0.5 stays on one scale) standardises the *whole* set
    and injects that variance: quick, but the test rows leak into the scaling.
    Rigorous experiments (sec. 5.3) fit `Standardizer` on the train split only and
    call `inject_noise` per split.
    """
    from sklearn.datasets import load_wine

    return _sklearn_dataset("wine", load_wine, _check_optional_variance(noise_variance), _check_seed(seed))


def wine_heteroscedastic(seed: int = 0, units: float = 1.0) -> NoisyDataset:
    """UCI wine (`wine`) in its own units, each value with its own measured error: a standard deviation drawn
    log-uniformly between 5 % and 50 % of its feature's spread, its noise added to X and its square given as X_var.

    A set whose features span four orders of magnitude of spread (0.1 to 300) and whose error bars differ from row
    to row, as a catalog's do: what a scaler must carry X_var through.  ``units`` multiplies every feature (and its
    error bars), e.g. 0.05 for features whose spreads lie below 1.
    """
    data = wine()
    fraction = 10 ** np.random.default_rng([_check_seed(seed), 1]).uniform(np.log10(0.05), np.log10(0.5), data.X.shape)
    noisy = inject_noise(data, (fraction * data.X.std(axis=0)) ** 2, seed)
    scale = _check_positive("units", units)
    return noisy.with_features(noisy.X * scale, noisy.X_var * scale**2, units=scale)


def digits(noise_variance: float | None = None, seed: int = 0) -> NoisyDataset:
    """scikit-learn's 8x8 digits (1797 x 64, 10 classes "0".."9"), bundled, no download.

    ``noise_variance`` as in `wine`.  Border pixels that are constant keep scale 1
    under standardisation.
    """
    from sklearn.datasets import load_digits

    return _sklearn_dataset("digits", load_digits, _check_optional_variance(noise_variance), _check_seed(seed))
