"""A likelihood object saves with its model only where loading finds its class again: a subclass a user did not
register inherits its parent's name, so saving it is refused before anything is written."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gpflow")

import gpal  # noqa: E402
from gpal.estimators.noisy_gp import NoisyGPClassifier  # noqa: E402
from gpal.models import RobustMax  # noqa: E402

SETTINGS = {"num_inducing": 4, "epochs": 3, "batch_size": 20, "random_state": 0}


def _data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    return X, np.full_like(X, 0.05), np.where(X[:, 0] + 0.3 * rng.normal(size=30) > 0, "psr", "bll")


def test_a_likelihood_subclass_saves_once_registered(tmp_path):
    """A subclass a user did not register inherits its parent's name: saving it would reload the parent, so the
    save is refused, naming the call that makes it loadable."""

    class Sharper(RobustMax):
        """Robust-max under a class of this test alone."""

    X, X_var, y = _data()
    est = NoisyGPClassifier(likelihood=Sharper(num_classes=2), **SETTINGS).fit(X, y, X_var)
    with pytest.raises(ValueError, match=r"likelihood .*Sharper is not registered \(its name 'robustmax' is "
                                         r"RobustMax's\).*gpal.register_likelihood\('a_name', .*Sharper\)"):
        est.save(tmp_path / "model")
    assert not (tmp_path / "model").exists()
    gpal.register_likelihood("test_sharper", Sharper)
    try:
        est.save(tmp_path / "model")
        loaded = NoisyGPClassifier.load(tmp_path / "model")
        assert type(loaded.model_.likelihood) is Sharper
        np.testing.assert_array_equal(loaded.predict_proba(X, X_var), est.predict_proba(X, X_var))
    finally:
        gpal.unregister_likelihood("test_sharper")
