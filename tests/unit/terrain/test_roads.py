"""The named road profiles (terrain/roads.py, han-sander-mao Table 2 as read in docs/terrain.md): each
profile's heights and lengths against the documented numbers, on rigid and on Winkler ground, and the
ride event's roads being the same profiles."""

import inspect
import math

import numpy as np
import pytest

from trackdyn import terrain as tt
from trackdyn.experiments import events
from trackdyn.terrain.profile import ISO8608_GD

X0 = 3.0


def _ground(name, ground="rigid", **params):
    return tt.with_ground(tt.Flat() + tt.road(name, x=X0, **params), ground)


@pytest.mark.parametrize("ground", ["rigid", "winkler"])
def test_bump_and_trough(ground):
    """Cosine bump 0.10 m high and trough 0.10 m deep, each 1.0 m long: zero at both ends, the extreme
    at mid-length, flat ground outside."""
    for name, sign in (("bump", 1.0), ("trough", -1.0)):
        g = _ground(name, ground)
        assert g.pieces[0].extent == 1.0
        s = np.array([X0 - 1.0, X0, X0 + 0.25, X0 + 0.5, X0 + 0.75, X0 + 1.0, X0 + 2.0])
        np.testing.assert_allclose(g.height(s), sign * np.array([0, 0, 0.05, 0.10, 0.05, 0, 0]), atol=1e-12)
        fine = g.height(np.linspace(X0 - 0.5, X0 + 1.5, 4001))
        assert np.max(sign * fine) == pytest.approx(0.10, abs=1e-12)
        assert (np.abs(fine) > 1e-12).sum() * 0.5e-3 == pytest.approx(1.0, abs=2e-3)  # nonzero over 1.0 m
        assert g.material.kind == ("winkler" if ground == "winkler" else "smc")


@pytest.mark.parametrize("ground", ["rigid", "winkler"])
def test_sinusoid(ground):
    """Amplitude 0.10 m, wavelength 2.0 m, over 40 m: crests at λ/4 + kλ, zeros every λ/2."""
    g = _ground("sinusoid", ground)
    assert g.pieces[0].extent == 40.0
    k = np.arange(20)
    np.testing.assert_allclose(g.height(X0 + 0.5 + 2.0 * k), 0.10, atol=1e-12)
    np.testing.assert_allclose(g.height(X0 + 1.5 + 2.0 * k), -0.10, atol=1e-12)
    np.testing.assert_allclose(g.height(X0 + 1.0 * np.arange(41)), 0.0, atol=1e-12)
    np.testing.assert_allclose(g.height(np.array([X0 - 1.0, X0 + 41.0])), 0.0, atol=1e-12)


@pytest.mark.parametrize("ground", ["rigid", "winkler"])
def test_iso8608_class_d(ground):
    """Class D over 40 m, seed 0: the harmonics k/L are orthogonal over the length, so without the taper
    the profile's mean square equals the class PSD integrated over its harmonics, Σ G_d(n_k) Δn with
    G_d(n) = 1024e-6 (n/0.1)^-2 m³ (G_d(n0) of class D, ISO 8608 Table 1); with it the ends are level."""
    piece = tt.road("iso8608", taper=0.0)
    assert piece.road_class == "D" and piece.length == 40.0 and ISO8608_GD["D"] == pytest.approx(1024e-6)
    s = np.arange(0.0, 40.0, 0.05)
    z = piece.shape(s)  # (without the taper it does not start level, so it is no ground on its own)
    dn = 1.0 / 40.0
    n = np.arange(math.ceil(0.011 / dn), math.floor(2.83 / dn) + 1) * dn
    assert np.mean(z ** 2) == pytest.approx(np.sum(1024e-6 * (n / 0.1) ** -2 * dn), rel=1e-9)
    g = _ground("iso8608", ground)
    np.testing.assert_allclose(g.height(np.array([X0, X0 + 40.0])), 0.0, atol=1e-12)
    assert g.pieces[0].extent == 40.0


def test_the_ride_event_runs_the_same_roads():
    """``trackdyn event ride --road NAME``: the same names and the same default sizes."""
    assert set(events.ROADS) == set(tt.ROADS)
    p = inspect.signature(events.ride).parameters
    d = {k: p[k].default for k in ("height", "bump_length", "wavelength", "length", "road_class", "seed")}
    R = tt.roads.ROAD_PARAMETERS
    assert R["bump"][1] == {"height": d["height"], "length": d["bump_length"]}
    assert R["trough"][1] == {"depth": d["height"], "length": d["bump_length"]}
    assert R["sinusoid"][1] == {"amplitude": d["height"], "wavelength": d["wavelength"], "length": d["length"]}
    assert R["iso8608"][1] == {"road_class": d["road_class"], "length": d["length"], "seed": d["seed"]}


def test_road_errors_name_the_road_and_parameter():
    with pytest.raises(ValueError, match=r"terrain.road 'bump': unknown parameter\(s\) \['depth'\]"):
        tt.road("bump", depth=0.1)
    with pytest.raises(ValueError, match=r"terrain.road 'sinusoid': Sinusoid: wavelength: must be positive"):
        tt.road("sinusoid", wavelength=0.0)
