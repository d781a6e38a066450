"""The open sky: what a run on an older release promised, scored by the classes later releases gave its sources.

The main job's default was chosen here (`gpal.catalogs.schemes.DEFAULT_SCHEME`, the pool prior's default in
`gpal.catalog_jobs.pool_prior`, the clean lists' flags in `gpal.catalog_jobs.candidates.DOUBTFUL_FLAGS`).  For each
shipped release older than FL16Y and each variant of `VARIANTS`, ``gpal classify`` runs into
``RUNS/<release>/<variant>`` (a finished folder is reused: the study resumes where it stopped); its later checks
(`LATER`: FL16Y, the run's own, and every later shipped release, by ``gpal check-later``; each
``tables/later_check_sources.csv`` holds each classified source's probabilities and the class the later release
gives it) are read as an observer would read the lists:

- **other caught**: of the unassociated sources the later release associates with a population that is neither an
  AGN nor a pulsar, the share the run put in an other class or flagged "none of these";
- **main leaked**: of those it associates with a blazar (bll, fsrq, bcu) or a pulsar, the share the run put there;
- **blazars expected / found**: the unassociated sources' summed blazar probability (bll, fsrq and, where it is a
  class, bcu) over the later blazars;
- **pulsar list expected / found**: of ``candidates_pulsar.csv``'s rows the later release classes (unk left out),
  the summed p_pulsar over the pulsars it found;
- **3-class NLL**: over every classified source the later release calls bll, fsrq, psr or msp, -log of the
  probability the run gave that class (a four-class model's mass on "other" counts against it), paired bootstrap
  against the first variant, and the same given that the source is one of the three (the three renormalised); and
  the model's own N-class NLL beside logistic regression with the same classes (the later check's).

**None of these** (`OOD_RATES`): the default variant's outlier score re-thresholded on its own held-out sources at
each false-positive rate, scored by FL16Y as above (the flag alone, and with the other class), with the share of
the labelled non-blazar AGN (the classes no class of the open sky holds) it flags: the rate's default
(`gpal.estimators.outliers.OOD_FALSE_POSITIVE_RATE`) was chosen here.

Why the default sets aside later blazars (`plane_shares`): the Galactic plane's share of the trained bll and fsrq,
of the untrained bcu, and of the DR4 run's unassociated sources FL16Y calls blazars, set aside or not.

With ``--flagged`` it also counts, over the default variant's target lists, how often a flagged candidate kept its
class, and the FL16Y default run's lists against every route of `gpal.catalogs.known_sources.known_about` (no
known source may be in a list).

    python lab/studies/bench_open_sky.py --runs runs/open_sky --flagged            # run what is missing, print
    python lab/studies/bench_open_sky.py --runs runs/open_sky --flagged --record lab/pages/records/results/open_sky.json
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from gpal.catalog_jobs.layout import (
    CLASSIFICATIONS_CSV, HELDOUT_FILE, LATER_CHECK_FILE, LATER_CHECK_SOURCES_FILE, LISTS_DIR, OOD_FILE, REPORT_FILE,
    located,
)
from gpal.evaluation.intervals import binomial_interval

from shared import code_commit  # the script's folder, first on its path; puts the pages' record format on the path

#: The releases a later one scores, oldest first.
RELEASES = ("3FGL", "4FGL", "4FGL-DR2", "4FGL-DR4")
#: The later releases that score them: FL16Y (the main job's own later check) and every shipped release after the run's
#: (``gpal check-later``): the ten pairs.
LATER = ("FL16Y", "4FGL-DR4", "4FGL-DR2", "4FGL")
#: Variant -> the ``gpal classify`` options beside the defaults.  The first is the earlier default (three classes,
#: the unassociated moved to their EM mix), the last today's.
VARIANTS = {
    "closed sky + pool prior": ["--classes", "blazar_pulsar", "--pool-prior"],
    "open sky + pool prior": ["--classes", "open_sky", "--pool-prior"],
    # the other class without the populations a pulsar powers or may power (pwn; spp, "SNR or PWN"): what the
    # confusion of pulsars with them costs and buys
    "open sky, other without spp and pwn": ["--classes", "bll,fsrq,pulsar=psr+msp,other=snr+glc+hmb+bin+lmb+nov+sfr"
                                            "+gc+sbg+gal", "--no-pool-prior"],
    # the other class without the globular clusters, whose gamma rays are their millisecond pulsars' (left untrained,
    # as the non-blazar AGN are): what training MSP spectra as "other" costs the pulsars
    "open sky, other without glc": ["--classes", "bll,fsrq,pulsar=psr+msp,other=spp+snr+pwn+hmb+bin+lmb+nov+sfr+gc"
                                    "+sbg+gal", "--no-pool-prior"],
    # the bcu trained as a class of their own: the blazars of the Galactic plane are mostly bcu (no optical spectrum
    # through the plane's extinction), so a model trained on bll and fsrq alone sees few of them
    "open sky, bcu as a class": ["--classes", "bll,fsrq,bcu,pulsar=psr+msp,other=spp+snr+glc+pwn+hmb+bin+lmb+nov+sfr"
                                 "+gc+sbg+gal", "--no-pool-prior"],
    "open sky": ["--classes", "open_sky", "--no-pool-prior"],
}
#: The variant that is the main job's default.
DEFAULT_VARIANT = "open sky"
BLAZARS, PULSARS = ("bll", "fsrq", "bcu"), ("psr", "msp")
#: Later classes that say nothing: none, "unknown nature", no counterpart in the later release.
NO_CLASS = ("", "unk", "missing")
N_BOOT = 2000
#: False-positive rates of the "none of these" flag the study compares.
OOD_RATES = (0.05, 0.02, 0.01)


def _slug(variant: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", variant)


def run(runs: Path, release: str, variant: str) -> Path:
    """The finished ``gpal classify`` folder of one release and variant (run here when missing)."""
    out = runs / release / _slug(variant)
    if not (out / REPORT_FILE).is_file():
        print(f"running gpal classify on {release} ({variant}) -> {out}", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "gpal.cli", "classify", "--catalog", release, "--out", str(out),
                        "--no-progress", "--quiet", *VARIANTS[variant]], check=True, stdout=subprocess.DEVNULL)
    return out


def checked(folder: Path, later: str) -> Path:
    """The folder holding a run's check against ``later``: the run's own for FL16Y, else ``later_<release>`` in it
    (``gpal check-later`` run here when missing, beside logistic regression)."""
    if later == "FL16Y":
        return folder
    out = folder / f"later_{later}"
    if not located(out, LATER_CHECK_FILE).is_file():
        print(f"running gpal check-later on {folder} against {later}", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "gpal.cli", "check-later", "--trained", str(folder), "--later", later,
                        "--baselines", "logistic", "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    return out


def _sources(folder: Path, check: Path | None = None) -> pd.DataFrame:
    """The later check's sources (in ``check``, the run's own when None) with the run's own predicted class and ood
    flag."""
    sources = pd.read_csv(located(check or folder, LATER_CHECK_SOURCES_FILE), keep_default_na=False)
    sources["later_class"] = sources["later_class"].astype(str).str.strip().str.lower()
    classified = pd.read_csv(located(folder, CLASSIFICATIONS_CSV), keep_default_na=False)
    return sources.merge(classified[["Source_Name", "predicted_class", "ood"]], on="Source_Name",
                         suffixes=("_check", ""))


def _classes(sources: pd.DataFrame, model: str = "gpal") -> list[str]:
    suffix = f"_{model}"
    return [c[2:-len(suffix)] for c in sources.columns if c.startswith("p_") and c.endswith(suffix)]


def _bool(values: pd.Series) -> np.ndarray:
    return values.astype(str).str.lower().isin(["true", "1"]).to_numpy()


def _unassociated_classed(sources: pd.DataFrame) -> pd.DataFrame:
    """The sources the run was given unassociated to which the later release gives a class."""
    return sources[(sources["CLASS1"].astype(str).str.strip() == "") & ~sources["later_class"].isin(NO_CLASS)]


def _called_other(sources: pd.DataFrame) -> np.ndarray:
    """Which sources the run put in an other class."""
    return np.char.startswith(sources["predicted_class"].to_numpy(str), "other")


def measures(folder: Path, check: Path | None = None) -> dict[str, float]:
    """The observer's measures of one run (this module's docstring), scored by the check in ``check``."""
    sources = _sources(folder, check)
    classes = _classes(sources)
    unassociated = _unassociated_classed(sources)
    later = unassociated["later_class"].to_numpy()
    other = ~np.isin(later, (*BLAZARS, *PULSARS))
    set_aside = _called_other(unassociated) | _bool(unassociated["ood"])
    blazars = unassociated[[f"p_{cls}_gpal" for cls in BLAZARS if cls in classes]].sum(axis=1).sum()
    expected, found, classed = list_yields(folder, check)["pulsar"]
    return {"unassociated later classed": len(unassociated), "of them other": int(other.sum()),
            "other caught": float(set_aside[other].mean()), "main leaked": float(set_aside[~other].mean()),
            "other caught count": int(set_aside[other].sum()), "main leaked count": int(set_aside[~other].sum()),
            "of them main": int((~other).sum()),
            "blazars expected / found": float(blazars / np.isin(later, BLAZARS).sum()),
            "pulsar list rows classed": classed, "pulsars expected": expected,
            "pulsars found": found, "pulsar list expected / found": expected / max(found, 1),
            "classes": ",".join(classes)}


def list_yields(folder: Path, check: Path | None = None) -> dict[str, tuple[float, int, int]]:
    """Each target list's promise against the later release: over the rows it classes (unk left out; a later bcu too
    from the BL Lac and FSRQ lists, whose type it leaves open), the summed probability of the list's class, the
    members found and the rows classed."""
    out = {}
    for cls, rows in _target_lists(folder, check):
        open_type = (rows["later_class"] == "bcu") & (cls in ("bll", "fsrq"))
        classed = rows[~rows["later_class"].isin(NO_CLASS) & ~open_type]
        out[cls] = (float(classed[f"p_{cls}"].sum()), int(_members(cls, classed["later_class"]).sum()), len(classed))
    return out


def _target_lists(folder: Path, check: Path | None = None) -> Iterator[tuple[str, pd.DataFrame]]:
    """Each full target list of the run in ``folder`` (class, its rows with the later class of the check in
    ``check``, the run's own when None)."""
    sources = _sources(folder, check)[["Source_Name", "later_class"]]
    for path in sorted(located(folder, LISTS_DIR).glob("candidates_*.csv")):
        if not path.stem.endswith("_clean"):
            yield (path.stem[len("candidates_"):],
                   pd.read_csv(path, keep_default_na=False).merge(sources, on="Source_Name"))


def _members(cls: str, later_class: pd.Series) -> pd.Series:
    """Which of a ``cls`` list's rows the later release puts in its class (a member of the other list: neither a
    blazar nor a pulsar)."""
    members = {"bll": ("bll",), "fsrq": ("fsrq",), "pulsar": PULSARS}.get(cls)
    return later_class.isin(members) if members else ~later_class.isin((*BLAZARS, *PULSARS))


def three_class_losses(folder: Path, check: Path | None = None, given_three: bool = False) -> pd.Series:
    """-log p(later class) of every classified source the later release calls bll, fsrq, psr or msp, by name; with
    ``given_three`` the probability given that the source is one of the three (each row's bll, fsrq and pulsar
    probabilities renormalised): how well the run orders the three classes, apart from its mass on other."""
    sources = _sources(folder, check)
    truth = sources["later_class"].map({"bll": "bll", "fsrq": "fsrq", "psr": "pulsar", "msp": "pulsar"})
    scored = sources[truth.notna()]
    p = np.array([row[f"p_{cls}_gpal"] for (_, row), cls in zip(scored.iterrows(), truth[truth.notna()])])
    if given_three:
        p = p / scored[[f"p_{cls}_gpal" for cls in ("bll", "fsrq", "pulsar")]].sum(axis=1).to_numpy()
    return pd.Series(-np.log(np.clip(p, 1e-12, 1.0)), index=scored["Source_Name"].to_numpy())


def loss_parts(folder: Path, check: Path | None = None) -> dict[str, tuple[int, float]]:
    """`three_class_losses` split by what the run was given and what the later release found: bcu that became blazars,
    unassociated sources that became blazars, unassociated sources that became pulsars (count, mean loss); and the
    run's mean p_other on the last."""
    sources = _sources(folder, check).set_index("Source_Name")
    losses = three_class_losses(folder, check)
    given = sources.loc[losses.index, "CLASS1"].astype(str).str.strip().str.lower().to_numpy()
    later = sources.loc[losses.index, "later_class"].to_numpy()
    pulsar = np.isin(later, PULSARS)
    parts = {"bcu -> blazar": (given == "bcu") & ~pulsar, "unassociated -> blazar": (given == "") & ~pulsar,
             "unassociated -> pulsar": (given == "") & pulsar}
    out = {name: (int(mask.sum()), float(losses[mask].mean()) if mask.any() else float("nan"))
           for name, mask in parts.items()}
    p_other = sources.loc[losses.index[parts["unassociated -> pulsar"]], "p_other_gpal"] \
        if "p_other_gpal" in sources else pd.Series(0.0, index=[0])
    out["p_other of unassociated -> pulsar"] = (int(parts["unassociated -> pulsar"].sum()), float(p_other.mean()))
    return out


def paired(losses: pd.Series, reference: pd.Series, seed: int = 0) -> tuple[float, float, float]:
    """Mean of ``losses - reference`` over their common sources and its 95% bootstrap interval."""
    common = losses.index.intersection(reference.index)
    diff = (losses[common] - reference[common]).to_numpy()
    draws = np.random.default_rng(seed).integers(0, diff.size, (N_BOOT, diff.size))
    means = diff[draws].mean(axis=1)
    return float(diff.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def model_nll(folder: Path) -> dict[str, list[float]]:
    """The later check's own NLL over the model's classes, gpal and logistic: value, interval, paired difference."""
    check = pd.read_csv(located(folder, LATER_CHECK_FILE))
    rows = check[check["measure"].str.fullmatch(r"\d+-class nll")].set_index("model")
    return {m: [float(rows.at[m, k]) for k in ("value", "low", "high", "diff", "diff_low", "diff_high")]
            for m in ("gpal", "logistic") if m in rows.index}


def none_of_these_rates(folder: Path) -> list[dict[str, float]]:
    """The run's outlier score (its ``records/ood.json``) thresholded at each of `OOD_RATES` on the run's own held-out
    sources (``tables/heldout.csv``, re-scored), read against the later classes of its FL16Y check."""
    import json
    import warnings

    from gpal.catalogs.catalog import load_catalog
    from gpal.catalogs.classes import parse_class_spec
    from gpal.catalog_jobs.selection import DEFAULT_FEATURES
    from gpal.estimators.outliers import PopulationOutlierScore

    record = json.loads(located(folder, OOD_FILE).read_text())
    scorer = PopulationOutlierScore.from_config(record["scorer"])
    identity = json.loads((folder / "run.json").read_text())["identity"]
    catalog = load_catalog(identity["catalog"]["release"])
    classes, merge = parse_class_spec(identity["class_spec"])
    trained = [code for name in classes for code in merge.get(name, (name,))]
    present = {code.lower() for code in catalog.class_counts()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        labelled = catalog.pool(select=[c for c in trained if c in present], features=DEFAULT_FEATURES)
        untrained = [c for c in record.get("left_out", {}) if c != "unk"]
        agn = scorer.score(catalog.pool(select=untrained, features=DEFAULT_FEATURES)) if untrained else np.zeros(0)
    held_out = pd.read_csv(located(folder, HELDOUT_FILE))["Source_Name"].str.strip()
    held = scorer.score(labelled)[np.isin(np.char.strip(np.asarray(labelled.ids).astype(str)), held_out)]
    scores = pd.read_csv(located(folder, CLASSIFICATIONS_CSV), keep_default_na=False)[["Source_Name", "ood_score"]]
    sources = _sources(folder).merge(scores, on="Source_Name")
    unassociated = _unassociated_classed(sources)
    other = ~np.isin(unassociated["later_class"].to_numpy(), (*BLAZARS, *PULSARS))
    called_other = _called_other(unassociated)
    rows = []
    for rate in OOD_RATES:
        threshold = float(np.quantile(held, 1 - rate))
        flagged = unassociated["ood_score"].to_numpy(float) > threshold
        rows.append({"rate": rate, "held out": held.size, "threshold": threshold,
                     "classified flagged": float(np.mean(scores["ood_score"].to_numpy(float) > threshold)),
                     "main flagged": float(flagged[~other].mean()), "other flagged": float(flagged[other].mean()),
                     "main leaked": float((flagged | called_other)[~other].mean()),
                     "other caught": float((flagged | called_other)[other].mean()),
                     "non-blazar AGN flagged": f"{int(np.sum(agn > threshold))}/{agn.size}"})
    return rows


def flagged_kept(runs: Path, variant: str) -> pd.DataFrame:
    """Over every release's target lists of ``variant``: rows FL16Y classes, with and without a doubtful flag, and
    how many kept the list's class; rows FL16Y lost."""
    from gpal.catalog_jobs.candidates import DOUBTFUL_FLAGS, flag_mask

    mask = flag_mask(DOUBTFUL_FLAGS)
    kept = {"flagged": [0, 0, 0, 0], "unflagged": [0, 0, 0, 0]}  # rows, lost, classed, kept
    for release in RELEASES:
        folder = runs / release / _slug(variant)
        for cls, rows in _target_lists(folder):
            doubtful = (rows["Flags"].astype(int).to_numpy() & mask) > 0
            for name, part in (("flagged", rows[doubtful]), ("unflagged", rows[~doubtful])):
                classed = part[~part["later_class"].isin(NO_CLASS) & (part["later_class"] != "bcu")]
                is_member = _members(cls, classed["later_class"])
                counts = kept[name]
                counts[0] += len(part)
                counts[1] += int((part["later_class"] == "missing").sum())
                counts[2] += len(classed)
                counts[3] += int(is_member.sum())
    return pd.DataFrame(kept, index=["rows", "lost by FL16Y", "classed by FL16Y", "kept their class"]).T


def known_in_lists(folder: Path) -> dict[str, int]:
    """An FL16Y run's target lists against every route of `known_about` (every other release, CLASS2, ATNF)."""
    import warnings

    from gpal.catalogs.known_sources import known_about

    counts = {}
    for path in sorted(located(folder, LISTS_DIR).glob("candidates_*.csv")):
        rows = pd.read_csv(path, keep_default_na=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = known_about("FL16Y", rows["Source_Name"].tolist())
        known = (~found["known_class"].isin(["", "unk"]) & (found["known_route"] != "CLASS1")).to_numpy()
        counts[path.name] = int(known.sum())
        if path.name == "candidates_pulsar.csv":
            counts["candidates_pulsar.csv top 100"] = int(known[:100].sum())
    return counts


#: |GLAT| (deg) inside which a source is in the Galactic plane for `plane_shares`.
PLANE_GLAT = 10.0


def plane_shares(runs: Path) -> list[list[str]]:
    """Where the DR4 default run's set-aside later blazars lie: the share within `PLANE_GLAT` of the plane of the
    catalog's bll, fsrq and bcu (the first two trained, the bcu not) and of the unassociated sources FL16Y calls
    blazars, set aside or not.  Through the plane's extinction a blazar's optical type is rarely measured, so its
    blazars are mostly bcu, whom a model trained on bll and fsrq sees little of."""
    from gpal.catalogs.catalog import load_catalog

    catalog = load_catalog("4FGL-DR4")
    abs_glat = np.abs(catalog.values_of("glat", catalog.names))
    glat = dict(zip(catalog.names, abs_glat))
    rows = [[f"DR4 {code}", *_plane(abs_glat[catalog.class_codes == code])] for code in BLAZARS]
    sources = _sources(run(runs, "4FGL-DR4", DEFAULT_VARIANT))
    unassociated = _unassociated_classed(sources)
    unassociated = unassociated[unassociated["later_class"].isin(BLAZARS)]
    set_aside = _called_other(unassociated) | _bool(unassociated["ood"])
    for words, rows_of in (("set aside", unassociated[set_aside]), ("not set aside", unassociated[~set_aside])):
        rows.append([f"DR4 unassociated, FL16Y blazar, {words}",
                     *_plane(np.array([glat[name] for name in rows_of["Source_Name"]]))])
    return rows


def _plane(abs_glat: np.ndarray) -> list[str]:
    inside = int((abs_glat < PLANE_GLAT).sum())
    return [str(abs_glat.size), str(inside), _share(inside, abs_glat.size, 2)]


def _share(k: int, n: int, digits: int) -> str:
    """k / n with its 95% binomial interval: a share of a few hundred sources is uncertain by a few hundredths."""
    low, high = binomial_interval(k, n)
    return f"{k / max(n, 1):.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _tables(runs: Path) -> list[dict]:
    from result_records import make_table

    observer, nll, model, parts, yields = [], [], [], [], []
    for later in LATER:
        for release in RELEASES[:RELEASES.index(later)] if later in RELEASES else RELEASES:
            first = run(runs, release, next(iter(VARIANTS)))
            reference = three_class_losses(first, checked(first, later))
            reference_given = three_class_losses(first, checked(first, later), given_three=True)
            pair = f"{release} -> {later}"
            for variant in VARIANTS:
                folder = run(runs, release, variant)
                check = checked(folder, later)
                m = measures(folder, check)
                observer.append([pair, variant, _share(m["other caught count"], m["of them other"], 2),
                                 _share(m["main leaked count"], m["of them main"], 3),
                                 f"{m['blazars expected / found']:.2f}",
                                 f"{m['pulsars expected']:.1f} / {m['pulsars found']} = "
                                 f"{m['pulsar list expected / found']:.2f}",
                                 f"{m['unassociated later classed']} ({m['of them other']})"])
                losses = three_class_losses(folder, check)
                diff = paired(losses, reference)
                given = three_class_losses(folder, check, given_three=True)
                given_diff = paired(given, reference_given)
                nll.append([pair, variant, len(losses), f"{losses.mean():.3f}",
                            f"{diff[0]:+.3f} [{diff[1]:+.3f}, {diff[2]:+.3f}]", f"{given.mean():.3f}",
                            f"{given_diff[0]:+.3f} [{given_diff[1]:+.3f}, {given_diff[2]:+.3f}]"])
                if variant == DEFAULT_VARIANT:
                    yields.append([pair, *(f"{e:.1f} / {f}" + (f" = {e / f:.2f}" if f else "") + f" ({n})"
                                           for e, f, n in list_yields(folder, check).values())])
                    yield_classes = list(list_yields(folder, check))
                split = loss_parts(folder, check)
                parts.append([pair, variant, *(f"{split[k][1]:.3f} ({split[k][0]})" for k in split)])
                for name, (v, lo, hi, d, dlo, dhi) in model_nll(check).items():
                    model.append([pair, variant, name, f"{v:.3f} [{lo:.3f}, {hi:.3f}]",
                                  "" if name == "gpal" else f"{d:+.3f} [{dlo:+.3f}, {dhi:+.3f}]"])
    return [
        make_table(["check", "variant", "other caught", "main leaked", "blazars expected / found",
                    "pulsar list expected / found", "unassociated classed (other)"], observer, "llrrrrr",
                   "What the lists promised against what the later release found (targets: other caught >= 0.5, main leaked <= "
                   "0.10, blazars 0.8-1.25, pulsar list 0.67-1.5; shares with their 95% binomial interval)"),
        make_table(["check", "variant", "n", "3-class NLL", f"minus {next(iter(VARIANTS))} (paired 95%)",
                    "given one of the three", "minus (paired 95%)"], nll,
                   "llrrrrr", "Every classified source the later release calls bll, fsrq, psr or msp: -log of the run's "
                   "probability of that class (lower is better; a four-class model's mass on other counts against it), "
                   "and of that class given that the source is one of the three (bll, fsrq and pulsar renormalised: "
                   "how well the run orders the three, apart from its mass on other)"),
        make_table(["check", "variant", "bcu -> blazar", "unassociated -> blazar", "unassociated -> pulsar",
                    "mean p_other, unassociated -> pulsar"], parts, "llrrrr",
                   "Where the 3-class NLL goes: its mean over the sources the run was given as bcu or unassociated and "
                   "the later release calls a blazar or a pulsar (count)"),
        make_table(["check", *(f"{cls} list" for cls in yield_classes)], yields, "l" + "r" * len(yield_classes),
                   f"The {DEFAULT_VARIANT} variant's target lists: expected members (summed probability) / members the "
                   "later release found = ratio, over the rows it classes (count; unk left out, and a later bcu from "
                   "the BL Lac and FSRQ lists; a member of the other list: neither a blazar nor a pulsar)"),
        make_table(["check", "variant", "model", "NLL over the model's classes", "minus gpal (paired 95%)"], model,
                   "lllrr", "The later check's own measure, beside logistic regression with the same classes and "
                   "features (its baselines are not moved by the pool prior)"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, required=True, help="folder of the gpal classify runs (reused)")
    parser.add_argument("--flagged", action="store_true", help="also the flagged-candidates and known-sources tables")
    parser.add_argument("--record", type=Path, help="also write the results page's record to this file")
    args = parser.parse_args(argv)
    from result_records import make_record, make_table, outcome, table_markdown, write_record

    tables = _tables(args.runs)
    rates = [[release, f"{r['rate']:.2f}", f"{r['threshold']:.1f}", f"{r['classified flagged']:.3f}",
              f"{r['main flagged']:.3f}", f"{r['other flagged']:.2f}", f"{r['main leaked']:.3f}",
              f"{r['other caught']:.2f}", r["non-blazar AGN flagged"]]
             for release in RELEASES for r in none_of_these_rates(run(args.runs, release, DEFAULT_VARIANT))]
    tables.append(make_table(["release -> FL16Y", "rate", "threshold", "classified flagged", "later blazars and "
                              "pulsars flagged", "later other flagged", "main leaked", "other caught",
                              "non-blazar AGN flagged"], rates, "lrrrrrrrr",
                             "The default run's \"none of these\" at each false-positive rate on its held-out sources, "
                             "alone and with the other class (main leaked, other caught)"))
    tables.append(make_table(["sources", "n", f"|b| < {PLANE_GLAT:g} deg", "share (95%)"], plane_shares(args.runs),
                             "lrrr", "Why later blazars are set aside: the Galactic plane's blazars are bcu, which "
                             "the default does not train (the DR4 run scored by FL16Y)"))
    if args.flagged:
        counts = flagged_kept(args.runs, DEFAULT_VARIANT)
        tables.append(make_table(["candidates", *counts.columns], [[i, *map(int, r)] for i, r in counts.iterrows()],
                                 "lrrrr", "The open sky's target lists on every release (rows FL16Y classes as bcu "
                                 "left out of 'classed'): flagged rows carry one of the doubtful flags"))
        fl16y = args.runs / "FL16Y" / "open_sky"
        if not (fl16y / "report.md").is_file():
            subprocess.run([sys.executable, "-m", "gpal.cli", "classify", "--out", str(fl16y), "--no-progress",
                            "--quiet"], check=True, stdout=subprocess.DEVNULL)
        known = known_in_lists(fl16y)
        tables.append(make_table(["FL16Y list (default run)", "rows already known"], [[k, v] for k, v in known.items()],
                                 "lr", "Rows of the default FL16Y run's lists that CLASS2, an earlier release or the "
                                 "ATNF catalogue already classes"))
    for table in tables:
        print(table_markdown(table), "\n", sep="")
    if args.record:
        command = f"python lab/studies/bench_open_sky.py --runs {args.runs}{' --flagged' if args.flagged else ''}"
        print(outcome(write_record(args.record, make_record(
            "The open sky: later labels of every class", command, code_commit(), tables,
            settings={"variants": VARIANTS, "releases": RELEASES}, workflow="lab/studies/open_sky.yaml"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
