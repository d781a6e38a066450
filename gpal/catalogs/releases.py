"""Fermi-LAT catalog releases as data: one record per release, the only place a column name is written.

A release says how its file is recognised (header ``CDS-NAME``, a data release number, the
columns every file of it has), which CLASS1 codes its paper defines, which column holds each
quantity gpal reads (position, significance, flux, spectral shape, their errors, the columns a
follow-up target list needs), its main-job feature preset and how it links to earlier
releases.  Everything above `gpal.catalogs` asks a record (``catalog.record.columns.X``)
instead of naming a column, so adding a release is one record, shipped here or registered from a
user's own code with `register_release`, and, for a new layout, a `Columns` and a preset
(`gpal.catalogs.features.presets.register_preset`), written from the layout's roles
(docs/extending.md).
"""

from __future__ import annotations

import dataclasses
import types
from dataclasses import dataclass, field
from typing import Mapping

__all__ = [
    "Columns", "DEFAULT_RELEASE", "FGL3_FLAGS", "FGL4_FLAGS", "LAT_CLASS_CODES", "NEWEST_RELEASE", "RELEASES", "Release",
    "identify_release", "link_path", "register_release", "release_by_name", "release_families", "unregister_release",
]

# CLASS1 codes of the 4FGL papers (Abdollahi et al. 2020; Ballet et al. 2023), case-folded.
_FGL4_CODES = frozenset(
    "psr msp pwn snr spp glc sfr hmb lmb bin nov gc bll fsrq rdg agn ssrq css bcu nlsy1 sey sbg gal unk".split())
# 3FGL (Acero et al. 2015): no msp (every pulsar is psr), lmb or unk; its other codes are 4FGL's.
_FGL3_CODES = _FGL4_CODES - {"msp", "lmb", "unk"}
#: Every CLASS1 code a LAT release defines: a class spec may name a code another release uses (msp on 3FGL).
LAT_CLASS_CODES = _FGL4_CODES | _FGL3_CODES


@dataclass(frozen=True)
class Columns:
    """Column names of one catalog layout; None where the layout has no such column.

    ``band_flux`` is one multi-band column (4FGL's ``Flux_Band`` (n, 8)) or a tuple of one
    column per band (3FGL's ``Flux100_300`` ...); ``band_flux_error`` likewise, two-sided.

    Examples
    --------
    A layout of one's own: the 4FGL names, but for the columns that differ, and None where it has no such column.

    >>> from gpal.catalogs import Columns
    >>> layout = Columns(significance="SIGMA", flux="FLUX_1_100", flux_error=None)
    >>> layout.name, layout.significance, layout.flux_error
    ('Source_Name', 'SIGMA', None)
    """

    name: str = "Source_Name"
    class_code: str = "CLASS1"
    ra: str = "RAJ2000"
    dec: str = "DEJ2000"
    glon: str = "GLON"
    glat: str = "GLAT"
    significance: str = "Signif_Avg"
    flux: str = "Flux1000"
    flux_error: str | None = "Unc_Flux1000"
    energy_flux: str | None = "Energy_Flux100"
    energy_flux_error: str | None = "Unc_Energy_Flux100"
    pivot_energy: str | None = "Pivot_Energy"
    spectral_index: str | None = "LP_Index"
    spectral_index_error: str | None = "Unc_LP_Index"
    power_law_index: str | None = "PL_Index"
    power_law_index_error: str | None = "Unc_PL_Index"
    curvature_significance: str | None = "LP_SigCurv"
    beta: str | None = "LP_beta"
    beta_error: str | None = "Unc_LP_beta"
    variability: str | None = "Variability_Index"
    #: the fractional variability and its error, which 4FGL writes as 10 where it measured none
    frac_variability: str | None = "Frac_Variability"
    frac_variability_error: str | None = "Unc_Frac_Variability"
    band_flux: str | tuple[str, ...] | None = "Flux_Band"
    band_flux_error: str | tuple[str, ...] | None = "Unc_Flux_Band"
    #: the light curve: photon flux per time bin (n, bins) and its two-sided error (n, bins, 2)
    history_flux: str | None = "Flux_History"
    history_flux_error: str | None = "Unc_Flux_History"
    # what a follow-up target list needs
    conf95_semimajor: str | None = "Conf_95_SemiMajor"
    conf95_semiminor: str | None = "Conf_95_SemiMinor"
    conf95_posang: str | None = "Conf_95_PosAng"
    assoc1: str | None = "ASSOC1"
    #: the catalog's second association, its only one where CLASS1 is empty (FL16Y)
    class2: str | None = "CLASS2"
    assoc2: str | None = "ASSOC2"
    #: the energy at which the LogParabola's nu F_nu peaks (MeV)
    peak_energy: str | None = "LP_EPeak"
    flags: str | None = "Flags"
    extended_name: str | None = "Extended_Source_Name"
    #: the counterpart's position (J2000, deg) and the association probabilities of the two methods
    counterpart_ra: str | None = "RA_Counterpart"
    counterpart_dec: str | None = "DEC_Counterpart"
    assoc_prob_bay: str | None = "ASSOC_PROB_BAY"
    assoc_prob_lr: str | None = "ASSOC_PROB_LR"
    #: the column naming a source's counterpart in an earlier release (e.g. ``"3FGL J0001.0+6314"``)
    earlier_name: str | None = "ASSOC_FGL"


#: The 4FGL layout (4FGL, DR2, DR3, DR4 and FL16Y).
FGL4_COLUMNS = Columns()
#: The 3FGL layout: band fluxes as one column per band with two-sided errors, the index of the chosen spectral
#: model, Signif_Curve, beta only for LogParabola sources, no error on PowerLaw_Index, no fractional variability,
#: no earlier-release column (its 2FGL_Name is not
#: read: gpal ships no 2FGL).
FGL3_COLUMNS = Columns(
    spectral_index="Spectral_Index", spectral_index_error="Unc_Spectral_Index", power_law_index="PowerLaw_Index",
    power_law_index_error=None, frac_variability=None, frac_variability_error=None,
    curvature_significance="Signif_Curve", beta="beta", beta_error="Unc_beta",
    band_flux=("Flux100_300", "Flux300_1000", "Flux1000_3000", "Flux3000_10000", "Flux10000_100000"),
    band_flux_error=("Unc_Flux100_300", "Unc_Flux300_1000", "Unc_Flux1000_3000", "Unc_Flux3000_10000",
                     "Unc_Flux10000_100000"),
    earlier_name=None, counterpart_ra=None, counterpart_dec=None, assoc_prob_bay=None, assoc_prob_lr=None,
    class2=None, peak_energy=None,
)

# What each analysis flag means (flag n is bit value 2**(n-1) of ``Flags``), in short words of ours.
# 4FGL: Abdollahi et al. 2020, ApJS 247, 33, Table 5 (flags 1-6, 9, 10, 12, 14; 7, 8, 11 unused); flag 13 came with
# the data releases (Ballet et al. 2020, 4FGL-DR2, and the DR3 / DR4 papers): TS below 25 over the release's longer
# data, a source kept from the earlier release.  FL16Y has no paper yet: its flags are read as 4FGL-DR4's (same
# layout and analysis).  3FGL: Acero et al. 2015, ApJS 218, 23, Table 3 (2 and 8 unused).
_FLAGS_COMMON = {
    1: "TS fell below 25 with another diffuse model or analysis method",
    3: "flux changed by > 3 sigma with another diffuse model or analysis method",
    4: "source-to-background ratio below 10%",
    5: "closer than theta_ref to a brighter neighbour (confused)",
    6: "on an interstellar gas clump or diffuse-model defect (c source)",
    9: "poor localization (pointlike quality > 8 or 95% major axis > 0.25 deg)",
    12: "highly curved spectrum (shape parameter fixed at its limit)",
}
FGL4_FLAGS = types.MappingProxyType({
    **_FLAGS_COMMON,
    2: "moved beyond its 95% ellipse with another diffuse model",
    10: "bad spectral fit quality",
    13: "TS below 25 over this release's data (kept from an earlier release)",
    14: "soft Galactic unassociated source",
})
FGL3_FLAGS = types.MappingProxyType({
    **_FLAGS_COMMON,
    7: "unstable position (gtfindsrc outside the pointlike 95% ellipse)",
    10: "spectral fit quality > 16.3",
    11: "possibly due to the Sun",
})


@dataclass(frozen=True)
class Release:
    """One LAT catalog release: how its file is recognised and read, and how it links to earlier ones.

    ``family`` is the header's ``CDS-NAME``; ``data_release`` tells the 4FGL data releases apart
    (the file's ``DataRelease`` keyword or column; 1 without one).  ``file`` (a name in the shipped
    catalog folder, or the path of a user's own file) and ``rows`` describe the file.  ``null`` is the
    value the file writes for "not measured" in float columns (3FGL writes -inf), read as NaN.
    ``links`` maps an earlier family to the column of this release that names its sources there
    (``columns.name`` for the same family: 4FGL names are kept between data releases).  ``preset`` is the main job's feature preset for this release.

    Examples
    --------
    >>> from gpal.catalogs import RELEASES
    >>> fl16y = RELEASES["FL16Y"]
    >>> fl16y.family, fl16y.file, fl16y.preset, fl16y.columns.conf95_semimajor
    ('FL16Y', 'gll_psc_v41.fit.gz', 'fermi_dr4', 'Conf_95_SemiMajor')
    >>> fl16y.link_column(RELEASES["4FGL-DR4"]), RELEASES["3FGL"].columns.band_flux[0]
    ('ASSOC_FGL', 'Flux100_300')
    """

    name: str
    family: str
    data_release: int
    file: str | None
    rows: int | None
    columns: Columns
    preset: str
    class_codes: frozenset = _FGL4_CODES
    links: Mapping[str, str] = field(default_factory=dict)
    null: float | None = None
    description: str = ""
    #: flag number -> its meaning (`FGL4_FLAGS`, `FGL3_FLAGS`)
    flag_meanings: Mapping[int, str] = field(default_factory=lambda: FGL4_FLAGS)
    #: the year the release was made public (its paper or file), for how long a source has stayed unassociated
    #: (`gpal.catalogs.search_history`); None where unknown
    published: int | None = None

    def required(self) -> tuple[str, ...]:
        """The columns a file of this release must have to be read at all.

        Returns
        -------
        tuple of str
            Column names.
        """
        return (self.columns.name, self.columns.class_code)

    def link_column(self, earlier: "Release") -> str:
        """The column of this release that names the sources of ``earlier``; ValueError when there is none.

        Returns
        -------
        str
            The column name.
        """
        if earlier.family not in self.links:
            raise ValueError(
                f"{self.name} does not link to {earlier.name}: it names counterparts in "
                f"{', '.join(self.links) or 'no earlier release'}; expected a later release of "
                f"{earlier.name} ({earlier.family} names in one of its columns)")
        return self.links[earlier.family]


def _fgl4(name: str, dr: int, file: str | None, rows: int | None, description: str, published: int,
          columns: Columns = FGL4_COLUMNS) -> Release:
    return Release(name, "4FGL", dr, file, rows, columns, "fermi_dr4",
                   links=types.MappingProxyType({"4FGL": "Source_Name", "3FGL": "ASSOC_FGL"}), description=description,
                   published=published)


_NO_PEAK_ENERGY = dataclasses.replace(FGL4_COLUMNS, peak_energy=None)

#: Shipped releases, oldest first: name -> record.
_SHIPPED = {r.name: r for r in (
    Release("3FGL", "3FGL", 1, "gll_psc_v16.fit.gz", 3034, FGL3_COLUMNS, "fermi_3fgl",
            class_codes=_FGL3_CODES, null=float("-inf"), flag_meanings=FGL3_FLAGS, published=2015,
            description="3FGL, 4 years (Acero et al. 2015, ApJS 218, 23)"),
    # 4FGL's first file and DR2's give no LP_EPeak (DR3 added it)
    _fgl4("4FGL", 1, "gll_psc_v20.fit.gz", 5066, "4FGL, 8 years (Abdollahi et al. 2020, ApJS 247, 33)",
          2020, _NO_PEAK_ENERGY),
    _fgl4("4FGL-DR2", 2, "gll_psc_v27.fit.gz", 5788, "4FGL-DR2, 10 years (Ballet et al. 2020, arXiv:2005.11208)",
          2020, _NO_PEAK_ENERGY),
    _fgl4("4FGL-DR4", 4, "gll_psc_v35.fit.gz", 7195, "4FGL-DR4, 14 years (Ballet et al. 2023, arXiv:2307.12546)",
          2023),
    # FL16Y: DR4's layout less DataRelease / ASSOC_4FGL, plus PriorSigma_Band; ASSOC_FGL holds 4FGL names (and
    # 41 older ones, 26 of them 3FGL, for sources 4FGL lost: too few to link 3FGL by, which goes through 4FGL).
    Release("FL16Y", "FL16Y", 1, "gll_psc_v41.fit.gz", 7224, FGL4_COLUMNS, "fermi_dr4",
            links=types.MappingProxyType({"4FGL": "ASSOC_FGL"}), published=2025,
            description="FL16Y, the Fermi-LAT 16-year source list (file of 2025-11-19)"),
)}
_RECORDS: dict[str, Release] = dict(_SHIPPED)
#: Every known release, oldest first: name -> record.  A live read-only view: a release registered later
#: (`register_release`) is in it wherever it was imported.
RELEASES: Mapping[str, Release] = types.MappingProxyType(_RECORDS)
#: The newest shipped release: the last shipped record (they are written oldest first).
NEWEST_RELEASE = next(reversed(_SHIPPED))
#: What the main job reads unless told: a registered release does not change it.
DEFAULT_RELEASE = NEWEST_RELEASE


def release_families() -> tuple[str, ...]:
    """The header CDS-NAME of each family gpal reads, oldest first (registered families included).

    Returns
    -------
    tuple of str
        The families, in the order of their oldest release.
    """
    return tuple(dict.fromkeys(r.family for r in _RECORDS.values()))


def register_release(release: Release, *, replace: bool = False) -> None:
    """Make ``release`` known to every verb: `load_catalog` by name, ``--catalog``, the links and the later check.

    A release of a known family takes its place among that family's by ``data_release``; a new family comes
    after every known one (newest).  Its ``file`` is a path of the user's (or a name in the shipped
    catalog folder); its ``preset`` is looked up when features are built (`register_preset` adds one).
    A name (any case) or a family and data release that another record has is refused unless ``replace``;
    a shipped release cannot be replaced.

    Examples
    --------
    >>> import dataclasses
    >>> from gpal.catalogs.releases import RELEASES, register_release, unregister_release
    >>> dr3 = dataclasses.replace(RELEASES["4FGL-DR4"], name="4FGL-DR3", data_release=3,
    ...                           file="/data/gll_psc_v31.fit.gz", rows=None)
    >>> register_release(dr3)
    >>> list(RELEASES)
    ['3FGL', '4FGL', '4FGL-DR2', '4FGL-DR3', '4FGL-DR4', 'FL16Y']
    >>> unregister_release("4FGL-DR3")
    """
    if not isinstance(release, Release):
        raise TypeError(f"register_release takes a gpal.catalogs.releases.Release record; got {type(release).__name__}")
    for field_name in ("name", "family", "preset"):
        if not isinstance(getattr(release, field_name), str) or not getattr(release, field_name):
            raise ValueError(f"a release's {field_name} must be a non-empty string; "
                             f"got {getattr(release, field_name)!r}")
    if not isinstance(release.columns, Columns):
        raise TypeError(f"release {release.name}: columns must be a Columns record; "
                        f"got {type(release.columns).__name__}")
    if not isinstance(release.data_release, int) or isinstance(release.data_release, bool) or release.data_release < 1:
        raise ValueError(f"release {release.name}: data_release must be an integer >= 1; got {release.data_release!r}")
    clashes = [r.name for r in _RECORDS.values() if r.name.lower() == release.name.lower()
               or (r.family, r.data_release) == (release.family.upper(), release.data_release)]
    shipped = [name for name in clashes if name in _SHIPPED]
    if shipped:
        raise ValueError(f"release {release.name!r} would replace the shipped release {shipped[0]} (same name or same "
                         "family and data release); give it a name and data release of its own")
    if clashes and not replace:
        raise ValueError(f"release {release.name!r} is already registered as {clashes[0]} (same name or same family "
                         "and data release); pass replace=True to replace it")
    family = release.family.upper()
    others = [r for r in _RECORDS.values() if r.name not in clashes]
    known = [r.family for r in others]
    if release.family != family:  # a header's CDS-NAME is compared upper-case
        release = dataclasses.replace(release, family=family)
    if family in known:
        # after the last record of its family that is older, else before the family's first
        place = max((i + 1 for i, r in enumerate(others)
                     if r.family == family and r.data_release < release.data_release), default=known.index(family))
    else:
        place = len(others)
    ordered = [*others[:place], release, *others[place:]]
    _RECORDS.clear()
    _RECORDS.update((r.name, r) for r in ordered)


def unregister_release(name: str) -> None:
    """Forget a release `register_release` added (any case); a shipped release stays."""
    record = release_by_name(name)
    if record is None:
        raise KeyError(f"no release {name!r} is registered; known: {list(_RECORDS)}")
    if record.name in _SHIPPED:
        raise ValueError(f"{record.name} is a shipped release and cannot be unregistered")
    del _RECORDS[record.name]


def link_path(earlier: Release, later: Release) -> tuple[Release, ...]:
    """The shipped releases a link from ``earlier`` to ``later`` goes through: none when ``later`` names
    ``earlier``'s sources itself, else the newest shipped release that ``later`` links to and that links to
    ``earlier`` (3FGL -> FL16Y goes through 4FGL-DR4).  ValueError when there is no such path."""
    if earlier.family in later.links:
        return ()
    between = [r for r in _RECORDS.values() if r.name not in (earlier.name, later.name)
               and r.family in later.links and earlier.family in r.links]
    if not between:
        later.link_column(earlier)  # raises, naming what later links to
    return (between[-1],)


def release_by_name(name: str) -> Release | None:
    """The known release (shipped or registered) called ``name`` (any case), or None.

    Returns
    -------
    Release or None
        Its record.
    """
    by_name = {key.lower(): record for key, record in _RECORDS.items()}
    return by_name.get(str(name).lower())


def identify_release(where: str, cds_name: str, data_release: int, colnames) -> Release:
    """The release of a file from its header CDS-NAME and data release; ValueError naming what was looked for.

    A data release of a known family that gpal does not ship (4FGL-DR3) gets its family's record
    under its own name.  ``where`` names the file in messages.
    """
    family = [r for r in _RECORDS.values() if r.family == cds_name.upper()]
    if not family:
        raise ValueError(
            f"{where} is not a catalog gpal can read: header CDS-NAME is {cds_name or 'missing'!r}; expected one of "
            f"{list(release_families())} (releases {', '.join(f'{r.name} ({r.file})' for r in _RECORDS.values())}), "
            "or a family of its own registered with gpal.register_release, in a "
            f"LAT_Point_Source_Catalog HDU with columns {[Columns().name, Columns().class_code]}")
    exact = [r for r in family if r.data_release == data_release]
    if exact:
        record = exact[0]
    else:
        record = dataclasses.replace(family[-1], name=f"{family[-1].family}-DR{data_release}", data_release=data_release,
                                     file=None, rows=None)
    missing = [c for c in record.required() if c not in colnames]
    if missing:
        raise ValueError(f"{where} is not a {record.name} catalog: column(s) {missing} are missing "
                         f"(a {record.family} file has {list(record.required())})")
    return record
