"""Which declinations a telescope can observe: the target lists' visibility cut (``--candidate-visible-from``).

A source of declination d culminates at elevation 90 - |phi - d| at a site of latitude phi, so a telescope
that points down to elevation e_min sees, at least at transit, the declinations within 90 - e_min of its
latitude (`declination_range`).  The lower culmination adds nothing: a source high enough there is higher at
transit.  Telescopes are declared once, in `TELESCOPES`, with where their limit is published; a proposal
for another telescope gives its declination range itself (``--candidate-declination=MIN,MAX``).
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Mapping

__all__ = ["TELESCOPES", "Telescope", "declination_range"]


@dataclass(frozen=True)
class Telescope:
    """A site's geodetic latitude (deg, north positive), the lowest elevation it points to (deg), and where the
    limit is published."""

    latitude: float
    min_elevation: float
    source: str


#: The radio telescopes pulsar searches of LAT sources propose for.
TELESCOPES: Mapping[str, Telescope] = types.MappingProxyType({
    "FAST": Telescope(25.65, 50.0, "zenith angle <= 40 deg (Jiang et al. 2019, Sci. China PMA 62, 959502)"),
    "GBT": Telescope(38.43, 5.0, "elevation >= 5 deg (GBT Proposer's Guide)"),
    "Parkes": Telescope(-33.00, 30.25, "elevation >= 30.25 deg (Murriyang / Parkes users' guide)"),
    "MeerKAT": Telescope(-30.71, 15.0, "elevation >= 15 deg (MeerKAT specifications, SARAO)"),
})


def declination_range(name: str) -> tuple[float, float]:
    """The declinations (deg) telescope ``name`` (`TELESCOPES`) sees at transit, south to north.

    A name not in `TELESCOPES` is a ValueError naming the known ones.
    """
    if name not in TELESCOPES:
        raise ValueError(f"unknown telescope {name!r}; known: {', '.join(TELESCOPES)}.  For another telescope give the "
                         "declinations it sees at transit, --candidate-declination=MIN,MAX: from its latitude L and "
                         "the lowest elevation E it points to, MIN = L - (90 - E) and MAX = L + (90 - E) (deg)")
    site = TELESCOPES[name]
    reach = 90.0 - site.min_elevation
    return max(-90.0, site.latitude - reach), min(90.0, site.latitude + reach)
