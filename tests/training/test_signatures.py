"""A trace is keyed by tokens no other type or value can reuse, even at a dead one's address."""

import gc

from gpal.training.signatures import _token


def test_a_class_made_where_a_dead_one_lived_gets_a_token_of_its_own():
    seen = {}
    for _ in range(200):  # CPython soon reuses a freed class's address for a new class
        cls = type("Part", (), {})
        address, token = id(cls), _token(cls)
        assert _token(cls) == token  # stable while it lives
        if address in seen:
            assert seen[address] != token
            return
        seen[address] = token
        del cls
        gc.collect()
    raise AssertionError("no address was reused; the test did not exercise anything")


def test_values_that_cannot_be_weakly_referred_to_are_keyed_by_their_repr_alone():
    assert _token(3) == _token(3) == 0 and _token("x") == 0
