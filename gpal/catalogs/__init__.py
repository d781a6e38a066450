"""Fermi-LAT 4FGL-family catalogs: reading, release detection, features with error bars, selections."""

from gpal.catalogs.catalog import CATALOG_DIR, RELEASES, Catalog, DroppedRowsWarning, load_catalog
from gpal.catalogs.features import FEATURE_PRESETS, Feature, resolve_features

__all__ = [
    "CATALOG_DIR",
    "RELEASES",
    "Catalog",
    "DroppedRowsWarning",
    "FEATURE_PRESETS",
    "Feature",
    "load_catalog",
    "resolve_features",
]
