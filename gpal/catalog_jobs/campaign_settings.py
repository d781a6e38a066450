"""``gpal active``'s own settings, beside the selection and the estimator, declared where nothing heavier than the
acquisitions' declarations is imported: the command line's parser reads them and answers a mistyped option at once,
and `gpal.catalog_jobs.active` runs the campaign with them."""

from __future__ import annotations

import inspect

from gpal.active.base import acquisition_settings
from gpal.catalog_jobs.job_settings import NEVER, JobSetting
from gpal.catalog_jobs.list_settings import CANDIDATE_SETTINGS, FOLLOW_UP_SETTINGS
from gpal.catalog_jobs.main_job_settings import DEFAULT_SELECT
from gpal.constraints import Integer, OneOf, Optional, Real, Text
from gpal.estimators.params import NOISY_GP_PARAMETERS
from gpal.estimators.settings import Setting
from gpal.registry import ACQUISITIONS, FOLLOW_UP_ACQUISITION

__all__ = ["CAMPAIGN_OWNED", "ORACLES", "QUERIES_DIR", "SKY_CUTS", "acquisition_options", "acquisition_takers",
           "campaign_settings"]

#: Who labels: the catalog's own labels, hidden until asked for, or the observers, in query files.
ORACLES = ("simulated", "file")
#: The file oracle's query files, inside the run folder.
QUERIES_DIR = "queries"
#: The target-list cuts a file-oracle campaign's pool takes as the main job's lists do: the sky its telescope sees.
SKY_CUTS = ("candidate_declination", "candidate_visible_from")
#: The acquisitions' options a campaign sets itself: the seed is the campaign's ``seed``.
CAMPAIGN_OWNED = ("seed",)


def acquisition_options() -> dict[str, str]:
    """The acquisitions' options a campaign offers (campaign setting -> option), read from the registered
    acquisitions when asked, so that one registered later is offered too: every option an acquisition declares
    but `CAMPAIGN_OWNED`, under its own name, or ``acquisition_<option>`` where the estimator has a parameter of
    that name (``n_samples``)."""
    estimator_params = set(NOISY_GP_PARAMETERS)
    options = dict.fromkeys(option for name in ACQUISITIONS.names() for option in acquisition_settings(name))
    return {(f"acquisition_{option}" if option in estimator_params else option): option for option in options
            if option not in CAMPAIGN_OWNED}


def acquisition_takers(option: str) -> dict[str, Setting]:
    """Acquisition name -> its declaration of ``option``, for every acquisition that takes it."""
    return {name: acquisition_settings(name)[option] for name in ACQUISITIONS.names()
            if option in acquisition_settings(name)}


def _acquisition_option(option: str) -> JobSetting:
    """``option`` as one campaign setting: the constraint and default its acquisitions share, and each one's meaning
    after its name.  Where they differ (or one has no default) the setting may be None, each acquisition's own
    default, and the acquisition checks the value against its own declaration when it is made."""
    takers = acquisition_takers(option)
    inner = {name: s.constraint.inner if isinstance(s.constraint, Optional) else s.constraint
             for name, s in takers.items()}
    defaults = {s.default for s in takers.values()}
    agreed = len({(type(c), c.expected) for c in inner.values()}) == 1 and len(defaults) == 1
    default = defaults.pop() if agreed and inspect.Parameter.empty not in defaults else None
    constraint = next(iter(inner.values()))
    return JobSetting(Optional(constraint) if default is None else constraint, default,
                      "; ".join(f"{name}: {s.doc}" for name, s in takers.items()), record=NEVER)


def campaign_settings() -> dict[str, JobSetting]:
    """A campaign's own settings, beside the selection and the estimator: what ``gpal active`` offers.

    Built when asked from the registered acquisitions (their names and declared options), so that an acquisition
    registered from a user's own code is a choice of ``--acquisition`` and its options are settings.

    Returns
    -------
    dict
        Setting name -> `JobSetting`, in the order the command line lists them.
    """
    return {
        # the acquisition and its options are recorded in the acquisition's config
        "acquisition": JobSetting(OneOf(ACQUISITIONS), FOLLOW_UP_ACQUISITION,
                                  f"how the next sources are chosen ({FOLLOW_UP_ACQUISITION}: the winner of the "
                                  "simulated DR4 campaign; discovery: the most probable sources of target, for a "
                                  "targeted search)", record=NEVER),
        **{setting: _acquisition_option(option) for setting, option in acquisition_options().items()},
        "oracle": JobSetting(OneOf(ORACLES), "simulated",
                             f"who labels: simulated (catalog labels) or file (you, in DIR/{QUERIES_DIR}/*.csv)"),
        "batch_size": JobSetting(Integer(1), 1, "sources labelled per query"),
        # raised to continue a run: the same run
        "queries": JobSetting(Integer(0), 10, "number of queries in all (raise it to continue a run)", record=NEVER),
        "retrain_epochs": JobSetting(Integer(0), 50, "epochs of each warm-started retraining"),
        "initial": JobSetting(Integer(1), 100, "simulated: initially labelled sources (the main job's population prior "
                              "needs 10 per component, 80 in all; with fewer it has fewer components, below 10 the broad "
                              "prior)"),
        "pool": JobSetting(Optional(Integer(1)), None, "simulated: pool size (none: all the rest)"),
        "test": JobSetting(Integer(1), 500, "simulated: test sources"),
        "test_size": JobSetting(Real(0, 1, low_open=True, high_open=True, meaning="a fraction"), 0.2,
                                "file oracle: share of the labelled sources kept for testing"),
        "select": JobSetting(Text(), ",".join(DEFAULT_SELECT), "file oracle: the pool, 'unassociated', 'bcu' or CLASS1 "
                             "codes, comma-separated (the default: the sources gpal classify classifies)"),
        **FOLLOW_UP_SETTINGS,
        # the sky a campaign's observers can reach, as the main job's target lists take it
        **{name: CANDIDATE_SETTINGS[name] for name in SKY_CUTS},
    }
