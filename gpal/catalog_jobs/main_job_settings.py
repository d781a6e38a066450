"""The main job's settings (``gpal classify``, the ``classify`` workflow) and the defaults ``gpal predict`` shares.

Declared where nothing heavy is imported: ``gpal classify --nosuch`` or ``gpal predict`` without its folder is
answered by the parser alone, which reads its options' defaults and choices here (and in the other light
declarations: the releases, the class schemes, the lists' settings, the telescopes).  The modules that do the work
import them from here, so each fact lives once.
"""

from __future__ import annotations

from gpal.catalog_jobs.job_settings import WHEN_CHANGED, JobSetting
from gpal.catalog_jobs.list_settings import CANDIDATE_SETTINGS, FOLLOW_UP_SETTINGS, FORMAT_SETTINGS
from gpal.catalogs.features.presets import RELEASE_PRESET
from gpal.constraints import AnyOf, Boolean, Integer, ListOf, OneOf, Optional, Real, Text
from gpal.evaluation.baselines import BASELINES

__all__ = ["APPLIED_BY_DEFAULT", "BCU_TYPES", "BCU_TYPES_DEFAULT", "DEFAULT_BASELINES", "DEFAULT_CHUNK_SIZE",
           "DEFAULT_FEATURES", "DEFAULT_SELECT", "DEFAULT_TARGET", "DEFAULT_TEST_SIZE", "SETTINGS"]

#: The main job's features: the preset of the catalog's release record (`gpal.catalogs.releases`): fermi_dr4
#: on every 4FGL-layout release, chosen on 4FGL-DR4 because its features lower every model's held-out NLL
#: against the paper's six (docs/catalogs.md); fermi_3fgl on 3FGL, whose layout lacks the newer columns.
DEFAULT_FEATURES = RELEASE_PRESET
#: What ``gpal predict`` and the main job classify unless told: the sources without a physical class.
DEFAULT_SELECT = ("unassociated", "bcu")
#: Rows per prediction task: seconds of work for a noisy-input model, several tasks per worker (docs/scaling.md).
DEFAULT_CHUNK_SIZE = 20000
#: Whether `gpal classify` and `gpal predict` apply the pool prior unless told otherwise (``--pool-prior``).
APPLIED_BY_DEFAULT = False
#: What the classification follow-up ranks for unless told: None, every trained class (plain BALD).
DEFAULT_TARGET = None
#: The ``bcu_types`` setting's choices: split the bcu with the 4LAC blazar-type model, or leave the main model's split.
BCU_TYPES = ("4lac", "none")
#: Off by default: the blazar-type model's fit costs the main job about a fifth more CPU time
#: (`gpal.catalog_jobs.bcu_types`).
BCU_TYPES_DEFAULT = "none"
#: The classifiers a user would otherwise reach for, fitted on the main job's split and features.
DEFAULT_BASELINES = ("logistic", "random_forest_isotonic")
#: The share of the labelled sources held out to check the model.
DEFAULT_TEST_SIZE = 0.2
#: The main job's own settings beside the selection and the estimator (the ``classify`` workflow offers them).
SETTINGS = {
    "test_size": JobSetting(Real(0, 1, low_open=True, high_open=True, meaning="the held-out fraction"),
                            DEFAULT_TEST_SIZE, "share of each class held out to check the model (stratified)"),
    # recorded as the sources it resolves to (the job records its tokens)
    "select": JobSetting(Optional(AnyOf((Text(), ListOf(Text())))), None,
                         "the sources to classify: 'unassociated', 'bcu', CLASS1 codes or 'all' (None: "
                         f"{' and '.join(DEFAULT_SELECT)}, less any code the classes train on)"),
    "chunk_size": JobSetting(Integer(1), DEFAULT_CHUNK_SIZE, "rows per prediction task"),
    "baselines": JobSetting(ListOf(OneOf(tuple(BASELINES)), min_length=0), DEFAULT_BASELINES,
                            "classifiers fitted on the same rows and compared with the model"),
    "target": JobSetting(Optional(Text()), DEFAULT_TARGET,
                         "the class to list candidates of (lists/candidates_CLASS.csv) and that "
                         "lists/most_informative.csv ranks by what a label would teach about it, e.g. pulsar "
                         "(None: every trained class)",
                         keyword="TARGET"),
    **CANDIDATE_SETTINGS,
    **FOLLOW_UP_SETTINGS,
    **FORMAT_SETTINGS,
    "known_pulsars": JobSetting(Optional(Text()), None,
                                "the known pulsars whose position inside a source's 95% ellipse makes it known: an "
                                "ATNF Pulsar Catalogue psrcat.db (gzipped or not), or a CSV with columns name, ra, dec "
                                "(J2000, degrees or sexagesimal) [, p0 (s)] of discoveries newer than it (None: the "
                                "shipped ATNF catalogue, version 1.64 of 2021)",
                                record=WHEN_CHANGED),
    "bcu_types": JobSetting(OneOf(BCU_TYPES), BCU_TYPES_DEFAULT,
                            "how each bcu's blazar probability is split between bll and fsrq: '4lac' by a model "
                            "trained on the BL Lacs and FSRQs with the counterpart's 4LAC-DR3 synchrotron and "
                            "high-energy peaks (lower NLL on later labels, docs/results.md, the bcu section, for about a quarter "
                            "more CPU time); 'none' as the main model splits it", record=WHEN_CHANGED),
    # recorded as the groups it moves (False: off)
    "pool_prior": JobSetting(Boolean(), APPLIED_BY_DEFAULT,
                             "move the unassociated sources' classifications to their own class mix, estimated by EM "
                             "(the bcu keep theirs: the bcu rule already carries what the catalog knows; the other "
                             "populations keep their training share); off by default: with the open sky's other "
                             "class it makes the lists promise more pulsars than later releases found "
                             "(docs/results.md, \"The open sky\")"),
}
