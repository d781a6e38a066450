"""gpal.evaluation.recalibration: the fitted temperature is the NLL minimiser and recovers a known temperature."""

import numpy as np
import pytest

from gpal.evaluation.metrics import negative_log_likelihood
from gpal.evaluation.recalibration import TemperatureScaling


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_a_model_twice_too_sure_is_given_temperature_two():
    rng = np.random.default_rng(0)
    logits = rng.normal(scale=1.5, size=(20000, 3))
    truth = _softmax(logits)
    y = np.array([rng.choice(3, p=q) for q in truth])
    too_sure = _softmax(2.0 * logits)  # log p = 2 z - const: the true probabilities are too_sure ** (1 / 2)
    scaling = TemperatureScaling().fit(too_sure, y)
    assert scaling.temperature_ == pytest.approx(2.0, rel=0.05)
    assert np.allclose(scaling.transform(too_sure), truth, atol=0.03)


def test_the_temperature_minimises_the_nll_over_a_grid():
    rng = np.random.default_rng(1)
    p = rng.dirichlet([0.5, 0.5, 0.5, 0.5], size=300)
    q = _softmax(1.5 * np.log(p))  # the labels follow sharper probabilities than the model's
    y = np.array([rng.choice(4, p=row) for row in q])
    scaling = TemperatureScaling().fit(p, y)
    grid = np.linspace(0.1, 10.0, 2000)
    nll = [negative_log_likelihood(y, _softmax(np.log(p) / t)) for t in grid]
    fitted = negative_log_likelihood(y, scaling.transform(p))
    assert fitted <= min(nll) + 1e-7
    assert scaling.temperature_ == pytest.approx(grid[int(np.argmin(nll))], abs=0.01)


def test_temperature_one_changes_nothing_and_the_order_of_classes_is_kept():
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])
    scaling = TemperatureScaling()
    scaling.temperature_, scaling.n_classes_ = 1.0, 3
    assert np.allclose(scaling.transform(p), p)
    scaling.temperature_ = 3.0
    flat = scaling.transform(p)
    assert np.allclose(flat.sum(axis=1), 1) and (np.argsort(flat, axis=1) == np.argsort(p, axis=1)).all()
    assert flat.max() < p.max()


def test_bad_input_is_refused_by_name():
    p = np.array([[0.6, 0.4], [0.3, 0.7]])
    with pytest.raises(ValueError, match="not fitted"):
        TemperatureScaling().transform(p)
    with pytest.raises(ValueError, match="integer class codes"):
        TemperatureScaling().fit(p, np.array([0, 2]))
    with pytest.raises(ValueError, match="bounds"):
        TemperatureScaling(bounds=(2.0, 1.0)).fit(p, np.array([0, 1]))
    with pytest.raises(ValueError, match="fitted on 2"):
        TemperatureScaling().fit(p, np.array([0, 1])).transform(np.full((1, 3), 1 / 3))


def test_a_temperature_and_class_offsets_are_recovered_together():
    rng = np.random.default_rng(2)
    logits = rng.normal(scale=1.5, size=(20000, 3))
    offsets = np.array([0.0, 0.8, -0.5])
    truth = _softmax(logits / 0.7 + offsets)
    y = np.array([rng.choice(3, p=q) for q in truth])
    model = _softmax(logits)
    scaling = TemperatureScaling(class_bias=True).fit(model, y)
    assert scaling.temperature_ == pytest.approx(0.7, rel=0.05)
    assert np.allclose(scaling.bias_, offsets, atol=0.08)
    assert np.allclose(scaling.transform(model), truth, atol=0.03)
    # the offsets fitted are at least as good as the temperature alone, on the rows they were fitted on
    alone = TemperatureScaling().fit(model, y)
    assert negative_log_likelihood(y, scaling.transform(model)) <= negative_log_likelihood(y, alone.transform(model))


def test_without_offsets_the_bias_is_zero():
    p = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.6, 0.4]])
    assert np.array_equal(TemperatureScaling().fit(p, np.array([0, 1, 0, 1])).bias_, np.zeros(2))
