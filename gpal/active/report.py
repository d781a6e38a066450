"""The report of an active-learning run, rebuilt from its checkpoint: learning curves, the query log, report.md.

A run folder of ``gpal active`` holds the loop's checkpoint in `CHECKPOINT_DIR` (and, with
the file oracle, the query files in ``queries/``); `write_active_report` also reads a bare
checkpoint folder, one with the loop's `STATE_FILE` at its top.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpal.active.acquisition import expected_yield
from gpal.active.checkpoint import STATE_FILE, read_state
from gpal.active.oracles import NOTHING_FOUND

__all__ = ["ACTIVE_FOLDER", "CHECKPOINT_DIR", "is_active_folder", "write_active_report"]

#: The loop's checkpoint inside a run folder of ``gpal active``.
CHECKPOINT_DIR = "checkpoint"
#: What marks an active-learning run folder, in words (``gpal report`` names it when a folder is none of its kinds).
ACTIVE_FOLDER = f"an active-learning run ({CHECKPOINT_DIR}/{STATE_FILE} or {STATE_FILE})"


def _checkpoint(folder: Path) -> Path:
    return folder / CHECKPOINT_DIR if (folder / CHECKPOINT_DIR / STATE_FILE).is_file() else folder


def is_active_folder(folder: Path) -> bool:
    """Whether ``folder`` is a run folder of ``gpal active`` or a bare checkpoint of the loop."""
    return (_checkpoint(folder) / STATE_FILE).is_file()


def write_active_report(folder: str | Path, *, pool_cut_by_flag: bool = False) -> Path:
    """Learning curves, the query log and ``report.md`` of an active-learning run, from its checkpoint.

    ``pool_cut_by_flag``: the pool held only sources a "none of these" flag had left in (``gpal active
    --oracle file``), so an outcome in no trained class is named as a miss of that flag."""
    import pandas as pd

    from gpal.evaluation.plots import plot_learning_curves, save_figure
    from gpal.evaluation.reports import write_report, write_table

    folder = Path(folder)
    state = read_state(_checkpoint(folder))
    curves = pd.DataFrame(state["metrics"])
    acquisition = state["config"]["acquisition"]["name"]
    tables = {"Test metrics after each query": write_table(folder / "learning_curve", curves.round(4), data=curves)}
    queries = pd.DataFrame([{"query": q["query"], "Source_Name": i, "score": s, "label": lab}
                            for q in state["queries"] for i, s, lab in zip(q["ids"], q["scores"], q["labels"])],
                           columns=["query", "Source_Name", "score", "label"])
    tables["Queried sources"] = write_table(folder / "queries_log", queries.round(4), data=queries)
    figures = {}
    if "error" in curves and len(curves) > 1:
        # a query whose sources were all outcomes outside the classes trains on nothing new: its point is the last
        # model at that number of labelled sources
        tidy = curves.drop_duplicates("n_labelled", keep="last").assign(
            method=state["config"]["estimator"]["class"].rsplit(".", 1)[-1], strategy=acquisition, repetition=0)
        for metric in ("error", "nll"):
            fig = plot_learning_curves(tidy, metric=metric, title=f"test {metric} against labelled sources")
            figures[f"Learning curve: test {metric}"] = save_figure(fig, folder / f"learning_curve_{metric}")
    return write_report(folder, "gpal active", figures, tables, _report_text(state, pool_cut_by_flag))


def _counted(n: int, one: str, many: str) -> str:
    """``n`` with the noun's singular or plural form: "1 query", "0 queries", "2 queries"."""
    return f"{n} {one if n == 1 else many}"


def _report_text(state: dict[str, Any], pool_cut_by_flag: bool) -> str:
    """The report's paragraph: the run's settings, its queries and what they found."""
    acquisition = state["config"]["acquisition"]["name"]
    pending = state.get("pending")
    return (f"Active learning with acquisition `{acquisition}`, batch size {state['config']['batch_size']}: "
            f"{_counted(len(state['initial_ids']), 'initial labelled source', 'initial labelled sources')}, "
            f"{_counted(len(state['queries']), 'query', 'queries')} answered."
            + (f" Query {pending['query']} waits for labels ({_counted(len(pending['ids']), 'source', 'sources')})."
               if pending else "")
            + _outcomes(state, pool_cut_by_flag)
            + (_discovery_yields(state) if acquisition == "discovery" else ""))


def _outcomes(state: dict[str, Any], pool_cut_by_flag: bool) -> str:
    """What the answered queries found beyond the classes, whether the model trained on it, and, where the
    "none of these" flag had cut the pool, that each was a miss of the flag."""
    outcomes = state["config"].get("outcomes", {})
    found = [lab for q in state["queries"] for lab in q["labels"] if lab in outcomes]
    if not found:
        return ""
    counts = {lab: found.count(lab) for lab in sorted(set(found), key=lambda v: (-found.count(v), v))}
    text = (f" {_counted(len(found), 'observed source', 'observed sources')} turned out to be outside the classes: "
            + ", ".join(f"{lab} {n}" + (f" (trained on as {outcomes[lab]})" if outcomes[lab] else "")
                        for lab, n in counts.items())
            + ("; it left the pool, and is in no training set unless mapped to a class." if len(found) == 1 else
               "; they left the pool, and those not mapped to a class are in no training set."))
    if pool_cut_by_flag:
        beyond = [lab for lab in found if lab != NOTHING_FOUND and outcomes[lab] is None]  # in no trained class
        answered = sum(len(q["labels"]) for q in state["queries"])
        missed = ("the flag missed none: no answered source was of another population" if not beyond else
                  "the one of another population is a source the flag missed" if len(beyond) == 1 else
                  f"each of the {len(beyond)} of another population is a source the flag missed")
        text += (f" The pool held only sources the \"none of these\" flag had not flagged, so {missed} "
                 f"({len(beyond)} of {answered} answered; each query file gives its `ood_score` against the threshold)"
                 + ("." if not beyond else "; the flag is not refitted on them."))
    return text


def _discovery_yields(state: dict[str, Any]) -> str:
    """Expected (from the probabilities at query time) and found target sources per answered query."""
    import numpy as np

    config = state["config"]["acquisition"]
    if config.get("exploration"):
        return (f" Discovery of `{config['target']}` with exploration {config['exploration']}: scores are upper "
                "bounds, not probabilities, so no expected yield is stated.")
    found = sum(lab == config["target"] for q in state["queries"] for lab in q["labels"])
    scores = [s for q in state["queries"] for s in q["scores"]]
    if not scores:
        return ""
    expected = expected_yield(np.clip(scores, 0.0, 1.0))
    return (f" Discovery of `{config['target']}`: {found} of {expected['n']} observed sources were `{config['target']}`; "
            f"the probabilities at query time expected {expected['expected']:.1f} (95% range {expected['low']}-"
            f"{expected['high']} if they are calibrated).")
