"""Temperature scaling: one scalar that sharpens or flattens a classifier's probabilities, fitted on labelled rows.

A model that is right as often as it ranks well but too sure (or not sure enough) of itself is
recalibrated without changing its ranking by p_c -> p_c^b / sum_k p_k^b, with b = 1 / T the
inverse temperature (Guo et al. 2017, on log-probabilities rather than logits: a GP classifier's
probabilities are already averaged over its latent functions).  The NLL of the rescaled
probabilities, -b log p_y + log sum_k p_k^b, is convex in b (a one-parameter multinomial
logistic regression), so the minimiser on a bracket is found exactly.  The rows it is fitted on
must not be those it is judged on: a validation split the model was not trained on.

With ``class_bias=True`` each class also gets an offset, p_c -> p_c^b e^(a_c) / sum_k p_k^b e^(a_k)
(a_0 = 0): a model whose class mix is off (too many pulsars among the sources it is sure of) is
moved back, still by a convex fit (in b and a), and each class's ranking of the sources is kept.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpal.evaluation.metrics import PROBA_FLOOR

__all__ = ["TemperatureScaling"]


def _log_proba(proba: Any, name: str = "proba") -> np.ndarray:
    p = np.asarray(proba, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] == 0 or p.shape[1] < 2:
        raise ValueError(f"{name} must be an (n, C) probability matrix with n >= 1 and C >= 2; got shape {p.shape}")
    if not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1 + 1e-9:
        raise ValueError(f"{name} must hold finite probabilities in [0, 1]")
    return np.log(np.clip(p, PROBA_FLOOR, 1.0))


def _rescaled(log_p: np.ndarray, inverse_temperature: float) -> np.ndarray:
    z = inverse_temperature * log_p
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class TemperatureScaling:
    """p_c -> p_c^(1/T) / sum_k p_k^(1/T), T fitted by NLL on validation rows; T > 1 flattens, T < 1 sharpens.

    ``bounds``: the range of T searched (the NLL is convex in 1/T, so the fit is its minimiser there).
    ``class_bias``: fit an offset of each class's log-probability too (the first class's is 0).
    Attributes after ``fit``: ``temperature_``, ``bias_`` ((C,), zeros without ``class_bias``) and ``n_classes_``.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.6, 0.4]])
    >>> t = TemperatureScaling().fit(p, np.array([0, 1, 0, 1]))
    >>> bool(t.temperature_ > 1)   # half right at 60-90% confidence: too sure, flattened
    True
    """

    def __init__(self, bounds: tuple[float, float] = (0.05, 20.0), class_bias: bool = False) -> None:
        self.bounds = bounds
        self.class_bias = class_bias

    def fit(self, proba: Any, y: Any) -> "TemperatureScaling":
        """Find T minimising the NLL of ``y`` (codes 0..C-1) under the rescaled ``proba``."""
        from scipy.optimize import minimize_scalar

        low, high = (float(b) for b in self.bounds)
        if not 0 < low < high:
            raise ValueError(f"bounds must be 0 < low < high temperatures; got {self.bounds!r}")
        log_p = _log_proba(proba)
        codes = np.asarray(y)
        if codes.shape != (log_p.shape[0],) or not np.issubdtype(codes.dtype, np.integer) or codes.min() < 0 \
                or codes.max() >= log_p.shape[1]:
            raise ValueError(f"y must be {log_p.shape[0]} integer class codes in [0, {log_p.shape[1]}); got "
                             f"shape {codes.shape}, dtype {codes.dtype}")
        rows = np.arange(codes.size)

        def nll(b: float) -> float:
            z = b * log_p
            top = z.max(axis=1)
            return float(np.mean(top + np.log(np.exp(z - top[:, None]).sum(axis=1)) - z[rows, codes]))

        found = minimize_scalar(nll, bounds=(1.0 / high, 1.0 / low), method="bounded", options={"xatol": 1e-6})
        self.temperature_ = float(1.0 / found.x)
        self.bias_ = np.zeros(log_p.shape[1])
        self.n_classes_ = log_p.shape[1]
        if self.class_bias:
            self._fit_bias(log_p, codes, 1.0 / high, 1.0 / low)
        return self

    def _fit_bias(self, log_p: np.ndarray, codes: np.ndarray, b_low: float, b_high: float) -> None:
        """Inverse temperature and offsets together by L-BFGS from the temperature alone (a convex problem)."""
        from scipy.optimize import minimize

        n, c = log_p.shape
        onehot = np.eye(c)[codes]

        def nll_and_grad(theta: np.ndarray) -> tuple[float, np.ndarray]:
            b, a = theta[0], np.concatenate([[0.0], theta[1:]])
            q = _rescaled(log_p, b) * np.exp(a)
            q /= q.sum(axis=1, keepdims=True)
            z = b * log_p + a
            top = z.max(axis=1)
            value = np.mean(top + np.log(np.exp(z - top[:, None]).sum(axis=1)) - z[np.arange(n), codes])
            residual = (q - onehot) / n
            return float(value), np.concatenate([[np.sum(residual * log_p)], residual.sum(axis=0)[1:]])

        start = np.concatenate([[1.0 / self.temperature_], np.zeros(c - 1)])
        found = minimize(nll_and_grad, start, jac=True, method="L-BFGS-B",
                         bounds=[(b_low, b_high)] + [(None, None)] * (c - 1))
        self.temperature_ = float(1.0 / found.x[0])
        self.bias_ = np.concatenate([[0.0], found.x[1:]])

    def transform(self, proba: Any) -> np.ndarray:
        """``proba`` rescaled by the fitted temperature (rows sum to 1; each row's order of classes kept)."""
        if not hasattr(self, "temperature_"):
            raise ValueError("TemperatureScaling is not fitted; call fit(proba, y) on validation rows first")
        log_p = _log_proba(proba)
        if log_p.shape[1] != self.n_classes_:
            raise ValueError(f"proba has {log_p.shape[1]} classes; the temperature was fitted on {self.n_classes_}")
        q = _rescaled(log_p, 1.0 / self.temperature_) * np.exp(getattr(self, "bias_", np.zeros(self.n_classes_)))
        return q / q.sum(axis=1, keepdims=True)
