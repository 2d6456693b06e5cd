"""Profile terrains: exact obstacle geometry, composition, drawing, offset paths, ISO 8608 roads."""

import math

import numpy as np
import pytest
from scipy.signal import welch

from trackdyn import terrain as tt
from trackdyn.contact import Material
from trackdyn.terrain.profile import PRIM_VERTEX


def test_obstacle_heights_exact():
    g = (tt.Flat() + tt.Step(0.3, x=3.0) + tt.HalfRound(0.2, x=5.0) + tt.Gap(0.5, 0.4, x=7.0)
         + tt.TrapezoidBarrier(0.3, 0.5, math.radians(30), x=9.0) + tt.TrapezoidDitch(0.3, 2.0, math.radians(45), x=12.0))
    s = np.array([0.0, 2.999, 3.0, 4.0, 5.2, 5.1, 7.25, 9.26, 9.8, 12.15, 13.0, 20.0])
    run = 0.3 / math.tan(math.radians(30))
    expected = [0.0, 0.0, 0.3, 0.3, 0.5, 0.3 + math.sqrt(0.04 - 0.01), -0.1, 0.3 + 0.26 * math.tan(math.radians(30)),
                0.6 if 9.8 < 9 + run + 0.5 else 0.6 - (9.8 - 9 - run - 0.5) * math.tan(math.radians(30)),
                0.3 - 0.15, 0.0, 0.3]
    np.testing.assert_allclose(g.height(s, 0.0), expected, atol=1e-12)


def test_convex_edges_only():
    """A step has one convex edge (its top), a gap two, a barrier two, a ditch two, a half-round none."""
    for piece, n in [(tt.Step(0.3, x=1.0), 1), (tt.Gap(0.3, 0.2, x=1.0), 2), (tt.HalfRound(0.2, x=1.0), 0),
                     (tt.TrapezoidBarrier(0.2, 0.3, 0.5, x=1.0), 2), (tt.TrapezoidDitch(0.2, 1.0, 0.5, x=1.0), 2),
                     (tt.Step(-0.3, x=1.0), 1)]:
        g = tt.Flat() + piece
        assert np.sum(g.chain.prim_type == PRIM_VERTEX) == n, piece


def test_step_changes_level_and_materials():
    timber = Material("timber", young=1e10)
    g = tt.Flat(material=Material("concrete", young=2e10)) + tt.Step(0.6, x=3.0, material=timber) + tt.HalfRound(
        0.1, x=5.0)
    assert g.height(np.array([5.1]))[0] == pytest.approx(0.6 + math.sqrt(0.01 - 0.0))
    assert [m.name for m in g.materials] == ["concrete", "timber"]
    # the step's face and edge are timber, the half-round (no material) concrete
    face = np.nonzero((g.chain.prim_a[:, 0] == 3.0) & (g.chain.prim_a[:, 2] == 3.0))[0][0]
    assert g.chain.prim_mat[face] == 1


def test_bad_inputs_name_the_field():
    with pytest.raises(ValueError, match="HalfRound: height"):
        tt.HalfRound(-0.1)
    with pytest.raises(ValueError, match="TrapezoidDitch: top_length"):
        tt.TrapezoidDitch(0.5, 0.5, math.radians(30))
    with pytest.raises(ValueError, match="slope"):
        tt.TrapezoidBarrier(0.5, 1.0, 2.0)
    with pytest.raises(ValueError, match="road_class"):
        tt.RandomRoad("Z")
    with pytest.raises(ValueError, match="overlaps"):
        tt.Flat() + tt.HalfRound(0.2, x=1.0) + tt.Step(0.1, x=1.2)
    with pytest.raises(ValueError, match="Plane: normal"):
        tt.Plane(normal=(0, 0, 0))


def test_drawing_profile_keeps_corners():
    g = tt.Flat() + tt.Step(0.3, x=1.0) + tt.Gap(0.4, 0.5, x=2.0)
    x, z = g.profile(0.0, 3.0)
    assert x[0] == 0.0 and x[-1] == 3.0
    assert np.all(np.diff(x) >= 0)
    pts = set(zip(np.round(x, 12), np.round(z, 12)))
    for p in [(1.0, 0.0), (1.0, 0.3), (2.0, 0.3), (2.0, -0.2), (2.4, -0.2), (2.4, 0.3)]:
        assert p in pts


def test_offset_profile_closed_forms():
    r = 0.3
    g = tt.Flat() + tt.HalfRound(0.1, x=1.0) + tt.Step(0.15, x=3.0) + tt.Gap(0.3, 0.3, x=5.0)
    # far from everything: the wheel radius
    assert g.offset_profile(np.array([0.0]), r)[0] == pytest.approx(r, abs=1e-9)
    # on top of the half-round: centre at h + r; on its flank: on the circle of radius a + r
    assert g.offset_profile(np.array([1.1]), r)[0] == pytest.approx(0.4, abs=1e-9)
    assert g.offset_profile(np.array([1.3]), r)[0] == pytest.approx(math.sqrt(0.16 - 0.04), abs=1e-6)
    # touching the step edge
    assert g.offset_profile(np.array([2.9]), r)[0] == pytest.approx(0.15 + math.sqrt(0.09 - 0.01), abs=1e-6)
    # over the middle of the gap: supported by both edges
    assert g.offset_profile(np.array([5.15]), r)[0] == pytest.approx(0.15 + math.sqrt(0.09 - 0.0225), abs=1e-6)


def test_smooth_profiles_follow_their_formula():
    b = tt.Flat() + tt.Bump(0.1, 2.0, x=1.0) + tt.Trough(0.05, 1.0, x=4.0) + tt.Sinusoid(0.02, 0.5, 3.0, x=6.0)
    s = np.linspace(1.0, 3.0, 101)
    np.testing.assert_allclose(b.height(s), 0.05 * (1 - np.cos(np.pi * (s - 1.0))), atol=2e-6)
    s = np.linspace(4.0, 5.0, 51)
    np.testing.assert_allclose(b.height(s), -0.025 * (1 - np.cos(2 * np.pi * (s - 4.0))), atol=2e-6)
    s = np.linspace(6.0, 9.0, 301)
    np.testing.assert_allclose(b.height(s), 0.02 * np.sin(2 * np.pi * (s - 6.0) / 0.5), atol=2e-5)


def test_iso8608_class_psd_and_seed():
    """The displacement PSD at n0 = 0.1 cycle/m matches the class value (within the estimate's scatter)."""
    road = tt.RandomRoad("D", length=2000.0, seed=7, resolution=0.05, taper=1.0)
    s = np.arange(0.0, 2000.0, 0.05)
    z = road.shape(s)
    f, P = welch(z, fs=1 / 0.05, nperseg=8192)
    band = (f > 0.05) & (f < 1.0)
    # Gd(n) (n/n0)^2 should be flat at Gd(n0) = 1024e-6 m³ for class D; one-sided PSD
    ratio = P[band] * (f[band] / 0.1) ** 2 / 1024e-6
    assert abs(np.median(ratio) - 1) < 0.15
    assert np.array_equal(tt.RandomRoad("D", length=50.0, seed=3).shape(s[:100]),
                          tt.RandomRoad("D", length=50.0, seed=3).shape(s[:100]))
    assert not np.allclose(tt.RandomRoad("D", length=50.0, seed=3).shape(s[:100]),
                           tt.RandomRoad("D", length=50.0, seed=4).shape(s[:100]))
    # faded in and out to the ground level
    assert abs(road.shape(np.array([0.0]))[0]) < 1e-12 and abs(road.shape(np.array([2000.0]))[0]) < 1e-12


def test_incline_plane_height_and_heading():
    p = tt.Plane.incline(math.radians(10), z=0.5, heading=math.radians(90))
    assert p.height(0.0, 2.0) == pytest.approx(0.5 + 2.0 * math.tan(math.radians(10)))
    assert p.height(3.0, 0.0) == pytest.approx(0.5)


def test_profile_along_a_heading():
    g = tt.ProfileTerrain([tt.Step(0.2, x=1.0)], heading=math.radians(90), origin=(2.0, 0.0))
    assert g.height(2.0, 0.5) == 0.0
    assert g.height(2.0, 1.5) == pytest.approx(0.2)
    assert g.height(7.0, 1.5) == pytest.approx(0.2)  # extruded sideways


def test_composite_height_is_the_highest_part():
    V = np.array([[0, -1, 0.1], [2, -1, 0.1], [0, 1, 0.1], [2, 1, 0.1]], float)
    F = np.array([[0, 1, 3], [0, 3, 2]])
    c = tt.Flat() + tt.TriangleMesh(V, F)
    assert len(c.parts()) == 2
    np.testing.assert_allclose(c.height(np.array([1.0, 3.0]), np.array([0.0, 0.0])), [0.1, 0.0])
