"""Positions inside a source's error ellipse, on the sphere.

A LAT catalog gives each source's 95% ellipse as two semi-axes and the major axis's position angle east of north
(``Conf_95_SemiMajor``, ``Conf_95_SemiMinor``, ``Conf_95_PosAng``, degrees); an extended source's template is an
ellipse of the same form.  A position is inside when its offset from the centre (separation r and position angle
phi, on the sphere) satisfies ``(r cos(phi - PA) / a)**2 + (r sin(phi - PA) / b)**2 <= 1`` (`in_error_ellipse`).
Many ellipses asked about many positions go through a k-d tree of the positions (`PositionIndex`), made once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["PositionIndex", "angular_offsets", "in_error_ellipse", "positions_inside"]


def angular_offsets(ra0: Any, dec0: Any, ra: Any, dec: Any) -> tuple[np.ndarray, np.ndarray]:
    """The separation and position angle (east of north) of ``(ra, dec)`` seen from ``(ra0, dec0)``, all in
    degrees (J2000), on the sphere (haversine and the exact bearing); the arrays broadcast.

    Returns
    -------
    tuple of numpy.ndarray
        Separation in [0, 180] and position angle in [0, 360) degrees.
    """
    a0, d0, a, d = (np.radians(np.asarray(v, dtype=np.float64)) for v in (ra0, dec0, ra, dec))
    dra = a - a0
    h = np.sin((d - d0) / 2) ** 2 + np.cos(d0) * np.cos(d) * np.sin(dra / 2) ** 2
    separation = 2 * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))
    angle = np.arctan2(np.sin(dra) * np.cos(d), np.cos(d0) * np.sin(d) - np.sin(d0) * np.cos(d) * np.cos(dra))
    return np.degrees(separation), np.mod(np.degrees(angle), 360.0)


def in_error_ellipse(ra0: Any, dec0: Any, semimajor: Any, semiminor: Any, posang: Any, ra: Any,
                     dec: Any) -> np.ndarray:
    """Whether ``(ra, dec)`` lies inside the error ellipse centred on ``(ra0, dec0)``: semi-axes ``semimajor`` and
    ``semiminor``, the major axis at position angle ``posang`` east of north, all in degrees (the LAT catalogs'
    ``Conf_95_*``); the boundary counts as inside.  An ellipse with a NaN or non-positive axis holds nothing.

    Returns
    -------
    numpy.ndarray
        Booleans, the arrays' broadcast shape.
    """
    separation, angle = angular_offsets(ra0, dec0, ra, dec)
    a = np.asarray(semimajor, dtype=np.float64)
    b = np.asarray(semiminor, dtype=np.float64)
    turn = np.radians(angle - np.asarray(posang, dtype=np.float64))
    along, across = separation * np.cos(turn), separation * np.sin(turn)
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = (along / a) ** 2 + (across / b) ** 2 <= 1.0
    return inside & (a > 0) & (b > 0)


def positions_inside(ra0: np.ndarray, dec0: np.ndarray, semimajor: np.ndarray, semiminor: np.ndarray,
                     posang: np.ndarray, ra: np.ndarray, dec: np.ndarray) -> list[list[tuple[int, float]]]:
    """For each ellipse (arrays of n, degrees), the positions (arrays of m) inside it (`in_error_ellipse`), nearest
    first: a k-d tree on the unit sphere finds those within the semi-major axis, the exact test decides.

    Returns
    -------
    list of list of (int, float)
        Per ellipse, (index into the positions, separation in degrees).
    """
    return PositionIndex(ra, dec).inside(ra0, dec0, semimajor, semiminor, posang)


def _unit(ra: np.ndarray, dec: np.ndarray) -> np.ndarray:
    ra, dec = np.radians(ra), np.radians(dec)
    return np.column_stack([np.cos(dec) * np.cos(ra), np.cos(dec) * np.sin(ra), np.sin(dec)])


class PositionIndex:
    """Positions (degrees) in a k-d tree on the unit sphere, made once and asked about many ellipses: a large
    catalog's counterparts, asked about a block of its sources at a time, are not put in a tree once a block."""

    def __init__(self, ra: np.ndarray, dec: np.ndarray):
        from scipy.spatial import cKDTree

        self.ra, self.dec = ra, dec
        self.keep = np.nonzero(np.isfinite(ra) & np.isfinite(dec))[0]
        self.tree = cKDTree(_unit(ra[self.keep], dec[self.keep])) if self.keep.size else None

    def inside(self, ra0: np.ndarray, dec0: np.ndarray, semimajor: np.ndarray, semiminor: np.ndarray,
               posang: np.ndarray) -> list[list[tuple[int, float]]]:
        """`positions_inside` of these positions."""
        found: list[list[tuple[int, float]]] = [[] for _ in range(len(ra0))]
        has = np.isfinite(ra0) & np.isfinite(dec0) & (semimajor > 0) & (semiminor > 0)
        if self.tree is None or not has.any():
            return found
        rows = np.nonzero(has)[0]
        chord = 2 * np.sin(np.radians(np.minimum(semimajor[rows], 90.0)) / 2) * (1 + 1e-9)
        near = self.tree.query_ball_point(_unit(ra0[rows], dec0[rows]), r=chord)
        for i, hits in zip(rows, near):
            if not hits:
                continue
            j = self.keep[np.asarray(hits, dtype=np.int64)]
            ra, dec = self.ra[j], self.dec[j]
            inside = in_error_ellipse(ra0[i], dec0[i], semimajor[i], semiminor[i], posang[i], ra, dec)
            separation, _ = angular_offsets(ra0[i], dec0[i], ra, dec)
            found[i] = sorted(((int(k), float(s)) for k, s, ok in zip(j, separation, inside) if ok),
                              key=lambda t: t[1])
        return found
