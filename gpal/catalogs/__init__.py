"""Fermi-LAT catalogs: release records, reading, features with error bars, selections, class schemes."""

import importlib
from typing import Any

#: Where each name of the package is defined: imported on first use, so that reading a release's name or a class
#: scheme (what the command line's parsers need) does not load the catalog readers.
_HOMES = {
    **dict.fromkeys(("CATALOG_DIR", "RELEASES", "Catalog", "load_catalog"), "gpal.catalogs.catalog"),
    **dict.fromkeys(("DroppedRowsWarning", "RepairedRowsWarning"), "gpal.catalogs.feature_table"),
    **dict.fromkeys(("FEATURE_PRESETS", "Feature", "register_preset", "repaired_how", "repaired_text",
                     "resolve_features", "unregister_preset"), "gpal.catalogs.features"),
    **dict.fromkeys(("NEWEST_RELEASE", "Columns", "Release", "register_release", "release_by_name",
                     "unregister_release"), "gpal.catalogs.releases"),
    **dict.fromkeys(("CLASS_SCHEMES", "coarse_group"), "gpal.catalogs.schemes"),
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'gpal.catalogs' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)


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
