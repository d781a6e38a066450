"""The active-learning report's counts read right at 0, 1 and many ("1 query answered", not "1 queries")."""

from __future__ import annotations

import pytest

from gpal.active.report import _report_text


def _state(labels_per_query: list[list[str]], initial: int = 1, pending: int = 0) -> dict:
    return {"config": {"acquisition": {"name": "bald"}, "batch_size": 2, "outcomes": {"snr": None, "nothing": None,
                                                                                       "psr": "pulsar"}},
            "initial_ids": [f"init{i}" for i in range(initial)],
            "queries": [{"query": k + 1, "ids": [f"q{k}_{i}" for i in range(len(labels))], "labels": labels}
                        for k, labels in enumerate(labels_per_query)],
            "pending": {"query": len(labels_per_query) + 1, "ids": [f"p{i}" for i in range(pending)]} if pending else None}


@pytest.mark.parametrize(("queries", "said"), [([], "0 queries answered"), ([["bll"]], "1 query answered"),
                                               ([["bll"], ["fsrq"]], "2 queries answered")])
def test_the_number_of_queries_agrees_with_its_noun(queries, said):
    assert said in _report_text(_state(queries), pool_cut_by_flag=False)


def test_one_initial_source_and_one_pending_source_are_singular():
    text = _report_text(_state([], initial=1, pending=1), pool_cut_by_flag=False)
    assert "1 initial labelled source," in text and "waits for labels (1 source)" in text


@pytest.mark.parametrize(("labels", "said"), [
    (["psr", "bll"], "so the flag missed none: no answered source was of another population (0 of 2 answered"),
    (["snr", "bll"], "so the one of another population is a source the flag missed (1 of 2 answered"),
    (["snr", "snr"], "so each of the 2 of another population is a source the flag missed (2 of 2 answered"),
])
def test_the_misses_of_the_flag_read_right_at_zero_one_and_many(labels, said):
    text = _report_text(_state([labels]), pool_cut_by_flag=True)
    assert said in text
    assert "each of the 0" not in text and "each of the 1 " not in text


def test_one_outcome_outside_the_classes_is_singular():
    text = _report_text(_state([["snr", "bll"]]), pool_cut_by_flag=False)
    assert "1 observed source turned out to be outside the classes: snr 1; it left the pool" in text
