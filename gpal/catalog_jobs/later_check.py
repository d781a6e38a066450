"""The later-release check (``gpal check-later``): a model's classifications scored by what a later release found.

A held-out split measures a classifier on sources like the associated ones; the sources it is
for are the unassociated ones, fainter and more often in the Galactic plane.  A later release
associates some of them, which tests the predictions on the population they were made for
(Bhat & Malyshev 2022 did it from 3FGL to 4FGL-DR2).  The check takes a trained-model folder
(``gpal classify`` or ``gpal train``), classifies its release's unassociated and bcu sources,
links each to the later release (`gpal.catalogs.links`) and scores, beside the baselines
(`gpal.evaluation.baselines`, feature values only) refitted on the model's own training rows:

- **N-class** (N the model's classes, 4 for the main job): the sources the later release puts in one of the
  model's classes (a later bll, fsrq, psr, msp or one of the other populations for the main job): NLL, accuracy and
  balanced accuracy, with paired
  bootstrap intervals (`gpal.evaluation.comparison.bootstrap_comparison`);
- **AGN vs pulsar**: the earlier *unassociated* sources the later release associates with an
  AGN or a pulsar (coarse groups, `gpal.catalogs.schemes.coarse_group`): ROC AUC of
  p(pulsar), paired bootstrap of the difference to the model;
- **none of these**: the rate at which the model's outlier flag (``ood`` of a classify folder)
  fires on sources the later release calls "other" (neither AGN nor pulsar), beside its rate on
  the later AGN and pulsars; Jeffreys 95% intervals;
- **top-k pulsar yield**: of the k sources with the highest p(pulsar), how many the later
  release calls a pulsar (all classified sources are ranked: what a search would observe).

Every model's probabilities of a bcu source are scored as the main job gives them, with what the
catalog knows applied (a bcu is a blazar: `gpal.catalogs.known_classes`), so the comparison stays like
for like.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.catalog_jobs.bcu_types import split_bcu
from gpal.catalog_jobs.layout import CLASSIFICATIONS_CSV, LATER_CHECK_FILE, LATER_CHECK_SOURCES_FILE, located
from gpal.catalog_jobs.model_folders import TrainedModel, check_catalog_columns, check_features, load_trained
from gpal.catalog_jobs.pool_prior import adjust_to_pool, mixes_text, training_prior
from gpal.catalog_jobs.prediction import (
    DEFAULT_SELECT, known_class_probabilities, predict_proba_chunked, selection_pool,
)
from gpal.catalog_jobs.proba_columns import proba_column
from gpal.catalog_jobs.selection import CatalogSelection
from gpal.catalogs import load_catalog
from gpal.catalogs.classes import source_groups
from gpal.catalogs.known_classes import association_weight
from gpal.catalogs.links import link_later
from gpal.catalogs.releases import NEWEST_RELEASE, RELEASES, link_path
from gpal.catalogs.schemes import coarse_group
from gpal.data.dataset import NoisyDataset
from gpal.estimators import load_estimator
from gpal.evaluation.baselines import BASELINES, fit_baselines
from gpal.evaluation.comparison import bootstrap_comparison
from gpal.evaluation.intervals import binomial_interval
from gpal.evaluation.metrics import roc_auc
from gpal.files import write_files
from gpal.runs.output_dir import recorded_identity
from gpal.warning_filters import changed_filters

__all__ = ["LaterCheck", "LaterCheckInputs", "MODEL", "ReleaseLink",
           "check_later", "later_check_inputs", "later_check_table", "later_release_of", "link_releases",
           "later_check_files", "read_later_table", "write_later_check"]

#: The model's name in the check's tables.
MODEL = "gpal"
#: What the later release says where it has no class: no row linked, or a row with an empty / unk CLASS1.
_NO_LATER_CLASS = ("missing", "", "unk")
TOP_K = (10, 25, 50)
N_BOOT = 2000


@dataclass(frozen=True)
class LaterCheck:
    """What the check found: the scored sources (one row per classified source) and one row per model and measure."""

    earlier: dict
    later: dict
    through: list
    sources: pd.DataFrame
    measures: pd.DataFrame
    #: Moved group -> the class mix gpal's probabilities were moved to (`gpal.catalog_jobs.pool_prior`); None: not
    #: moved.
    pool_prior: dict | None = None

    def markdown(self) -> str:
        """The measures as a Markdown table, with a line saying what was scored."""
        via = f" (linked through {', '.join(self.through)})" if self.through else ""
        moved = "" if self.pool_prior is None else (
            f"; gpal's probabilities of the unassociated sources moved to their own class mix (pool prior: "
            f"{mixes_text(self.pool_prior)})")
        return (f"{self.earlier['release']} ({self.earlier['file']}) classifications scored by the classes "
                f"{self.later['release']} ({self.later['file']}) gives the same sources{via}{moved}; intervals: 95%, "
                f"paired bootstrap of {N_BOOT} resamples (Jeffreys for rates); diff = model - {MODEL}.\n\n"
                + shown_measures(self.measures).to_markdown(index=False))


def later_release_of(release: str) -> str | None:
    """The newest shipped release later than ``release`` that can be linked to it, or None (``release`` is newest)."""
    if release not in RELEASES or release == NEWEST_RELEASE:
        return None
    later = RELEASES[NEWEST_RELEASE]
    try:
        link_path(RELEASES[release], later)
    except ValueError:
        return None
    return later.name


def _training_rows(trained: TrainedModel, earlier: Any) -> Any:
    """The labelled sources the model was fitted on, rebuilt from its folder: its selection, less the held-out
    split of a classify run (the test_size and seed its run record holds); refused when the rebuilt rows differ."""
    t = trained.training
    selection = CatalogSelection(catalog=str(earlier.path), classes=t.get("class_spec", ",".join(t["classes"])),
                                 min_significance=t.get("min_significance"), features=tuple(t["features"]))
    with changed_filters():
        warnings.simplefilter("ignore")  # rows the model's features cannot use were reported when it was trained
        _, data = selection.load()
    run = recorded_identity(trained.folder) or {}
    if "test_size" in run:
        data = data.split(test_size=run["test_size"], seed=run["seed"], stratify=True)[0]
    return _same_rows(data, trained, f"rebuilt from {earlier.path.name}")


def _same_rows(train: NoisyDataset, trained: TrainedModel, how: str = "given") -> NoisyDataset:
    """``train``, refused unless its rows are those the model records."""
    recorded = trained.training.get("n_per_class", train.class_counts())
    if train.class_counts() != recorded:
        raise ValueError(f"{trained.folder}: the training rows {how} ({train.class_counts()}) differ from those the "
                         f"model records ({recorded}); the baselines need the same rows")
    return train


def _rate(k: int, n: int) -> dict:
    low, high = binomial_interval(k, n)
    return {"n": int(n), "value": k / n if n else float("nan"), "low": float(low), "high": float(high)}


@dataclass(frozen=True)
class ReleaseLink:
    """The model's release (``earlier``), a later one, the shipped releases between them (``through``) and, per
    row of the earlier release, the row of the later one that is the same source (``index``, -1: none)."""

    earlier: Any
    later: Any
    through: list
    index: np.ndarray


@dataclass(frozen=True)
class LaterCheckInputs:
    """What the check scores, whoever built it: `later_check_inputs` from a model folder (``gpal check-later``), or
    the main job from what it already has, so nothing is computed twice.

    ``releases``: the model's release, the later one whose classes score it, and how their sources link
    (`link_releases`); ``pool`` the earlier release's sources the model classified, with its
    features; ``train`` its training rows (refused unless they are the rows the model records);
    ``model_proba`` its probabilities of ``pool`` as its table gives them (what the catalog knows applied:
    `known_class_probabilities`); ``baseline_proba`` each baseline's probabilities of ``pool``, fitted on
    ``train`` (`gpal.evaluation.baselines`); ``compared`` name -> folder of other saved gpal models of the same
    classes and features (the main job's error-blind twin), scored beside it.  Made, it is checked:
    anything that can be refused is refused before the check scores anything.
    """

    trained: TrainedModel
    releases: ReleaseLink
    pool: NoisyDataset
    train: NoisyDataset
    model_proba: np.ndarray
    baseline_proba: Mapping[str, np.ndarray]
    compared: Mapping[str, str | os.PathLike] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_parts(self.trained, self.pool, self.train, self.compared)
        expected = (self.pool.n_samples, len(self.trained.classes))
        for name, p in {MODEL: self.model_proba, **self.baseline_proba}.items():
            if np.shape(p) != expected:
                raise ValueError(f"the probabilities of {name} have shape {np.shape(p)}; the sources to score and the "
                                 f"model's classes need {expected}")


def link_releases(trained: TrainedModel, later: str | os.PathLike = NEWEST_RELEASE,
                  earlier: str | os.PathLike | None = None) -> ReleaseLink:
    """The model's release linked to the later one, refused unless the later one is another release linked to it.

    The model's release is read again: a shipped release by name, else ``earlier``, the path of its file.
    ``later``: a shipped release or a file of one whose record links to the earlier release (directly,
    or through a shipped release: 3FGL -> 4FGL-DR4 -> FL16Y).

    Returns
    -------
    ReleaseLink
        The releases, loaded, and the link of their sources (`gpal.catalogs.links.link_later`).
    """
    record = trained.training["catalog"]
    source = earlier if earlier is not None else record.get("release")
    if earlier is None and (source not in RELEASES or RELEASES[source].file != record.get("file")):
        raise ValueError(f"{trained.folder} was trained on {record.get('file')} ({record.get('release')}), not a shipped "
                         "release file; give earlier=<the path of that file>")
    first = load_catalog(source)
    last = load_catalog(later)
    if last.release == first.release:
        raise ValueError(f"the later release {last.release} ({last.path.name}) is the model's own release; "
                         "give a later one (shipped: " + ", ".join(RELEASES) + ")")
    through = [load_catalog(r.name) for r in link_path(first.record, last.record)]
    return ReleaseLink(first, last, [c.release for c in through], link_later(first, last, through))


def _check_parts(trained: TrainedModel, pool: NoisyDataset, train: NoisyDataset,
                 compared: Mapping[str, str | os.PathLike]) -> None:
    """Refuse sources of other features, training rows other than the model's, a compared model of other classes."""
    check_features(trained, pool, "the sources to score")
    _same_rows(train, trained)
    for name, path in compared.items():
        other = load_estimator(path)
        if list(other.classes_) != list(trained.classes) or other.n_features_in_ != pool.X.shape[1]:
            raise ValueError(f"compared model {name!r} ({path}) has classes {list(other.classes_)} and "
                             f"{other.n_features_in_} features; the model has {list(trained.classes)} and "
                             f"{pool.X.shape[1]}")


def later_check_inputs(
    model: str | os.PathLike | TrainedModel,
    later: str | os.PathLike = NEWEST_RELEASE,
    *,
    earlier: str | os.PathLike | None = None,
    baselines: Sequence[str] = tuple(BASELINES),
    seed: int = 0,
    compared: Mapping[str, str | os.PathLike] | None = None,
) -> LaterCheckInputs:
    """The check's inputs built from a model folder (``gpal classify`` or ``gpal train``): its release's
    unassociated and bcu sources classified by the model, and ``baselines`` refitted on its training rows with
    ``seed``.  Everything that can be refused (no link, a compared model of other classes, ...) is refused
    before any prediction or fitting; see `LaterCheckInputs` and `link_releases`.

    Returns
    -------
    LaterCheckInputs
        What `check_later` scores.
    """
    trained = model if isinstance(model, TrainedModel) else load_trained(model)
    releases = link_releases(trained, later, earlier)
    check_catalog_columns(trained, releases.earlier)
    pool = selection_pool(releases.earlier, DEFAULT_SELECT, trained.training["features"])
    train = _training_rows(trained, releases.earlier)
    compared = dict(compared or {})
    _check_parts(trained, pool, train, compared)
    model_proba = known_class_probabilities(
        trained, pool.aux["CLASS1"], predict_proba_chunked(trained.model_dir, pool.X, pool.X_var, progress=False),
        association=association_weight(releases.earlier, [str(i) for i in pool.ids]))[0]
    # the bcu split as the folder's classify run split them (a classify folder with a blazar-type model)
    model_proba = split_bcu(trained.record_file.parent, releases.earlier, pool, model_proba, trained.classes)[0]
    baseline_proba = fit_baselines(train.X, train.y, pool.X, names=list(baselines), random_state=seed)
    return LaterCheckInputs(trained, releases, pool, train, model_proba, baseline_proba, compared)


def check_later(inputs: LaterCheckInputs, *, seed: int = 0, top_k: Sequence[int] = TOP_K,
                pool_prior: bool | None = None, classified: pd.DataFrame | None = None) -> LaterCheck:
    """Score the model's classifications of its release's unassociated and bcu sources by a later release.

    ``inputs``: what is scored (`LaterCheckInputs`, from `later_check_inputs` or the main job).  ``seed`` seeds the bootstrap.  ``pool_prior``: score gpal's
    probabilities (the model's and the compared models') with the unassociated sources moved to their own class
    mix, as ``gpal classify`` classifies by default (`gpal.catalog_jobs.pool_prior.adjust_to_pool`, the one rule;
    the baselines are left as a user would fit them); None: as the folder's classify run did.  ``classified``: the
    classifications whose ``ood`` flags are scored (None: those the model's folder holds, if any).

    Returns
    -------
    LaterCheck
        The scored sources and the measures.
    """
    trained, pool, compared = inputs.trained, inputs.pool, inputs.compared
    first, last = inputs.releases.earlier, inputs.releases.later
    rows = {name: i for i, name in enumerate(first.names)}
    linked = inputs.releases.index[[rows[str(n)] for n in pool.ids]]
    later_code = np.where(linked >= 0, last.class_codes[np.maximum(linked, 0)], "missing")

    classes = list(trained.classes)
    merge = trained.training.get("merge", {})
    codes = {c: tuple(merge.get(c, (c.lower(),))) for c in classes}
    proba = {MODEL: inputs.model_proba}
    others = {name: predict_proba_chunked(path, pool.X, pool.X_var, progress=False) for name, path in compared.items()}
    others.update(inputs.baseline_proba)
    # what the catalog knows (a bcu is a blazar) applies to every model alike; the model's table already has it
    association = association_weight(first, [str(i) for i in pool.ids])
    proba.update({name: known_class_probabilities(trained, pool.aux["CLASS1"], p, association=association)[0]
                  for name, p in others.items()})
    moved = None
    if pool_prior or (pool_prior is None and (recorded_identity(trained.folder) or {}).get("pool_prior")):
        groups, prior = source_groups(pool.aux["CLASS1"]), training_prior(trained.training["n_per_class"], classes)
        adjusted = {name: adjust_to_pool(proba[name], groups, prior, classes, merge=merge)
                    for name in (MODEL, *compared)}
        proba.update({name: result.proba for name, result in adjusted.items()})
        moved = adjusted[MODEL].groups

    sources = pd.DataFrame({"Source_Name": pool.ids, "CLASS1": pool.aux["CLASS1"],
                            "later_name": np.where(linked >= 0, last.names[np.maximum(linked, 0)], ""),
                            "later_class": later_code})
    for name, p in proba.items():
        for c, cls in enumerate(classes):
            sources[f"{proba_column(cls)}_{name}"] = p[:, c]
    flagged = _ood_flags(_saved_classifications(trained.folder) if classified is None else classified, pool.ids)
    if flagged is not None:
        sources["ood"] = flagged

    rows_out: list[dict] = []
    # N-class: later class among the model's
    label = np.array([next((k for k, c in enumerate(classes) if code in codes[c]), -1) for code in later_code])
    scored = label >= 0
    if scored.sum() >= 2:
        table = bootstrap_comparison(label[scored], {m: p[scored] for m, p in proba.items()}, reference=MODEL,
                                     n_boot=N_BOOT, random_state=seed)
        counts = ", ".join(f"{int(np.sum(label[scored] == k))} {c}" for k, c in enumerate(classes))
        for r in table[table.metric.isin(["nll", "accuracy", "balanced_accuracy"])].to_dict("records"):
            rows_out.append({"measure": f"{len(classes)}-class {r['metric']}", "sources": counts, "n": int(scored.sum()), **{
                k: r[k] for k in ("model", "value", "low", "high", "diff", "diff_low", "diff_high")}})
    # AGN vs pulsar among the earlier unassociated sources the later release associates
    pulsar_classes = [k for k, c in enumerate(classes) if coarse_group(codes[c][0]) == "pulsar"]
    group = np.array([coarse_group(c) if c not in _NO_LATER_CLASS else "" for c in later_code])
    if pulsar_classes:
        score = {m: p[:, pulsar_classes].sum(axis=1) for m, p in proba.items()}
        auc_rows = (np.asarray(pool.aux["CLASS1"]) == "") & np.isin(group, ["agn", "pulsar"])
        truth = (group[auc_rows] == "pulsar").astype(int)
        both = 0 < truth.sum() < truth.size  # an AUC needs both groups
        draws = np.random.default_rng(seed).integers(0, truth.size, (N_BOOT, truth.size)) if both else None
        boot = {m: roc_auc(truth[draws], s[auc_rows][draws]) for m, s in score.items()} if both else {}
        for m, s in score.items():
            row = {"measure": "AGN-vs-pulsar AUC", "model": m, "n": int(truth.size),
                   "sources": f"{int(truth.size - truth.sum())} AGN, {int(truth.sum())} pulsars",
                   "value": roc_auc(truth, s[auc_rows])}
            if both:
                diff = boot[m] - boot[MODEL]
                row.update(low=np.nanpercentile(boot[m], 2.5), high=np.nanpercentile(boot[m], 97.5),
                           diff=row["value"] - roc_auc(truth, score[MODEL][auc_rows]),
                           diff_low=np.nanpercentile(diff, 2.5), diff_high=np.nanpercentile(diff, 97.5))
            rows_out.append(row)
        later_pulsar = group == "pulsar"
        for k in top_k:
            for m, s in score.items():
                top = np.argsort(-s, kind="stable")[:k]
                rows_out.append({"measure": f"top-{k} pulsar yield", "model": m, "sources": "all classified",
                                 **_rate(int(later_pulsar[top].sum()), len(top))})
    if flagged is not None:
        other, known = group == "other", np.isin(group, ["agn", "pulsar"])
        rows_out.append({"measure": "none-of-these rate, later other", "model": MODEL,
                         "sources": ", ".join(f"{n} {c}" for c, n in pd.Series(later_code[other]).value_counts().items()),
                         **_rate(int(flagged[other].sum()), int(other.sum()))})
        rows_out.append({"measure": "none-of-these rate, later AGN+pulsar", "model": MODEL, "sources": "",
                         **_rate(int(flagged[known].sum()), int(known.sum()))})
    columns = ["measure", "model", "sources", "n", "value", "low", "high", "diff", "diff_low", "diff_high"]
    return LaterCheck(first.provenance(), last.provenance(), inputs.releases.through, sources,
                      pd.DataFrame(rows_out).reindex(columns=columns), moved)


def _saved_classifications(folder: Path) -> pd.DataFrame | None:
    """A classify folder's classifications (None: a folder without them)."""
    path = located(folder, CLASSIFICATIONS_CSV)
    return pd.read_csv(path, comment="#", dtype={"Source_Name": str}) if path.is_file() else None


def _ood_flags(table: pd.DataFrame | None, ids: Sequence[str]) -> np.ndarray | None:
    """The ``ood`` flag of the classifications ``table``, at ``ids``; None where it has none."""
    if table is None or "ood" not in table:
        return None
    flags = dict(zip(table["Source_Name"].str.strip(), table["ood"].astype(bool)))
    if not all(str(i) in flags for i in ids):
        return None
    return np.array([flags[str(i)] for i in ids])


def shown_measures(measures: pd.DataFrame) -> pd.DataFrame:
    """The measures as a table shows them: numbers to three decimals, blank where there is none."""
    shown = measures.assign(sources=measures["sources"].fillna(""))
    for c in ("value", "low", "high", "diff", "diff_low", "diff_high"):
        shown[c] = shown[c].map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
    return shown


def read_later_table(source: Any) -> pd.DataFrame:
    """The measures' CSV (`later_check_table` as written) read back: a blank cell is NaN, ``sources`` text."""
    return pd.read_csv(source, keep_default_na=False, na_values=[""])


def later_check_table(check: LaterCheck) -> pd.DataFrame:
    """The check's measures with the ``earlier`` and ``later`` releases: ``tables/later_check.csv``."""
    return check.measures.assign(earlier=check.earlier["release"], later=check.later["release"])


def later_check_files(check: LaterCheck) -> dict[str, str]:
    """The check's scored sources and measures (``tables/later_check.csv``) as CSV texts, by path in a model folder."""
    return {LATER_CHECK_SOURCES_FILE: check.sources.to_csv(index=False),
            LATER_CHECK_FILE: later_check_table(check).to_csv(index=False)}


def write_later_check(check: LaterCheck, folder: str | os.PathLike) -> Path:
    """Write `later_check_files` into ``folder``; the measures' path."""
    write_files(folder, later_check_files(check))
    return Path(folder) / LATER_CHECK_FILE
