"""Fermi-LAT catalogs: release records, reading, features with error bars, selections, class schemes."""

from gpal.catalogs.catalog import (CATALOG_DIR, RELEASES, Catalog, DroppedRowsWarning, RepairedRowsWarning,
                                   load_catalog)
from gpal.catalogs.features import FEATURE_PRESETS, Feature, repaired_how, repaired_text, resolve_features
from gpal.catalogs.releases import NEWEST_RELEASE, Release, release_by_name
from gpal.catalogs.schemes import CLASS_SCHEMES, coarse_group

__all__ = [
    "CATALOG_DIR",
    "CLASS_SCHEMES",
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
    "release_by_name",
    "repaired_how",
    "repaired_text",
    "resolve_features",
]
