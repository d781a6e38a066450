"""Class schemes: named choices of which catalog classes a model learns, declared as data.

A scheme is a class spec (``gpal.catalogs.classes``) with a name and the reason to use
it.  The sky holds more than blazars and pulsars: 4FGL-DR4 labels 379 sources of other
classes (supernova remnants, globular clusters, radio galaxies, binaries ...),
and a model that never saw them must call each one a blazar or a pulsar.  The schemes
with ``other_*`` groups give those sources a class of their own.

Two labels say "we do not know": ``bcu`` (a blazar of uncertain type) and ``unk`` (a
counterpart of unknown nature, mostly along the Galactic plane).  No scheme that
separates bll from fsrq trains on bcu (they are what the main job classifies), and no
scheme trains on unk.

Every CLASS1 code also belongs to one of three coarse groups, AGN, pulsar and other,
the level at which published classifiers of unassociated sources are compared (Zhu et
al. 2023: AGN / pulsar / other in the Galactic plane, AGN vs pulsar away from it).
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Mapping, Sequence

from gpal.catalogs.releases import LAT_CLASS_CODES
from gpal.catalogs.classes import merge_for, parse_class_spec

__all__ = ["CLASS_SCHEMES", "COARSE_GROUPS", "ClassScheme", "DEFAULT_SCHEME", "coarse_group", "resolve_classes"]

#: CLASS1 codes of active galaxies (blazars of every type, radio galaxies, Seyferts, quasars).
AGN_CODES = ("bll", "fsrq", "bcu", "rdg", "agn", "ssrq", "css", "nlsy1", "sey")
PULSAR_CODES = ("psr", "msp")
#: The coarse groups of the published comparisons; every other CLASS1 code is "other".
COARSE_GROUPS = types.MappingProxyType({"agn": AGN_CODES, "pulsar": PULSAR_CODES})
OTHER = "other"

_OTHER_GALACTIC = "spp+snr+glc+pwn+hmb+bin+lmb+nov+sfr+gc"
_OTHER_AGN = "rdg+agn+ssrq+css+nlsy1+sey"
#: The populations of the sky that are neither AGN nor pulsars: the Galactic ones and the star-forming galaxies.
_NOT_AGN_NOT_PULSAR = f"{_OTHER_GALACTIC}+sbg+gal"


@dataclass(frozen=True)
class ClassScheme:
    """A named class spec: the classes a model learns and the CLASS1 codes each one holds."""

    name: str
    spec: str
    why: str

    @property
    def classes(self) -> tuple[str, ...]:
        return parse_class_spec(self.spec)[0]

    @property
    def merge(self) -> dict[str, tuple[str, ...]]:
        return parse_class_spec(self.spec)[1]

    def codes(self) -> dict[str, tuple[str, ...]]:
        """Class -> the CLASS1 codes it holds."""
        merge = self.merge
        return {name: merge.get(name, (name,)) for name in self.classes}


CLASS_SCHEMES: Mapping[str, ClassScheme] = types.MappingProxyType({s.name: s for s in (
    ClassScheme("blazar_pulsar", "bll,fsrq,pulsar=psr+msp",
                "the three large classes; every source is called a BL Lac, an FSRQ or a pulsar"),
    ClassScheme("blazar_psr_msp", "bll,fsrq,psr,msp",
                "as blazar_pulsar, with millisecond pulsars apart from young ones"),
    ClassScheme("with_other", f"bll,fsrq,pulsar=psr+msp,other_agn={_OTHER_AGN},other_galactic={_OTHER_GALACTIC}",
                "the three large classes plus the other associated populations in two groups, extragalactic "
                "(non-blazar AGN) and Galactic (remnants, clusters, binaries, star-forming regions)"),
    ClassScheme("open_sky", f"bll,fsrq,pulsar=psr+msp,other={_NOT_AGN_NOT_PULSAR}",
                "the three large classes plus one class of every population that is neither an AGN nor a pulsar "
                "(remnants, pulsar wind nebulae, clusters, binaries, novae, star-forming regions and galaxies, "
                "spp), so that an unassociated source's probabilities cover what it can be; the non-blazar AGN "
                "(radio galaxies, Seyferts ...) are too few and too blazar-like to learn apart: no class holds "
                "them, and 'none of these' rarely flags them (docs/results.md, \"The open sky\")"),
    ClassScheme("agn_pulsar_other", f"agn=bll+fsrq+bcu+{_OTHER_AGN},pulsar=psr+msp,other={_OTHER_GALACTIC}+sbg+gal",
                "the coarse groups of the published comparisons; trains on the bcu blazars too"),
)})

#: The main job's scheme: open_sky, chosen on later labels (docs/results.md, "The open sky": a 4FGL-DR4 run
#: scored by the classes FL16Y gives its unassociated sources).  The earlier default, blazar_pulsar, scores as
#: well on held-out sources of the trained classes alone, but such a test cannot see what a model without an
#: ``other`` class makes of the sky's other populations.
DEFAULT_SCHEME = "open_sky"


def resolve_classes(classes: str | Sequence[str], merge: Mapping[str, Sequence[str]] | None = None
                    ) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """Classes and merges from a scheme name, a class spec string, or a list of classes with ``merge``."""
    if isinstance(classes, str):
        if merge:
            raise ValueError(f"give merges inside the class spec or scheme, not beside it; got classes={classes!r} "
                             f"and merge={dict(merge)}")
        name = classes.strip()
        if name in CLASS_SCHEMES:
            return parse_class_spec(CLASS_SCHEMES[name].spec)
        if "," not in name and "=" not in name:
            what = (f"{name!r} is one CLASS1 code, and a classifier needs two classes or more"
                    if name.lower() in LAT_CLASS_CODES else f"unknown class scheme {name!r}")
            raise ValueError(f"{what}: give a scheme ({', '.join(CLASS_SCHEMES)}), a class spec such as "
                             "'bll,fsrq,pulsar=psr+msp', or a list (in a workflow file, classes: [bll, fsrq])")
        return parse_class_spec(name)
    return tuple(classes), merge_for(classes, merge)


def coarse_group(code: str) -> str:
    """``"agn"``, ``"pulsar"`` or ``"other"`` for a CLASS1 code (any case).

    Returns
    -------
    str
        The group's name; ``"other"`` for a code in no group (an empty code too).
    """
    code = code.strip().lower()
    return next((group for group, codes in COARSE_GROUPS.items() if code in codes), OTHER)
