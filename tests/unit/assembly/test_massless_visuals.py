"""The massless vehicle carries the visual shapes of its bodies (the animation and viewer draw it, not dots)."""

import warnings

import numpy as np

import trackdyn as td
from trackdyn.mbs import visuals as V
from trackdyn.sim.run import prepare


def _hull_world(fidelity):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prep = prepare(td.Scenario(vehicle="m113", fidelity=fidelity, t_end=0.1))
    m = prep.vehicle.model
    names = m.body_names
    hull = [s for b, s in m.visuals if isinstance(s, V.Mesh) and names[b] == "chassis"]
    pts = np.vstack([np.asarray(s.vertices) for s in hull]) + m._initial_pos("chassis")  # the chassis starts level
    bodies = {names[b] for b, _ in m.visuals}
    return pts, bodies


def test_the_massless_m113_draws_its_hull_where_the_links_m113_does_and_its_wheels():
    pts_m, bodies_m = _hull_world("massless")
    pts_l, _ = _hull_world("links")
    # the massless chassis's centre of mass includes the tracks' lumped mass: the hull is shifted to match,
    # so both fidelities draw the same hull at the same place (the same placement on the ground)
    assert pts_m.shape == pts_l.shape
    assert np.allclose(np.sort(pts_m, axis=0), np.sort(pts_l, axis=0), atol=1e-9)
    for name in ("left.sprocket", "right.idler", "left.roadwheel[0]", "right.roadwheel[4]"):
        assert name in bodies_m
