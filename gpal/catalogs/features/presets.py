"""Feature presets: the inputs of the main job and of other selections, written from a layout's column roles.

A preset names no column: it asks a release layout (`gpal.catalogs.releases.Columns`) for the
column of each quantity, so one definition serves every release of the layout, and a new layout
is a `Columns` record and a preset: a line here, or `register_preset` from a user's own code.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from gpal.catalogs.features.errors import MISSING_ERROR_REPAIRS
from gpal.catalogs.features.spec import Feature
from gpal.catalogs.releases import FGL3_COLUMNS, FGL4_COLUMNS, Columns

__all__ = ["FEATURE_PRESETS", "MISSING_ERRORS", "RELEASE_PRESET", "register_preset", "resolve_features",
           "unregister_preset", "with_missing_errors"]

#: The preset name that stands for "the preset of the catalog's release" (`gpal.catalogs.releases`), resolved
#: by the catalog that reads it.
RELEASE_PRESET = "release"

#: What the main job's features do with a value whose error the catalog does not give (Unc_LP_beta where beta is
#: pegged, Unc_Frac_Variability = 10 where no variability was measured): the population's error, chosen over reading
#: it as exact on later labels (docs/catalogs.md, "Missing errors").
MISSING_ERRORS = "population"

# The 4FGL error model of a photon or energy flux (docs/catalogs.md, "Error model of each feature"):
# Monte Carlo through the transform, the flux bounded below by 0.
_FLUX_ERRORS = dict(propagation="monte_carlo", lower_bound=0.0)


def _villacampa2021(c: Columns) -> tuple[Feature, ...]:
    """The six inputs of the Fermi-LAT experiment of Villacampa-Calvo et al. (2021, JMLR 22, sec. 5.6).

    Flux left linear, the three quantities without error bars log-transformed, spectral shape linear.
    The floor 0.1 sigma on LP_SigCurv only touches curvature significances indistinguishable from 0
    (none in the published 454-source 4FGL selection, whose minimum is 0.104; one row of 4FGL-DR4's).
    """
    return (
        Feature(c.flux, error=c.flux_error),
        Feature(c.significance, transform="log"),
        Feature(c.curvature_significance, transform="log", floor=0.1),
        Feature(c.pivot_energy, transform="log"),
        Feature(c.spectral_index, error=c.spectral_index_error),
        Feature(c.beta, error=c.beta_error),
    )


def _measured(column: str, error: str | None, **fields: Any) -> Feature:
    """A main-job feature: where it has an error column, a missing error read as `MISSING_ERRORS` says."""
    return Feature(column, error=error, **fields, **({"missing_error": MISSING_ERRORS} if error else {}))


def _hardness(c: Columns, soft: int, hard: int, name: str) -> Feature:
    """HR of two bands of a layout's band fluxes (one multi-band column, or one column per band): split-normal
    errors, upper-limit bands as 4FGL defines them, fluxes >= 0."""
    errors = dict(combine="hardness", name=name, two_sided="split_normal", **_FLUX_ERRORS)
    if isinstance(c.band_flux, tuple):
        return Feature(c.band_flux[hard], error=c.band_flux_error[hard], other=c.band_flux[soft],
                       other_error=c.band_flux_error[soft], **errors)
    return Feature(c.band_flux, error=c.band_flux_error, band=hard, other_band=soft, **errors)


def _main_job(c: Columns, hardness: Sequence[Feature], beta: bool) -> tuple[Feature, ...]:
    """The main job's inputs from a layout's roles; the fractional variability where the layout has it.

    Chosen on 4FGL-DR4 against other selections by held-out NLL (docs/catalogs.md): the paper's six with
    flux on a log scale (its long tail squashed every other source together after standardising), hardness
    ratios of adjacent bands, variability, energy flux, |sin b| and the single power-law index.  Errors follow
    the catalog's own conventions: fluxes are >= 0 and reach their log or hardness ratio by Monte Carlo, a band's
    two-sided error is a split normal, a band with Sqrt_TS_Band < 1 (NaN lower error) is the flat-prior posterior
    of its 2-sigma upper limit, and Unc_Frac_Variability = 10 (written where Frac_Variability is set to 0) is no
    error bar.
    """
    variability = () if c.frac_variability is None else (  # a fractional rms: >= 0 like a flux
        _measured(c.frac_variability, c.frac_variability_error, error_sentinel=10.0, propagation="monte_carlo",
                  lower_bound=0.0),)
    return (
        _measured(c.flux, c.flux_error, transform="log10", **_FLUX_ERRORS),
        Feature(c.significance, transform="log"),
        Feature(c.curvature_significance, transform="log", floor=0.1),
        Feature(c.pivot_energy, transform="log"),
        _measured(c.spectral_index, c.spectral_index_error),
        *((_measured(c.beta, c.beta_error),) if beta else ()),
        *hardness,
        Feature(c.variability, transform="log", floor=1.0),
        _measured(c.energy_flux, c.energy_flux_error, transform="log10", **_FLUX_ERRORS),
        Feature(c.glat, transform="abs_sin_deg", name="abs_sin_GLAT"),
        *variability,
        _measured(c.power_law_index, c.power_law_index_error),
    )


# 4FGL-DR4 bands 1-6 are 0.1-0.3, 0.3-1, 1-3, 3-10, 10-30, 30-100 GeV: the pulsar cut-off and the blazar peaks
# fall there.
_FERMI_DR4 = _main_job(FGL4_COLUMNS, [_hardness(FGL4_COLUMNS, b, b + 1, f"HR{b}{b + 1}") for b in range(1, 6)],
                       beta=True)
# 3FGL (docs/catalogs.md, "3FGL"): the index and curvature significance of its chosen spectral model stand for
# LP_Index and LP_SigCurv; its bands are separate columns whose NaN lower error marks Sqrt_TS < 1 exactly as in
# 4FGL, and its band k (0.1-0.3, 0.3-1, 1-3, 3-10, 10-100 GeV) is DR4 band k + 1, so HR12 compares the same
# energies in both layouts (HR45's hard band is 10-100 GeV here, 10-30 GeV in DR4).  beta is left out: 3FGL fits
# it only for its 395 LogParabola sources (-inf, "not fitted", elsewhere), and Signif_Curve carries the curvature
# of every source.
_FERMI_3FGL = _main_job(FGL3_COLUMNS, [_hardness(FGL3_COLUMNS, b, b + 1, f"HR{b + 1}{b + 2}") for b in range(4)],
                        beta=False)

# The measurements behind the summaries (docs/catalogs.md, "Band spectra and light curves").  Band spectrum:
# each 0.1-100 GeV band's share of the photon flux summed over those bands (DR4 bands 1-6, present in every 4FGL
# release; the 50-100 MeV and TeV bands are mostly upper limits), log10, floored at 1e-4; its value is the mean of
# the log draws, since a band whose best fit is ~0 (Sqrt_TS_Band = 0) has a point value at the floor.  Light
# curve: the yearly fluxes' max / mean and coefficient of variation, log10 (cv floored at 0.01: a steady source).
# Every band and year is an operand with the fermi_dr4 error model (split normal, upper limit where the lower
# error is NaN, >= 0), reduced per Monte Carlo draw, so the errors reach the features' variances.  3FGL's five
# band columns span the same 0.1-100 GeV: its band k is DR4 band k + 1 (named so, as its hardness ratios are),
# its 10-100 GeV band DR4's bands 5 and 6 together (log10_share56).
_SHARE_BANDS = tuple(range(1, 7))


def _share(c: Columns, band: int, bands: tuple[int, ...] | None, name: str) -> Feature:
    """Band ``band``'s share of the flux over ``bands`` of a layout's band fluxes: one definition for every layout."""
    return Feature(c.band_flux, error=c.band_flux_error, band=band, reduce="share", bands=bands,
                   transform="log10", floor=1e-4, two_sided="split_normal", centre="draw_mean", name=name,
                   **_FLUX_ERRORS)


def _light_curve(c: Columns) -> tuple[Feature, ...]:
    """The light curve's max / mean and coefficient of variation (3FGL's monthly one has 4FGL's layout)."""
    return tuple(Feature(c.history_flux, error=c.history_flux_error, reduce=reduce, transform="log10", floor=floor,
                         two_sided="split_normal", name=f"log10_lc_{reduce}", **_FLUX_ERRORS)
                 for reduce, floor in (("max_over_mean", None), ("cv", 0.01)))


_BAND_SPECTRUM = tuple(_share(FGL4_COLUMNS, b, _SHARE_BANDS, f"log10_share{b}") for b in _SHARE_BANDS)
_BAND_SPECTRUM_3FGL = tuple(_share(FGL3_COLUMNS, b, None, f"log10_share{b + 1}" if b < 4 else "log10_share56")
                            for b in range(len(FGL3_COLUMNS.band_flux)))

#: Preset name -> its features.
FEATURE_PRESETS: dict[str, tuple[Feature, ...]] = {
    "villacampa2021": _villacampa2021(FGL4_COLUMNS),
    "fermi_dr4": _FERMI_DR4,
    "fermi_dr4_bands": _FERMI_DR4 + _BAND_SPECTRUM,
    "fermi_dr4_lightcurve": _FERMI_DR4 + _light_curve(FGL4_COLUMNS),
    "fermi_dr4_measurements": _FERMI_DR4 + _BAND_SPECTRUM + _light_curve(FGL4_COLUMNS),
    "fermi_3fgl": _FERMI_3FGL,
    "fermi_3fgl_lightcurve": _FERMI_3FGL + _light_curve(FGL3_COLUMNS),
    "fermi_3fgl_measurements": _FERMI_3FGL + _BAND_SPECTRUM_3FGL + _light_curve(FGL3_COLUMNS),
}
# The default is the paper's six read as the main job reads a missing error (`MISSING_ERRORS`), so that
# ``catalog.pool()`` selects the sources ``gpal classify`` does (4FGL's pegged-beta sources have no Unc_LP_beta);
# "villacampa2021" keeps the paper's own rule, which drops them (none of its 454 sources lacks one).
FEATURE_PRESETS["default"] = tuple(replace(f, missing_error=MISSING_ERRORS) if f.error else f
                                   for f in FEATURE_PRESETS["villacampa2021"])
_SHIPPED_PRESETS = frozenset(FEATURE_PRESETS)


def register_preset(name: str, features: Sequence[Any], *, replace: bool = False) -> None:
    """Add the preset ``name`` (any case) that a release record, ``--features`` and the workflows can name.

    ``features`` are `Feature` objects or their specs (what `resolve_features` takes), written from a
    layout's column roles.  A name already taken is refused unless ``replace``; a shipped preset and
    ``"release"`` (the release's own preset) cannot be replaced.

    Examples
    --------
    >>> from gpal.catalogs.features import Feature, register_preset, resolve_features, unregister_preset
    >>> register_preset("flux_and_index", [Feature("Flux1000", "Unc_Flux1000", transform="log10"), "PL_Index"])
    >>> [f.label for f in resolve_features("flux_and_index")]
    ['log10(Flux1000)', 'PL_Index']
    >>> unregister_preset("flux_and_index")
    """
    if not isinstance(name, str) or not name or name.lower() == RELEASE_PRESET:
        raise ValueError(f"a preset name must be a non-empty string other than {RELEASE_PRESET!r}; got {name!r}")
    key = name.lower()
    if key in _SHIPPED_PRESETS:
        raise ValueError(f"preset {name!r} is shipped with gpal and cannot be replaced; give yours a name of its own")
    if key in FEATURE_PRESETS and not replace:
        raise ValueError(f"preset {name!r} is already registered; pass replace=True to replace it")
    if isinstance(features, str) or not isinstance(features, Sequence):
        raise TypeError(f"preset {name!r}: features must be a list of Feature objects or specs; got {features!r}")
    FEATURE_PRESETS[key] = resolve_features(features)


def unregister_preset(name: str) -> None:
    """Forget a preset `register_preset` added (any case); a shipped preset stays."""
    key = str(name).lower()
    if key in _SHIPPED_PRESETS:
        raise ValueError(f"preset {name!r} is shipped with gpal and cannot be unregistered")
    if key not in FEATURE_PRESETS:
        raise KeyError(f"no preset {name!r} is registered; known: {sorted(FEATURE_PRESETS)}")
    del FEATURE_PRESETS[key]


def with_missing_errors(features: Sequence[Feature], policy: str | None) -> tuple[Feature, ...]:
    """``features`` with every one that keeps rows without an error (``missing_error`` not ``"drop"``) reading them
    by ``policy`` (a key of `MISSING_ERROR_REPAIRS`; None: as they are).

    Returns
    -------
    tuple of Feature
        The features, in order.
    """
    if policy is None:
        return tuple(features)
    if policy not in MISSING_ERROR_REPAIRS:
        raise ValueError(f"unknown missing-error policy {policy!r}; valid: {list(MISSING_ERROR_REPAIRS)} or None")
    return tuple(f if f.missing_error == "drop" else replace(f, missing_error=policy) for f in features)


def resolve_features(features: str | Sequence[Any] | None, available: Sequence[str] = ()) -> tuple[Feature, ...]:
    """A preset name, or a list of Feature / dict / string specs, as a tuple of Features.

    Returns
    -------
    tuple of Feature
        The features, labels unique; the ``"default"`` preset for None.
    """
    if features is None:
        return FEATURE_PRESETS["default"]
    if isinstance(features, str):
        try:
            return FEATURE_PRESETS[features.lower()]
        except KeyError:
            raise ValueError(
                f"unknown feature preset {features!r}; valid presets: {sorted(FEATURE_PRESETS)} "
                "(or pass a list of features such as ['PL_Index', 'log:Energy_Flux100'])"
            ) from None
    resolved = tuple(Feature.from_spec(f, available) for f in features)
    if not resolved:
        raise ValueError("features must name at least one feature")
    labels = [f.label for f in resolved]
    if len(set(labels)) != len(labels):
        raise ValueError(f"feature names must be unique; got {labels}")
    return resolved
