"""The cheap tests that decide whether the massless kernels call a contact routine (or slice a plane) at all."""

from collections import namedtuple

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from trackdyn.contact.massless import _kernels as K


def _point_segment_distance(X, a, b):
    d = b - a
    s = np.clip(np.dot(X - a, d) / np.dot(d, d), 0.0, 1.0)
    return np.linalg.norm(X - (a + s * d))


@given(seed=st.integers(0, 2 ** 31 - 1), n=st.integers(1, 12))
@settings(max_examples=60, deadline=None)
def test_segments_near_is_the_point_segment_distance(seed, n):
    """``_segments_near`` (hull planes are skipped when it is False) against the brute-force distance."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, 3))
    b = a + rng.normal(size=(n, 3))
    L = np.linalg.norm(b - a, axis=1)
    t = (b - a) / L[:, None]
    X = rng.normal(scale=2.0, size=3)
    dist = min(_point_segment_distance(X, a[j], b[j]) for j in range(n))
    for r in (0.5 * dist, 0.999 * dist, 1.001 * dist, 2.0 * dist):
        assert K._segments_near((X[0], X[1], X[2]), r, a, t, L, n) == (dist <= r)
    assert not K._segments_near((X[0], X[1], X[2]), 10.0, a, t, L, 0)  # no segment: nothing near


_Section = namedtuple("_Section", "hplane_ptr hpoly_v")


def _clear(T, x0, x1, z0, z1, margin=1e-6):
    """``_section_clear`` of a rectangular hull section (the plane of a box), hull frame = world frame."""
    V = _Section(np.array([0, 4], np.int64), np.array([[x0, z0], [x1, z0], [x1, z1], [x0, z1]], float))
    return K._section_clear(T, V, 0, 0.0, np.zeros((1, 3)), np.eye(3)[None], 0, margin)


def _height_field():
    from trackdyn import terrain as tt

    x = np.linspace(-3, 3, 25)
    y = np.linspace(-2, 2, 9)
    return tt.HeightField(x, y, 0.2 + 0.05 * np.sin(2.0 * x)[:, None] + 0.0 * y[None, :])


def test_section_clear_against_the_highest_terrain_point():
    """A hull section is skipped only when all of it is above every terrain part (plane, profile, mesh)."""
    from trackdyn import terrain as tt
    from trackdyn.contact.massless.slicing import pack_terrain

    flat = pack_terrain(tt.Flat())[0]
    assert _clear(flat, -1, 1, 0.01, 0.5)
    assert not _clear(flat, -1, 1, -0.01, 0.5)  # a corner in the ground
    incline = pack_terrain(tt.Plane.incline(0.2))[0]  # rises at 0.2 rad along +x: 0.32 m high at x = 1.6
    assert _clear(incline, -1, 1, 0.3, 0.5)
    assert not _clear(incline, -1, 1.6, 0.3, 0.5)  # the front-bottom corner under it
    bump = pack_terrain(tt.Flat() + tt.HalfRound(0.25, x=10.0))[0]
    assert _clear(bump, -1, 1, 0.26, 0.5)  # above the whole profile, wherever it is
    assert not _clear(bump, -1, 1, 0.24, 0.5)  # lower than its top: sliced (conservative)
    mesh = pack_terrain(_height_field())[0]
    assert _clear(mesh, -1, 1, 0.26, 0.5)
    assert not _clear(mesh, -1, 1, 0.2, 0.5)
    assert _clear(mesh, 4, 5, 0.01, 0.5) == _clear(flat, 4, 5, 0.01, 0.5)
