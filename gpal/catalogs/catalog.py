"""Reading LAT catalog FITS files (every release in `gpal.catalogs.releases`) and turning selections into NoisyDatasets.

The catalog object keeps the astropy Table at the edge; everything it hands on is
plain arrays in a validated `NoisyDataset`.  A selection names its rows (classes and merges, or the pool's codes);
their feature table, and what it drops or repairs, is `gpal.catalogs.feature_table`'s.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib.resources
import os
import threading
import warnings
from collections import Counter, OrderedDict
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from gpal.catalogs.catalog_file import HDU_NAME, Provenance, read_catalog_file
from gpal.catalogs.feature_table import feature_blocks, feature_table
from gpal.catalogs.features import FEATURE_PRESETS, RELEASE_PRESET, Feature, resolve_features
from gpal.catalogs.releases import DEFAULT_RELEASE, LAT_CLASS_CODES, RELEASES, release_by_name
from gpal.data.dataset import NoisyDataset

__all__ = ["Catalog", "load_catalog", "CATALOG_DIR", "HDU_NAME", "RELEASES", "text_values"]


def _shipped_catalogs() -> Path:
    """The folder of the shipped catalog files.

    They live once, in the repository's ``catalogs/``, which ``setup.py`` installs as the package
    ``gpal.catalogs.data`` (found through `importlib.resources`).  A source checkout (editable or ``PYTHONPATH``)
    has no such package, setuptools' editable finder mapping no folder to a subpackage: it reads ``catalogs/``.
    """
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and (checkout / "catalogs").is_dir():
        return checkout / "catalogs"
    # where an install keeps them; `load_catalog` names it when a file is missing
    return Path(str(importlib.resources.files("gpal.catalogs") / "data"))


#: The shipped catalog files (``catalogs/`` in the repository), found in a checkout, an editable or a plain install.
CATALOG_DIR = _shipped_catalogs()
UNASSOCIATED = "unassociated"
#: aux key of a data set -> the `Columns` role it is read from (the keys are gpal's, the same for every release).
_AUX_COLUMNS = {"GLON": "glon", "GLAT": "glat", "RAJ2000": "ra", "DEJ2000": "dec"}


def load_catalog(name_or_path: str | Path = DEFAULT_RELEASE) -> "Catalog":
    """Open a known release by name (a key of `RELEASES`, any case: ``"4FGL-DR4"``; shipped or registered) or a path.

    Returns
    -------
    Catalog
        The catalog, its release read from the file's header.
    """
    key = str(name_or_path)
    record = release_by_name(key)
    if record is not None:
        if record.file is None:
            raise FileNotFoundError(f"release {record.name} was registered without a file; give its record a file")
        path = CATALOG_DIR / Path(record.file).expanduser()  # a registered record's own path stays as it is
        if not path.is_file():
            raise FileNotFoundError(
                f"the {record.name} catalog should be at {path} but is missing; " + (
                    "reinstall gpal" if path.parent == CATALOG_DIR else "check the file of its registered record"))
        return _release_catalog(path)
    path = Path(key).expanduser()
    try:
        found = path.is_file() or os.path.lexists(path)
    except OSError as exc:  # a name longer than the system takes (ENAMETOOLONG), met before any file is read
        shown = key if len(key) <= 80 else f"{key[:40]}...{key[-30:]}"
        raise OSError(exc.errno, f"the catalog path (--catalog) {shown!r} ({len(key)} characters) cannot be used: "
                      f"{exc.strerror}; give a shorter path") from None
    if found:  # a FIFO, a device or a link loop is named by regular_file
        return Catalog.from_file(path)
    if path.suffix in {".fit", ".fits", ".gz"} or "/" in key or "\\" in key:
        raise FileNotFoundError(f"catalog file not found: {path}")
    raise ValueError(f"unknown catalog release {key!r}; valid names: {list(RELEASES)} (case-insensitive), or a path to a FITS file")


#: Releases read by name in this process, by their file's path, size, time and inode and the registered releases
#: (which say what a file is: `gpal.register_release` may replace a record).  The main job, `gpal predict`
#: and `known_about` each read every earlier release for the sources' search history, so a session that runs several
#: read each file once (0.1-0.4 CPU s a release; 3-8 MB each in memory).
_RELEASES_READ: "OrderedDict[tuple, Catalog]" = OrderedDict()
_RELEASES_KEPT = 8
_RELEASES_LOCK = threading.Lock()


def _release_catalog(path: Path) -> "Catalog":
    """The catalog of a release's file, read once while the file is unchanged; each call gets its own copy, so a
    caller's changes to its table never reach the next."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino, repr(tuple(RELEASES.items())))
    with _RELEASES_LOCK:
        kept = _RELEASES_READ.get(key)
        if kept is not None:
            _RELEASES_READ.move_to_end(key)
    if kept is None:
        kept = Catalog._read(path)
        with _RELEASES_LOCK:
            _RELEASES_READ[key] = kept
            while len(_RELEASES_READ) > _RELEASES_KEPT:
                _RELEASES_READ.popitem(last=False)
    _warn_row_count(path, kept.n_rows, stacklevel=4)  # at every load, not only the one that read the file
    return kept.copy()


def _warn_row_count(path: Path, n_rows: int, stacklevel: int) -> None:
    """A warning, pointed at the caller's line, if a known release's file has another row count than published."""
    expected = {Path(r.file).name: r.rows for r in RELEASES.values() if r.file}.get(path.name)
    if expected is not None and expected != n_rows:
        warnings.warn(f"{path.name} has {n_rows} rows; the published file has {expected}", stacklevel=stacklevel)


def _check_unique(path: Path, names: np.ndarray, name_column: str) -> None:
    """Each source is listed once (the key of every output table); ``names`` the catalog's, read once."""
    names, counts = np.unique(names, return_counts=True)
    if (counts > 1).any():
        twice = names[counts > 1]
        raise ValueError(f"{path}: column {name_column!r} names {twice.size} source(s) more than once (e.g. "
                         f"{', '.join(twice[:3])}); a catalog lists each source once")


def _listing(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{code} ({n})" for code, n in counts.items())


#: Rows of a text column decoded at once by `text_values`: its str copies stay a few MB, whatever the catalog's rows.
_TEXT_ROWS = 65536


def text_values(column) -> np.ndarray:
    """A FITS text column as stripped str (masked entries empty, bytes decoded as ASCII), as wide as its longest
    value: str holds 4 bytes a character, and a file's column as wide as its widest entry held GiBs at 10^6 rows.
    Reads a catalog's own text columns (``CLASS1``, ``ASSOC1``) the way gpal does.

    Returns
    -------
    numpy.ndarray
        The column's values as a str array.
    """
    values = column.filled(b"") if hasattr(column, "filled") else column
    arr = np.asarray(values)
    parts = []
    for start in range(0, max(len(arr), 1), _TEXT_ROWS):  # one (empty) part for an empty column
        part = arr[start:start + _TEXT_ROWS]
        if part.dtype.kind == "S":
            part = np.char.decode(part, "ascii", errors="replace")
        part = np.char.strip(part.astype(str))
        parts.append(part.astype(f"U{max(int(np.char.str_len(part).max(initial=0)), 1)}"))
    return np.concatenate(parts)  # as wide as the widest part


def _floats(column) -> np.ndarray:
    values = column.filled(np.nan) if hasattr(column, "filled") else column
    return np.asarray(values, dtype=np.float64)


class Catalog:
    """A LAT catalog: its table, its release record, and selections of it.

    Examples
    --------
    >>> from gpal.catalogs import load_catalog
    >>> catalog = load_catalog("4FGL")
    >>> catalog
    Catalog(4FGL, version=v20, rows=5066, file=gll_psc_v20.fit.gz)
    >>> data = catalog.dataset(classes=["bll", "fsrq", "psr"], min_significance=30)  # the paper's selection
    >>> data.n_samples, data.class_counts()
    (454, {'bll': 184, 'fsrq': 168, 'psr': 102})
    >>> data.feature_names[:3]
    ('Flux1000', 'log(Signif_Avg)', 'log(LP_SigCurv)')
    >>> catalog.class_counts()["unassociated"]   # what ``catalog.pool()`` selects by default
    1337
    """

    def __init__(self, table, provenance: Provenance):
        self.table = table
        self._prov = provenance
        self.record = provenance.record
        self.columns = self.record.columns
        if self.record.null is not None:  # the release's "not measured" value in float columns reads as NaN
            for name in table.colnames:
                if table[name].dtype.kind == "f":
                    values = np.asarray(table[name])
                    values[values == self.record.null] = np.nan
        self.names = text_values(table[self.columns.name])
        #: CLASS1 as the catalog writes it: upper case marks an identification, lower case an association
        self.class1 = text_values(table[self.columns.class_code])
        # gpal compares the codes case-insensitively
        self.class_codes = np.char.lower(self.class1)

    def copy(self) -> "Catalog":
        """This catalog with its own copy of the table and of the arrays read from it.

        Returns
        -------
        Catalog
            A catalog whose changes never reach this one.
        """
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.table = self.table.copy()
        new.names, new.class1, new.class_codes = self.names.copy(), self.class1.copy(), self.class_codes.copy()
        return new

    @classmethod
    def from_file(cls, path: str | Path) -> "Catalog":
        """Read a LAT catalog FITS file (``gll_psc_v*.fit[.gz]``) of any release gpal knows.

        Returns
        -------
        Catalog
            The catalog in ``path`` (a warning if a shipped file's row count differs from the published one).
        """
        path = Path(path)
        catalog = cls._read(path)
        _warn_row_count(path, catalog.n_rows, stacklevel=3)
        return catalog

    @classmethod
    def _read(cls, path: Path) -> "Catalog":
        """`from_file` without its row-count warning, which `load_catalog` gives at each load of a kept read."""
        catalog = cls(*read_catalog_file(path))
        _check_unique(path, catalog.names, catalog.columns.name)
        return catalog

    # ----------------------------------------------------------- provenance
    path = property(lambda self: self._prov.path)
    release = property(lambda self: self._prov.release)
    version = property(lambda self: self._prov.version)
    cds_name = property(lambda self: self._prov.cds_name)
    data_release = property(lambda self: self._prov.data_release)
    n_rows = property(lambda self: self._prov.n_rows)

    def __repr__(self) -> str:
        return f"Catalog({self.release}, version={self.version}, rows={self.n_rows}, file={self.path.name})"

    def provenance(self) -> dict[str, Any]:
        """Which catalog this is: what a run records to say where its sources came from.

        Returns
        -------
        dict
            ``release``, ``version``, ``cds_name``, ``data_release``, ``rows``, ``file`` and ``sha256``
            (of the file's bytes).
        """
        return {
            "release": self.release,
            "version": self.version,
            "cds_name": self.cds_name,
            "data_release": self.data_release,
            "rows": self.n_rows,
            "file": self.path.name,
            "sha256": self._prov.sha256,
        }

    # -------------------------------------------------------------- classes
    def class_counts(self) -> dict[str, int]:
        """Sources per CLASS1 code (case-folded), most common first; empty codes count as 'unassociated'.

        Returns
        -------
        dict
            CLASS1 code -> number of sources.
        """
        counts = Counter(code or UNASSOCIATED for code in self.class_codes)
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def summary(self, features: str | Sequence[Any] | None = None) -> str:
        """A human-readable description of the catalog and of how ``features`` are built from it.

        Returns
        -------
        str
            Release, file, source count, class counts and one line per feature (the default preset
            without ``features``; ``"release"``: the release's own preset, the main job's features).
        """
        lines = [
            f"release   {self.release} (CDS-NAME {self.cds_name}, version {self.version}, data release {self.data_release})",
            f"file      {self.path}",
            f"sources   {self.n_rows}",
            "classes   " + ", ".join(f"{code} {n}" for code, n in self.class_counts().items()),
            "features" + self._preset_named(features),
        ]
        for f in self.features(features):
            err = f"± {f.error}" if f.error else "(no error bar: variance 0)"
            floor = f", floor {f.floor}" if f.floor is not None else ""
            source = f"{f.column}{'' if f.band is None else f' band {f.band}'}"
            if f.combine is not None:
                other = f"{f.other_column}{'' if f.other_band is None else f' band {f.other_band}'}"
                source = f"{f.combine} of {source} and {other}"
            lines.append(f"  {f.label:<22s} {f.transform}{floor} of {source} {err}")
        return "\n".join(lines)

    def _preset_named(self, features: str | Sequence[Any] | None) -> str:
        """Which preset ``features`` names, for the summary's heading ('' for a list of columns)."""
        if features is None:
            return ("  (preset 'default': Villacampa-Calvo et al. 2021's, a missing error given the population's median "
                    "as the main job gives it)")
        if isinstance(features, str) and features.lower() == RELEASE_PRESET:
            return f"  (preset '{self.record.preset}', the main job's on {self.release})"
        return f"  (preset '{features}')" if isinstance(features, str) else ""

    # ----------------------------------------------------------- selections
    def dataset(
        self,
        classes: Sequence[str] = ("bll", "fsrq", "psr"),
        min_significance: float | None = None,
        features: str | Sequence[Any] | None = None,
        merge: Mapping[str, Sequence[str]] | None = None,
        nan_policy: str = "drop",
        significance_column: str | None = None,
    ) -> NoisyDataset:
        """Labelled sources of the given classes as a NoisyDataset.

        ``classes`` lists class names; each is a CLASS1 code (any case) or a key of
        ``merge``, which groups codes (``{"pulsar": ["psr", "msp"]}``).  The label
        order follows ``classes``.  ``min_significance`` keeps sources with
        ``significance_column`` (default: the release's significance column) strictly above it, as
        the published selection (4FGL, > 30 sigma, bll/fsrq/psr: 454 sources).  ``features`` may be
        ``"release"``: the main-job preset of the catalog's release record.

        Returns
        -------
        NoisyDataset
            Features, their variances, class codes in the order of ``classes``, source names as
            ids, sky positions and CLASS1 as aux columns, provenance and cuts in ``meta``.
        """
        groups = self._class_groups(classes, merge)
        code_to_label = {code: k for k, codes in enumerate(groups.values()) for code in codes}
        mask = np.isin(self.class_codes, list(code_to_label))
        significance_column = significance_column or self.columns.significance
        cuts = {
            "classes": {name: list(codes) for name, codes in groups.items()},
            "min_significance": min_significance,
            "significance_column": significance_column,
        }
        rows, X, X_var, feats, counted = self._select(mask, features, min_significance, significance_column, nan_policy, cuts)
        y = np.array([code_to_label[c] for c in self.class_codes[rows]], dtype=np.int64)
        return self._build(rows, X, X_var, y, tuple(groups), feats, counted, cuts)

    def pool(
        self,
        select: str | Sequence[str] = (UNASSOCIATED,),
        min_significance: float | None = None,
        features: str | Sequence[Any] | None = None,
        nan_policy: str = "drop",
        significance_column: str | None = None,
    ) -> NoisyDataset:
        """Unlabelled sources for prediction and active learning.

        ``select`` names what goes in: ``"unassociated"`` (empty CLASS1) and/or class
        codes such as ``"bcu"`` or ``"unk"``, whose physical class is not known.

        Returns
        -------
        NoisyDataset
            The selected sources, unlabelled (``y`` None), built as `dataset` builds its rows.
        """
        tokens, mask = self._selected(select)
        significance_column = significance_column or self.columns.significance
        cuts = {"select": tokens, "min_significance": min_significance, "significance_column": significance_column}
        rows, X, X_var, feats, counted = self._select(mask, features, min_significance, significance_column, nan_policy, cuts)
        return self._build(rows, X, X_var, None, (), feats, counted, cuts)

    def _selected(self, select: str | Sequence[str]) -> tuple[list[str], np.ndarray]:
        """The ``select`` tokens of `pool` and `pool_blocks`, and the mask of the rows they name (codes checked)."""
        tokens = [select] if isinstance(select, str) else list(select)
        if not tokens:
            raise ValueError("select must name at least one of 'unassociated' or a class code")
        wanted = {"" if t.lower() == UNASSOCIATED else t.lower() for t in tokens}
        self._check_codes(wanted - {""})
        return tokens, np.isin(self.class_codes, list(wanted))

    def _class_groups(self, classes: Sequence[str], merge: Mapping[str, Sequence[str]] | None) -> dict[str, tuple[str, ...]]:
        if isinstance(classes, str):
            classes = [classes]
        if not classes:
            raise ValueError("classes must name at least one class")
        merge = {str(k): [str(c).lower() for c in v] for k, v in (merge or {}).items()}
        for name in merge:
            if name not in classes:
                raise ValueError(f"merge group {name!r} is not among classes {list(classes)}; add it to classes")
        groups = {name: tuple(merge.get(name, [name.lower()])) for name in classes}
        if len(groups) != len(classes):
            raise ValueError(f"classes must be unique; got {list(classes)}")
        owners: dict[str, list[str]] = {}
        for name, codes in groups.items():
            for code in codes:
                owners.setdefault(code, []).append(name)
        twice = {code: names for code, names in owners.items() if len(names) > 1}
        if twice:
            raise ValueError("each CLASS1 code may belong to one class only; "
                             + "; ".join(f"{code!r} is named {len(names)} times, in {' and '.join(names)}"
                                         for code, names in twice.items()))
        self._check_codes(set(owners))
        present = self.class_counts()
        for name, codes in groups.items():
            if not any(code in present for code in codes):
                raise ValueError(
                    f"class {name!r} (codes {list(codes)}) has no source in {self.release}; "
                    f"codes present (count): {_listing(present)}"
                )
        return groups

    def values_of(self, role: str, ids: Sequence[str]) -> np.ndarray:
        """The release's column for ``role`` (a `Columns` field: ``"significance"``, ``"flux"`` ...) as floats, at
        the sources named ``ids``; NaN throughout where the release has no such column.

        Returns
        -------
        numpy.ndarray
            (len(ids),) floats.
        """
        column = getattr(self.columns, role)
        if column is None or column not in self.table.colnames:
            return np.full(len(ids), np.nan)
        row = {name: i for i, name in enumerate(self.names)}
        return self._numbers(column)[[row[str(name)] for name in ids]]

    def features(self, features: str | Sequence[Any] | None) -> tuple[Feature, ...]:
        """``features`` resolved against this catalog (`resolve_features`); ``"release"``: its release's preset.

        Returns
        -------
        tuple of Feature
            The features.
        """
        if isinstance(features, str) and features.lower() == RELEASE_PRESET:
            features = self.record.preset
        resolved = resolve_features(features, self.table.colnames)
        for feature in resolved:
            missing = [name for name in feature.columns if name not in self.table.colnames]
            if missing:
                close = sorted({m for name in missing for m in difflib.get_close_matches(name, self.table.colnames, 3)})
                raise ValueError(
                    f"column {missing[0]!r} is not in the {self.release} catalog ({self.path.name})"
                    f"{f'; did you mean {close}?' if close else ''}; feature {feature.label!r} reads it; a feature is a preset "
                    f"({', '.join(sorted(FEATURE_PRESETS))}, or '{RELEASE_PRESET}': the release's own) or columns of "
                    f"the catalog: {', '.join(self.table.colnames)}")
        return resolved

    def _check_codes(self, codes: set[str]) -> None:
        """Codes must be present here, or be LAT codes another release uses (msp on 3FGL)."""
        present = self.class_counts()
        unknown = sorted(c for c in codes if c == UNASSOCIATED or (c not in present and c not in LAT_CLASS_CODES))
        if unknown:
            raise ValueError(f"unknown class code(s) {unknown} in {self.release}; codes present (count): {_listing(present)}")

    def _column(self, name: str) -> Any:
        if name not in self.table.colnames:
            close = difflib.get_close_matches(name, self.table.colnames, n=3)
            hint = f"; did you mean {close}?" if close else ""
            raise ValueError(f"column {name!r} is not in the {self.release} catalog ({self.path.name}){hint}")
        return self.table[name]

    def _numbers(self, name: str, rows: slice | None = None) -> np.ndarray:
        """Column ``name`` as floats (masked values NaN), at ``rows`` (all when None); a column of text is refused
        by name."""
        column = self._column(name)
        dtype = np.asarray(column).dtype
        if dtype.kind not in "iuf":  # booleans are not measurements either
            raise ValueError(
                f"column {name!r} of the {self.release} catalog ({self.path.name}) holds "
                f"{'text' if dtype.kind in 'SU' else dtype} values such as {str(column[0]).strip()!r}; expected numbers"
            )
        return _floats(column if rows is None else column[rows])

    def _select(self, mask, features, min_significance, significance_column, nan_policy, cuts):
        if nan_policy not in ("drop", "raise"):
            raise ValueError(f"nan_policy must be 'drop' or 'raise'; got {nan_policy!r}")
        feats = self.features(features)
        rows, X, X_var, counted = feature_table(self._numbers, self.names, mask, feats,
                                                min_significance=min_significance,
                                                significance_column=significance_column, nan_policy=nan_policy,
                                                release=self.release, cuts=cuts)
        return rows, X, X_var, feats, counted

    def rows(self, rows: slice) -> "Catalog":
        """The catalog of the rows ``rows`` (a view of this one's table): what a block of rows looks up of its own
        sources (positions, flags, counterparts) without a pass over every row.

        Returns
        -------
        Catalog
            The same release, file and provenance, ``n_rows`` the block's.
        """
        table = self.table[rows]
        return Catalog(table, dataclasses.replace(self._prov, n_rows=len(table)))

    def pool_blocks(self, select: str | Sequence[str] = (UNASSOCIATED,), features: str | Sequence[Any] | None = None,
                    *, rows: int) -> Iterator[NoisyDataset]:
        """`pool` (``nan_policy="drop"``, no significance cut) in blocks of ``rows`` catalog rows (the caller's choice:
        `gpal predict`'s is `gpal.catalog_jobs.prediction.BLOCK_ROWS`): each block's
        sources, features and variances are those `pool` gives them, bit for bit (the population's errors are the
        whole catalog's), while memory holds one block's features whatever the catalog's rows.

        The dropped and repaired sources are said once, after the last block (as `pool` says them); an empty
        selection is refused then.  A block that selects no source is skipped.  Each dataset's ``meta`` counts its
        own block, ``meta["block"]`` the catalog rows it was selected from (`rows`); ``meta["blocks"]`` of the last one
        holds the whole selection's counts (``n_samples``, ``dropped``, ``repaired``).

        Yields
        ------
        NoisyDataset
            The selected sources of each block of rows, in catalog order.
        """
        rows = int(rows)
        if rows < 1:
            raise ValueError(f"rows must be a positive number of catalog rows per block; got {rows}")
        tokens, mask = self._selected(select)
        significance_column = self.columns.significance
        cuts = {"select": tokens, "min_significance": None, "significance_column": significance_column}
        feats = self.features(features)
        for block in feature_blocks(self._numbers, self.names, mask, feats, rows=rows, release=self.release, cuts=cuts):
            data = self._build(block.rows, block.X, block.X_var, None, (), feats, block.counted, cuts)
            data.meta["block"] = list(block.span)
            if block.totals is not None:
                data.meta["blocks"] = block.totals
            yield data

    def _build(self, rows, X, X_var, y, class_names, feats: Sequence[Feature], counted, cuts) -> NoisyDataset:
        columns = {key: getattr(self.columns, role) for key, role in _AUX_COLUMNS.items()}
        aux = {key: _floats(self.table[name][rows]) for key, name in columns.items() if name in self.table.colnames}
        aux["CLASS1"] = self.class1[rows]
        meta = {
            **self.provenance(),
            "cuts": cuts,
            "features": [f.to_dict() for f in feats],
            **counted,  # rows dropped and values repaired
        }
        return NoisyDataset(
            X=X,
            X_var=X_var,
            y=y,
            class_names=class_names,
            feature_names=tuple(f.label for f in feats),
            ids=self.names[rows],
            aux=aux,
            meta=meta,
        )
