"""Fermi-LAT catalogs: release records, reading, features with error bars, selections, class schemes."""

from gpal.catalogs.catalog import CATALOG_DIR, RELEASES, Catalog, load_catalog
from gpal.catalogs.feature_table import DroppedRowsWarning, RepairedRowsWarning
from gpal.catalogs.features import (FEATURE_PRESETS, Feature, register_preset, repaired_how, repaired_text,
                                    resolve_features, unregister_preset)
from gpal.catalogs.releases import NEWEST_RELEASE, Columns, Release, register_release, release_by_name, unregister_release
from gpal.catalogs.schemes import CLASS_SCHEMES, coarse_group

__all__ = [
    "CATALOG_DIR",
    "CLASS_SCHEMES",
    "Columns",
    "RELEASES",
    "Catalog",
    "DroppedRowsWarning",
    "FEATURE_PRESETS",
    "Feature",
    "NEWEST_RELEASE",
    "Release",
    "RepairedRowsWarning",
    "coarse_group",
    "load_catalog",
    "register_preset",
    "register_release",
    "release_by_name",
    "repaired_how",
    "repaired_text",
    "resolve_features",
    "unregister_preset",
    "unregister_release",
]
