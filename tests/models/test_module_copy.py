"""A module copied while one of its bijectors' cached tensors dies: GPflow's deepcopy raises, gpal's copies."""

import gpflow
import numpy as np
import pytest
import tensorflow as tf
from tensorflow_probability.python.internal import cache_util

from gpal.models.module_copy import module_copy


@pytest.fixture
def traced_kernel():
    """A kernel whose transforms hold entries in TFP's shared cache, as any traced function leaves them."""
    kernel = gpflow.kernels.SquaredExponential(variance=1.5, lengthscales=[1.0, 2.0])
    tf.function(lambda x: kernel(x))(tf.constant([[0.0, 1.0]], tf.float64))
    assert kernel.lengthscales.transform._cache.weak_keys()
    return kernel


@pytest.fixture
def dying_entry(monkeypatch):
    """The first listing of a bijector's entries is followed by one entry's weak-reference callback, as when its
    tensor's graph is collected between GPflow's listing and its deletion (in another thread or by the collector)."""
    listed = cache_util.BijectorCache.weak_keys
    died = []

    def listing_then_death(cache, *args, **kwargs):
        keys = listed(cache, *args, **kwargs)
        mine = [key for key in keys if key.subkey[0] is cache.bijector]
        if mine and not died:
            cache.storage.maybe_del(mine[0])
            died.append(mine[0])
        return keys

    monkeypatch.setattr(cache_util.BijectorCache, "weak_keys", listing_then_death)
    return died


def test_gpflows_deepcopy_fails_where_an_entry_dies_while_it_clears(traced_kernel, dying_entry):
    with pytest.raises(KeyError):
        gpflow.utilities.deepcopy(traced_kernel)
    assert dying_entry


def test_module_copy_clears_what_is_left_and_copies(traced_kernel, dying_entry):
    copy = module_copy(traced_kernel)
    assert dying_entry
    assert copy is not traced_kernel and copy.lengthscales is not traced_kernel.lengthscales
    np.testing.assert_array_equal(copy.lengthscales.numpy(), [1.0, 2.0])
    assert copy.variance.numpy() == 1.5
    for parameter in traced_kernel.parameters:  # nothing of the original's is cached any more
        assert not [k for k in parameter.transform._cache.weak_keys() if k.subkey[0] is parameter.transform]
    copy.lengthscales.assign([3.0, 4.0])
    np.testing.assert_array_equal(traced_kernel.lengthscales.numpy(), [1.0, 2.0])
