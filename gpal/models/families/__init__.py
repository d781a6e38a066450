"""Model families other than the noisy-input sparse GP: their maths only.

Each builds on the sparse-GP core (``gpal.models.sparse``); how they are trained lives
in ``gpal.training`` and their scikit-learn fronts in ``gpal.estimators``.
"""
