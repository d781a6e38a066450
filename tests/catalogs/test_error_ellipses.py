"""The 95% ellipse test against astropy's spherical geometry, and the k-d tree search against the pairwise test."""

import numpy as np

from gpal.catalogs.error_ellipses import angular_offsets, in_error_ellipse, positions_inside


def _astropy_inside(ra0, dec0, a, b, pa, ra, dec):
    """The same test written with astropy's separation and position angle: the independent computation."""
    import astropy.units as u
    from astropy.coordinates import SkyCoord

    centre, point = SkyCoord(ra0 * u.deg, dec0 * u.deg), SkyCoord(ra * u.deg, dec * u.deg)
    r, phi = centre.separation(point).deg, centre.position_angle(point).deg
    along, across = r * np.cos(np.radians(phi - pa)), r * np.sin(np.radians(phi - pa))
    return (along / a) ** 2 + (across / b) ** 2 <= 1, r, phi


def test_offsets_and_the_ellipse_agree_with_astropy_over_the_sky():
    rng = np.random.default_rng(7)
    n = 4000
    ra0 = rng.uniform(0, 360, n)
    dec0 = np.concatenate([rng.uniform(-89.9, 89.9, n - 4), [89.95, -89.95, 0.0, 0.0]])
    ra0[-2:] = [359.99, 0.01]  # across RA = 0
    a = rng.uniform(0.01, 0.5, n)
    b = a * rng.uniform(0.2, 1.0, n)
    pa = rng.uniform(0, 180, n)
    # points around each centre, out to 1.5 semi-major axes in every direction
    from astropy.coordinates import SkyCoord
    import astropy.units as u

    points = SkyCoord(ra0 * u.deg, dec0 * u.deg).directional_offset_by(rng.uniform(0, 360, n) * u.deg,
                                                                        a * rng.uniform(0, 1.5, n) * u.deg)
    ra, dec = points.ra.deg, points.dec.deg
    expected, r, phi = _astropy_inside(ra0, dec0, a, b, pa, ra, dec)
    separation, angle = angular_offsets(ra0, dec0, ra, dec)
    np.testing.assert_allclose(separation, r, atol=1e-9)
    turn = np.mod(angle - phi + 180, 360) - 180
    assert np.abs(turn[r > 1e-6]).max() < 1e-6
    got = in_error_ellipse(ra0, dec0, a, b, pa, ra, dec)
    assert 0.3 < expected.mean() < 0.8  # both sides of the boundary are tried
    np.testing.assert_array_equal(got, expected)


def test_the_ellipse_boundary_by_brute_force_and_the_position_angle_east_of_north():
    import astropy.units as u
    from astropy.coordinates import SkyCoord

    t = np.linspace(0, 2 * np.pi, 361)
    for ra0, dec0, a, b, pa in [(10.0, 20.0, 0.2, 0.05, 30.0), (359.95, -60.0, 0.1, 0.08, 135.0),
                                (200.0, 89.8, 0.15, 0.03, 80.0), (45.0, -89.9, 0.05, 0.02, 170.0)]:
        # the parametric ellipse: along the major axis a cos t, across b sin t, turned by the position angle
        along, across = a * np.cos(t), b * np.sin(t)
        angle = pa + np.degrees(np.arctan2(across, along))
        centre = SkyCoord(ra0 * u.deg, dec0 * u.deg)
        for scale, inside in ((0.98, True), (1.02, False)):
            p = centre.directional_offset_by(angle * u.deg, scale * np.hypot(along, across) * u.deg)
            assert (in_error_ellipse(ra0, dec0, a, b, pa, p.ra.deg, p.dec.deg) == inside).all(), (ra0, dec0, scale)
    # position angle east of north: a point 0.09 deg north is inside a north-south ellipse (PA 0), not an east-west one
    assert in_error_ellipse(100.0, 0.0, 0.1, 0.02, 0.0, 100.0, 0.09)
    assert not in_error_ellipse(100.0, 0.0, 0.1, 0.02, 90.0, 100.0, 0.09)
    assert in_error_ellipse(100.0, 0.0, 0.1, 0.02, 90.0, 100.09, 0.0)  # east is larger RA
    assert in_error_ellipse(100.0, 0.0, 0.1, 0.02, 45.0, 100.06, 0.06)  # north-east
    assert not in_error_ellipse(100.0, 0.0, 0.1, 0.02, 45.0, 99.94, 0.06)  # north-west
    assert not in_error_ellipse(100.0, 0.0, np.nan, 0.02, 45.0, 100.0, 0.0)  # no ellipse holds nothing


def test_positions_inside_finds_what_the_pairwise_test_finds():
    rng = np.random.default_rng(3)
    n, m = 300, 2000
    ra0, dec0 = rng.uniform(0, 30, n), rng.uniform(-10, 10, n)
    a = rng.uniform(0.05, 1.0, n)
    b, pa = a * rng.uniform(0.3, 1, n), rng.uniform(0, 360, n)
    a[:5] = np.nan
    ra, dec = rng.uniform(0, 30, m), rng.uniform(-10, 10, m)
    found = positions_inside(ra0, dec0, a, b, pa, ra, dec)
    pairwise = in_error_ellipse(ra0[:, None], dec0[:, None], a[:, None], b[:, None], pa[:, None], ra, dec)
    assert sum(map(len, found)) == pairwise.sum() > 100
    for i, hits in enumerate(found):
        assert sorted(j for j, _ in hits) == np.nonzero(pairwise[i])[0].tolist()
        assert [s for _, s in hits] == sorted(s for _, s in hits)
