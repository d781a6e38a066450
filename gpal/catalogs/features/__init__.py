"""Declarative features with error bars, by concern: the spec (`spec`), its maps (`transforms`), the catalog's
error conventions (`errors`), Monte Carlo propagation (`propagation`) and the presets (`presets`)."""

from gpal.catalogs.features.presets import (FEATURE_PRESETS, MISSING_ERRORS, RELEASE_PRESET, register_preset,
                                            resolve_features, unregister_preset, with_missing_errors)
from gpal.catalogs.features.propagation import MC_DRAWS, MC_SEED, transform_all
from gpal.catalogs.features.errors import MISSING_ERROR_REPAIRS, repaired_how, repaired_text
from gpal.catalogs.features.spec import Feature

__all__ = ["FEATURE_PRESETS", "Feature", "MC_DRAWS", "MC_SEED", "MISSING_ERRORS", "MISSING_ERROR_REPAIRS",
           "RELEASE_PRESET", "register_preset", "repaired_how", "repaired_text", "resolve_features", "transform_all",
           "unregister_preset", "with_missing_errors"]
