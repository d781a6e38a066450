""""None of these": a source unlike every source the classifier was trained on.

A classifier's probabilities sum to one over the classes it knows, so a supernova
remnant gets called a pulsar with confidence.  `PopulationOutlierScore` says when a
source lies outside the trained population: it fits the population's density of
*noiseless* features by extreme deconvolution (the Gaussian mixture of the main job's
population prior, `gpal.models.input_prior.fit_mixture_prior`) and scores a source by
its distance from that population in units of the population's spread plus the source's
own error bars,

    outlier score = -2 log sum_k w_k exp(-D_k^2 / 2),   D_k^2 = (x~ - mu_k)^T (Sigma_k + V)^-1 (x~ - mu_k),

so a faint source far from the population but with error bars that reach it is not
flagged, and a precise one in an empty region is; for a one-component population the
score is chi-squared with d degrees of freedom whatever the error bars.  So a faint source is
flagged about as often as a bright one, where the density -log p(x~ | V) (whose normalisation
falls as error bars widen) and a mixture fitted to the noisy values without error bars flag the
faint ones far more often, for the same share of left-out classes caught (docs/results.md,
"Fairness to faint sources"); the GP's latent variance relative to its prior hardly more than the share it must flag.  The threshold is set on
held-out sources of the trained classes at a chosen false-positive rate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpal.data.dataset import NoisyDataset
from gpal.data.standardizer import Standardizer
from gpal.estimators.base import check_predict_data

__all__ = ["OOD_FALSE_POSITIVE_RATE", "PopulationOutlierScore"]

#: The share of held-out sources of the trained classes that the main job's threshold flags.  Chosen on later
#: labels (docs/results.md, "The open sky"): at 5% the flag caught the non-blazar AGN no class holds no more often
#: than it flags anything, and set aside sources later releases called blazars or pulsars, with no gain the
#: ``other`` class had not already made; at 1% it keeps only the sources far outside the training population.
OOD_FALSE_POSITIVE_RATE = 0.01


#: Rows scored at once (`PopulationOutlierScore.score`): tens of MB of covariances, whatever the catalog's size.  A
#: multiple of 64, so that a row meets the SIMD lanes it met in one call and its score is the same to the bit (in
#: chunks of 7 rows two scores of 90 moved in their last digit).
_SCORE_ROWS = 4096


class PopulationOutlierScore:
    """Error-aware density of the training sources, and a threshold for "none of these".

    Fitted attributes: ``density_`` (`MixturePrior` in standardized units), ``standardizer_``,
    and after `calibrate`, ``threshold_``.

    Parameters
    ----------
    n_components
        Gaussian components of the deconvolved density (the population prior's 8).
    false_positive_rate
        share of held-out in-population sources `calibrate` lets the threshold flag.
    random_state
        seeds the k-means start of the deconvolution.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import PopulationOutlierScore
    >>> rng = np.random.default_rng(0)
    >>> train, held_out = rng.normal(size=(200, 2)), rng.normal(size=(100, 2))
    >>> scorer = PopulationOutlierScore(n_components=2).fit(train, np.full_like(train, 0.01))
    >>> scorer = scorer.calibrate(held_out, np.full_like(held_out, 0.01))   # flags 1% of these
    >>> sources = np.array([[0.0, 0.0], [6.0, 6.0], [6.0, 6.0]])
    >>> errors = np.array([[0.01, 0.01], [0.01, 0.01], [30.0, 30.0]])      # the last one is faint
    >>> scorer.is_outlier(sources, errors).tolist()
    [False, True, False]
    """

    def __init__(self, *, n_components: int = 8, false_positive_rate: float = OOD_FALSE_POSITIVE_RATE,
                 random_state: int = 0):
        self.n_components = n_components
        self.false_positive_rate = false_positive_rate
        self.random_state = random_state

    def fit(self, X: Any, X_var: Any = None) -> "PopulationOutlierScore":
        """Fit the deconvolved density of the training sources' features ``X`` with their variances ``X_var``.

        Returns
        -------
        PopulationOutlierScore
            ``self``, with ``density_`` and ``standardizer_``.
        """
        from gpal.models.input_prior import fit_mixture_prior

        if not 0 < self.false_positive_rate < 1:
            raise ValueError(f"false_positive_rate must be in (0, 1); got {self.false_positive_rate!r}")
        width = np.shape(X.X if isinstance(X, NoisyDataset) else X)[-1]
        X, X_var = check_predict_data(X, X_var, width, needs_variance=False, owner=type(self).__name__)
        self.standardizer_ = Standardizer.fit(X)
        self.density_ = fit_mixture_prior(*self.standardizer_.transform_arrays(X, X_var), self.n_components,
                                          self.random_state)
        return self

    def score(self, X: Any, X_var: Any = None) -> np.ndarray:
        """The outlier score per source (squared standardized distance): higher = less like the training sources.

        Returns
        -------
        numpy.ndarray
            (n,) scores; for a one-component density chi-squared with d degrees of freedom.
        """
        import tensorflow as tf

        if not hasattr(self, "density_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("this PopulationOutlierScore is not fitted yet; call fit(training sources) first")
        X, X_var = check_predict_data(X, X_var, self.density_.means.shape[1], needs_variance=False, owner=type(self).__name__)
        Z, Z_var = self.standardizer_.transform_arrays(X, X_var)
        # in row chunks: each row holds K (d, d) covariances (Sigma_k + its error bars) and their factors, 16 kB at
        # 8 components of 16 features, so a catalog at once grew by GiBs per 10^5 rows; a row's score is its own
        return np.concatenate([self.density_.mahalanobis(tf.constant(Z[start:start + _SCORE_ROWS]),
                                                         tf.constant(Z_var[start:start + _SCORE_ROWS])).numpy()
                               for start in range(0, Z.shape[0], _SCORE_ROWS)] or [np.zeros(0)])

    def calibrate(self, X: Any, X_var: Any = None) -> "PopulationOutlierScore":
        """Set ``threshold_`` so that ``false_positive_rate`` of these (held-out, in-population) sources score above it.

        Returns
        -------
        PopulationOutlierScore
            ``self``, with ``threshold_``.
        """
        scores = self.score(X, X_var)
        if scores.size < 1 / self.false_positive_rate:
            raise ValueError(f"calibrating a {self.false_positive_rate:.0%} false-positive rate needs at least "
                             f"{int(np.ceil(1 / self.false_positive_rate))} held-out sources; got {scores.size}")
        self.threshold_ = float(np.quantile(scores, 1 - self.false_positive_rate))
        return self

    def is_outlier(self, X: Any, X_var: Any = None) -> np.ndarray:
        """True where a source scores above the calibrated threshold: "none of the trained classes".

        Returns
        -------
        numpy.ndarray
            (n,) booleans.
        """
        if not hasattr(self, "threshold_"):
            raise ValueError("the outlier threshold is not set; call calibrate(held-out sources) first")
        return self.score(X, X_var) > self.threshold_

    def get_config(self) -> dict[str, Any]:
        """JSON-ready state: settings, standardizer, density and threshold.

        Returns
        -------
        dict
            ``n_components``, ``false_positive_rate``, ``random_state``, ``standardizer``, ``density``
            and ``threshold`` (None before `calibrate`).
        """
        return {"n_components": self.n_components, "false_positive_rate": self.false_positive_rate,
                "random_state": self.random_state, "standardizer": self.standardizer_.to_dict(),
                "density": self.density_.get_config(), "threshold": getattr(self, "threshold_", None)}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> "PopulationOutlierScore":
        """Inverse of `get_config`: the fitted (and, with a threshold, calibrated) score, as saved.

        Returns
        -------
        PopulationOutlierScore
            Ready to `score` (and `is_outlier` when the config holds a threshold).
        """
        from gpal.models.input_prior import prior_from_config

        scorer = cls(n_components=config["n_components"], false_positive_rate=config["false_positive_rate"],
                     random_state=config["random_state"])
        scorer.standardizer_ = Standardizer.from_dict(config["standardizer"])
        scorer.density_ = prior_from_config(config["density"])
        if config.get("threshold") is not None:
            scorer.threshold_ = float(config["threshold"])
        return scorer
