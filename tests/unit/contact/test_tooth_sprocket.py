"""han-sander-mao's seven-parameter sprocket tooth (Fig. 7): geometry against the parameters, the narrow
phase's penetration against an independent distance to the drawn outline, and exact contact Jacobians
through detection (finite differences)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trackdyn.contact import shapes

from test_pairs import penetrations, state, two_bodies

seeds = st.integers(0, 2**31 - 1)
#: the crawler's tooth (spec/library/crawler.toml) and one with a flat bottom
CRAWLER = dict(teeth=11, face_angle=0.4206, r1=0.3077, r2=0.3889, r3=0.02, r4=0.0301, w=0.0)
FLAT = dict(teeth=11, face_angle=0.30, r1=0.30, r2=0.39, r3=0.025, r4=0.028, w=0.02)


@pytest.mark.parametrize("par", [CRAWLER, FLAT], ids=["crawler", "flat"])
def test_tooth_geometry_against_its_parameters(par):
    """Root and tip radii, the tangency of every join, the face angle and the seated pin's radius."""
    sp = shapes.ToothSprocket(**par, separation=0.1)
    P = sp.points
    r1, r2, r3, r4, w, th = (par[k] for k in ("r1", "r2", "r3", "r4", "w", "face_angle"))
    outline = sp.profile(200)
    radii = np.hypot(outline[:, 0], outline[:, 1])
    assert radii.min() >= r1 - 1e-12 and abs(sp.signed_distance(0.0, -r1)) < 1e-12  # the bottom of the tooth
    assert radii.max() == pytest.approx(r2, abs=1e-12)           # the top of the tooth
    assert np.linalg.norm(P["P1"] - P["C4"]) == pytest.approx(r4, abs=1e-12)
    assert np.linalg.norm(P["P2"] - P["C3"]) == pytest.approx(r3, abs=1e-12)
    assert np.linalg.norm(P["C3"]) == pytest.approx(r2 - r3, abs=1e-12)  # the round touches the tip circle
    face = P["P2"] - P["P1"]
    assert math.atan2(face[0], face[1]) == pytest.approx(th, abs=1e-12)  # angle from the valley's centre line
    assert (P["P1"] - P["C4"]) @ face == pytest.approx(0.0, abs=1e-12)   # seating curve tangent to the face
    assert (P["P2"] - P["C3"]) @ face == pytest.approx(0.0, abs=1e-12)   # round tangent to the face
    assert P["P0"][0] == pytest.approx(0.5 * w) and P["P0"][1] == pytest.approx(r1)
    # a pin no larger than the seating curve seats on the bottom: its centre at r1 + its radius
    rp = 0.0295 if r4 > 0.0295 else 0.02
    assert sp.seated_radius(rp) == pytest.approx(r1 + rp, abs=1e-7)  # the outline is drawn: chord error
    if par is CRAWLER:  # seated pins in neighbouring valleys are one track pitch (0.190 m) apart
        assert 2 * sp.seated_radius(rp) * math.sin(math.pi / par["teeth"]) == pytest.approx(0.190, abs=1e-5)


def test_invalid_tooth_names_the_parameter():
    with pytest.raises(ValueError, match="r2"):
        shapes.ToothSprocket(**{**CRAWLER, "r2": 0.30}, separation=0.1)
    with pytest.raises(ValueError, match="no tooth top"):
        shapes.ToothSprocket(**{**CRAWLER, "teeth": 30}, separation=0.1)
    with pytest.raises(ValueError, match="face angle"):
        shapes.ToothSprocket(**{**CRAWLER, "face_angle": 1.7}, separation=0.1)


def _pin_scene(par, c, rp, rng, phase=0.0):
    sp = shapes.ToothSprocket(**par, separation=0.1, phase=phase)
    sc = two_bodies([shapes.Cylinder(rp, 0.3)], [sp], c, [0, 0, 0], rng, tilt=0.0)
    sc.system.q0[:, 3:] = [1, 0, 0, 0]
    return sp, sc


@pytest.mark.parametrize("par", [CRAWLER, FLAT], ids=["crawler", "flat"])
@settings(max_examples=25, deadline=None)
@given(seed=seeds)
def test_penetration_matches_the_outline(par, seed):
    """A pin anywhere near the profile: the deepest record's penetration is the pin radius minus the pin
    centre's distance to the drawn outline (independent of the kernel), to 1e-7 m."""
    rng = np.random.default_rng(seed)
    rp = 0.02  # below both seating curves (the spec refuses a pin larger than its seating curve)
    phase = rng.uniform(-0.3, 0.3)
    sp = shapes.ToothSprocket(**par, separation=0.1, phase=phase)
    # a point within rp of the outline, on its gap side
    outline = sp.profile(60)
    p = outline[rng.integers(len(outline))]
    for _ in range(50):
        c2 = p + rng.normal(scale=0.6 * rp, size=2)
        dist = sp.signed_distance(*c2)
        if 0.3 * rp < dist < 0.95 * rp:
            break
    else:
        pytest.skip("no sample point")
    _, sc = _pin_scene(par, [c2[0], 0.0, c2[1]], rp, rng, phase)
    d, n, pt, k = penetrations(sc)
    assert len(d), f"no contact at distance {dist:.4g} < pin radius {rp}"
    assert d.max() == pytest.approx(rp - dist, abs=1e-7)


@pytest.mark.parametrize("where", ["flat", "seat", "face", "round", "tip"])
@settings(max_examples=3, deadline=None)
@given(seed=seeds)
def test_tooth_pin_jacobians(where, seed):
    """A shoe pin on each piece of the profile: the analytic Jacobians of the detected records against finite
    differences of detection plus forces."""
    rng = np.random.default_rng(seed)
    par = FLAT
    rp = 0.02
    sp = shapes.ToothSprocket(**par, separation=0.1)
    P = sp.points
    if where == "flat":
        uv = np.array([0.3 * 0.5 * par["w"], par["r1"] + rp - 0.002])
    elif where == "seat":
        a = -0.5 * (0.5 * math.pi + par["face_angle"])
        e = np.array([math.cos(a), math.sin(a)])
        uv = P["C4"] + (par["r4"] - rp + 0.002) * e
    elif where == "face":
        uv = 0.5 * (P["P1"] + P["P2"]) - (rp - 0.002) * P["m"]
    elif where == "round":
        e = P["C3"] / np.linalg.norm(P["C3"]) - P["m"]
        e /= np.linalg.norm(e)
        uv = P["C3"] + (par["r3"] + rp - 0.002) * e
    else:
        a = 0.5 * (2 * math.pi / par["teeth"])
        uv = (par["r2"] + rp - 0.002) * np.array([math.sin(a), math.cos(a)])
    c = np.array([uv[0], 0.0, -uv[1]]) + rng.normal(scale=2e-4, size=3)
    sc = two_bodies([shapes.Cylinder(rp, 0.3)], [sp], c, [0, 0, 0], rng, tilt=0.002)
    q, v = state(sc, rng, 0.02)
    sc.check(q, v)
