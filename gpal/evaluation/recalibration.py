"""Temperature scaling: one scalar that sharpens or flattens a classifier's probabilities, fitted on labelled rows.

A model that is right as often as it ranks well but too sure (or not sure enough) of itself is
recalibrated without changing its ranking by p_c -> p_c^b / sum_k p_k^b, with b = 1 / T the
inverse temperature (Guo et al. 2017, on log-probabilities rather than logits: a GP classifier's
probabilities are already averaged over its latent functions).  The NLL of the rescaled
probabilities, -b log p_y + log sum_k p_k^b, is convex in b (a one-parameter multinomial
logistic regression), so the minimiser on a bracket is found exactly.  The rows it is fitted on
must not be those it is judged on: a validation split the model was not trained on.
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
    Attributes after ``fit``: ``temperature_`` and ``n_classes_``.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.6, 0.4]])
    >>> t = TemperatureScaling().fit(p, np.array([0, 1, 0, 1]))
    >>> bool(t.temperature_ > 1)   # half right at 60-90% confidence: too sure, flattened
    True
    """

    def __init__(self, bounds: tuple[float, float] = (0.05, 20.0)) -> None:
        self.bounds = bounds

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
        self.n_classes_ = log_p.shape[1]
        return self

    def transform(self, proba: Any) -> np.ndarray:
        """``proba`` rescaled by the fitted temperature (rows sum to 1; each row's order of classes kept)."""
        if not hasattr(self, "temperature_"):
            raise ValueError("TemperatureScaling is not fitted; call fit(proba, y) on validation rows first")
        log_p = _log_proba(proba)
        if log_p.shape[1] != self.n_classes_:
            raise ValueError(f"proba has {log_p.shape[1]} classes; the temperature was fitted on {self.n_classes_}")
        return _rescaled(log_p, 1.0 / self.temperature_)
