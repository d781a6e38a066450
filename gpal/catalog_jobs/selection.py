"""`CatalogSelection`: what a catalog job trains on (catalog, classes and merges, cuts, features), as one value.

Every catalog job (``gpal train``, ``gpal classify``, ``gpal active``, the ``classify`` and
``follow_up`` workflows) takes one, so the five choices are stated, checked and defaulted
in one place; its defaults are the main job's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from gpal.catalog_jobs.main_job_settings import DEFAULT_FEATURES
from gpal.estimators.settings import Setting
from gpal.catalogs import load_catalog
from gpal.catalogs.classes import format_class_spec
from gpal.catalogs.features import MISSING_ERROR_REPAIRS, RELEASE_PRESET, Feature, resolve_features, with_missing_errors
from gpal.catalogs.releases import DEFAULT_RELEASE
from gpal.catalogs.schemes import DEFAULT_SCHEME, resolve_classes
from gpal.constraints import AnyOf, ListOf, MappingOf, OneOf, Optional, Real, Satisfies, Text, check_values
from gpal.data.dataset import NoisyDataset
from gpal.identity import dataset_fingerprint

__all__ = ["CatalogSelection", "DEFAULT_FEATURES"]


_NAMES = AnyOf((Text(), ListOf(Text())))
_FEATURE_SPEC = Satisfies(lambda f: isinstance(f, (str, Mapping, Feature)),
                          "a column spec such as 'log:Signif_Avg', a mapping of Feature fields or a Feature")
#: Each field's constraint and meaning; the values are checked against them at construction.
_FIELDS = {
    "catalog": (Satisfies(lambda v: isinstance(v, (str, os.PathLike)) and bool(str(v)),
                          "a release name (a key of gpal.catalogs.RELEASES) or the path of a gll_psc_v*.fit[.gz] file"),
                "a known release (shipped or registered) or the path of a LAT catalog FITS file"),
    "classes": (_NAMES, "a class scheme (docs/catalogs.md), a class spec such as 'bll,fsrq,pulsar=psr+msp', "
                        "or a list of classes"),
    "merge": (Optional(MappingOf(_NAMES)), "with a list of classes: class -> the CLASS1 codes it groups"),
    "min_significance": (Optional(Real()), "keep the sources with Signif_Avg above it (None: no cut)"),
    "features": (Optional(AnyOf((Text(), ListOf(_FEATURE_SPEC, unique=False)))),
                 f"a feature preset ('{RELEASE_PRESET}': the catalog release's own) or a list of feature specs "
                 "(docs/catalogs.md)"),
    "missing_errors": (Optional(OneOf(tuple(MISSING_ERROR_REPAIRS))),
                       "what a feature that keeps a row without an error does with it: 'exact' (variance 0) or "
                       "'population' (the median error of the catalog's sources that have one); None: as the "
                       "features say (docs/catalogs.md, \"Missing errors\")"),
}


@dataclass(frozen=True)
class CatalogSelection:
    """The labelled sources a catalog job trains on and the features that describe them.

    ``catalog``: a shipped release (``"4FGL-DR4"``) or the path of a FITS file, read when a
    job runs.  ``classes``: a scheme name (`gpal.catalogs.schemes.CLASS_SCHEMES`), a class
    spec (``"bll,fsrq,pulsar=psr+msp"``) or a list of classes, with ``merge`` grouping CLASS1
    codes into one class (the default merge of young and millisecond pulsars applies where
    ``pulsar`` is chosen).  ``min_significance`` keeps the sources with ``Signif_Avg`` above
    it.  ``features``: a preset name (`gpal.catalogs.features.FEATURE_PRESETS`) or a list of
    feature specs; ``missing_errors`` overrides how they read a missing error (`with_missing_errors`).  Everything but the catalog's contents is checked at construction, so a
    bad scheme, spec, merge, cut or feature is refused before any file is read.  Values are
    kept as given (lists as tuples): a run records them, and the same command must give the
    same record.
    """

    catalog: str | os.PathLike = DEFAULT_RELEASE
    classes: str | Sequence[str] = DEFAULT_SCHEME
    merge: Mapping[str, Sequence[str]] | None = None
    min_significance: float | None = None
    features: str | Sequence[Any] | None = DEFAULT_FEATURES
    missing_errors: str | None = None

    def __post_init__(self) -> None:
        check_values({name: constraint for name, (constraint, _) in _FIELDS.items()},
                     {f.name: getattr(self, f.name) for f in fields(self)})
        for name in ("classes", "features"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                object.__setattr__(self, name, tuple(value))
        self.class_groups()  # a bad scheme, spec or merge fails here
        if self.features != RELEASE_PRESET:  # the catalog resolves its release's preset when read
            resolve_features(self.features)  # an unknown preset or a malformed spec fails here

    @classmethod
    def settings(cls) -> dict[str, Setting]:
        """Each field with its constraint, default and meaning: what a workflow's fields are built from."""
        return {f.name: Setting(_FIELDS[f.name][0], f.default, _FIELDS[f.name][1]) for f in fields(cls)}

    def class_groups(self) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
        """The classes in label order and the CLASS1 codes each merged class groups."""
        return resolve_classes(self.classes, self.merge)

    @property
    def class_spec(self) -> str:
        """The classes as one spec string, ``bll,fsrq,pulsar=psr+msp``."""
        return format_class_spec(*self.class_groups())

    def load(self) -> tuple[Any, NoisyDataset]:
        """The catalog and its labelled sources of the classes, cut and described by the features."""
        classes, merge = self.class_groups()
        catalog = load_catalog(self.catalog)
        data = catalog.dataset(classes=list(classes), merge={k: list(v) for k, v in merge.items()},
                               min_significance=self.min_significance, features=self.features_of(catalog))
        return catalog, data

    def features_of(self, catalog: Any) -> tuple[Feature, ...]:
        """The features as ``catalog`` builds them, with ``missing_errors`` applied."""
        return with_missing_errors(catalog.features(self.features), self.missing_errors)

    def identity(self, catalog: Any, data: NoisyDataset) -> dict[str, Any]:
        """What a run records of the selection: the catalog read (with its checksum), the classes, the cut, the
        resolved features and a fingerprint of the selected rows, so a changed file is never taken for the same run."""
        return {
            "catalog": catalog.provenance(),
            "class_spec": format_class_spec(data.class_names, self.class_groups()[1]),
            "min_significance": self.min_significance,
            "features": data.meta["features"],
            "data": dataset_fingerprint(data),
        }
