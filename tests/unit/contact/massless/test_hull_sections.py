"""The massless hull: sections of convex polyhedra in the hull planes (the M113's sloped front plates).

A box spec and the polyhedron of its corners give the same hull forces; the M113's lower front plate
pushed onto a step's edge is pushed back along the plate's normal (30 deg from horizontal, up and back),
and its exact Jacobians match finite differences.
"""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import trackdyn.spec as S
from trackdyn import terrain as tt
from trackdyn.assembly.massless import build_massless
from trackdyn.contact.massless.track import MasslessTrack, hull_section
from trackdyn.formulations.absolute import AbsoluteSystem
from trackdyn.mbs import _kernels as MK
from trackdyn.testing.fd import perturb

sys.path.insert(0, str(Path(__file__).parent))
from test_jacobians import _dense, _forces, _same  # noqa: E402

# the M113 (massless: origin on the ground 0.56 m below the sprocket axis) with a 0.75 m step whose top edge
# (x 0.33) lies 8 mm inside its lower front plate; the track's front (x 0.305) stays clear of the face
STEP = (lambda: tt.Flat() + tt.Step(0.75, x=0.33), (0.0, 0.0, 0.56))


def _setup(spec, terrain, origin):
    vm = build_massless(spec, origin=origin)
    tr = MasslessTrack(vm, terrain)
    return vm, tr, AbsoluteSystem(vm.model, providers=[tr])


def test_section_of_a_polyhedron_is_its_profile():
    """The M113's lower hull cut at any y within its width is its side profile (5 corners, plates at 30 and
    45 deg from vertical)."""
    V = np.asarray(S.get("m113").chassis.hull[0].vertices)
    P = hull_section(V, 0.3)
    prof = V[:5][:, [0, 2]]
    assert len(P) == 5
    assert sorted(map(tuple, np.round(P, 12))) == sorted(map(tuple, np.round(prof, 12)))
    assert hull_section(V, 0.9) is None  # outside its width


def test_box_and_its_corner_polyhedron_give_the_same_hull_forces():
    robot = S.get("robot")
    box = robot.chassis.hull[0]
    c, h = np.asarray(box.center), 0.5 * np.asarray(box.size)
    poly = robot.replace({"chassis.hull": [{"vertices": [(c + h * (sx, sy, sz)).tolist() for sx in (-1, 1)
                                                         for sy in (-1, 1) for sz in (-1, 1)]}]})
    out = []
    for spec in (robot, poly):
        _, tr, system = _setup(spec, tt.Flat() + tt.Stairs(x=0.52, n=3), (0.0, 0.0, 0.107))
        v = np.random.default_rng(3).normal(scale=0.3, size=(system.nb, 6))
        f, counts = _forces(tr, system, system.q0, v)
        out.append((f, counts[2]))
    assert out[0][1] > 0 and out[0][1] == out[1][1]
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=0, atol=1e-9 * np.abs(out[0][0]).max())


def test_lower_front_plate_on_a_step_edge():
    _, tr, system = _setup(S.get("m113"), STEP[0](), STEP[1])
    nb = system.nb
    _, counts = _forces(tr, system, system.q0, np.zeros((nb, 6)))
    assert counts[2] >= 2  # the edge's corner inside the section of both hull planes of the lower hull
    F = tr.hout[:3]
    # the ground pushes the hull back and up along the lower front plate's inward normal (30 deg from
    # horizontal, to the 4-digit vertices of the spec), at the edge (x 0.33, z 0.75), as deep as the edge is
    # behind the plate
    a, b = np.array([0.1614, -0.1108 + 0.56]), np.array([0.464, 0.4134 + 0.56])  # world (x, z) of the plate
    d = (b - a) / np.linalg.norm(b - a)
    inward = np.array([-d[1], d[0]])
    assert math.degrees(math.atan2(inward[1], -inward[0])) == pytest.approx(30.0, abs=0.01)
    np.testing.assert_allclose(F[[0, 2]] / np.linalg.norm(F), inward, atol=1e-9)
    assert abs(F[1]) < 1e-9 * np.linalg.norm(F)
    pts = tr.hout[5:5 + 4 * int(counts[2])].reshape(-1, 4)
    np.testing.assert_allclose(pts[:, [0, 2]], np.tile([0.33, 0.75], (len(pts), 1)), atol=1e-12)
    assert tr.hout[3] == pytest.approx(inward @ (np.array([0.33, 0.75]) - a), abs=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lower_front_plate_jacobians_match_finite_differences(seed):
    _, tr, system = _setup(S.get("m113"), STEP[0](), STEP[1])
    nb = system.nb
    rng = np.random.default_rng(seed)
    q = np.empty_like(system.q0)
    MK.advance_positions_dq(system.q0, rng.normal(scale=1e-3, size=(nb, 6)), q)
    v = rng.normal(scale=0.3, size=(nb, 6))
    _, c0 = _forces(tr, system, q, v)
    assert c0[2] > 0
    Kd, Vd = _dense(tr, nb)
    eps = 1e-7
    Kfd, Vfd = np.zeros_like(Kd), np.zeros_like(Vd)
    for b in range(nb):
        for k in range(6):
            fp, cp = _forces(tr, system, perturb(q, b, k, eps), v)
            fm, cm = _forces(tr, system, perturb(q, b, k, -eps), v)
            assert _same(cp, c0) and _same(cm, c0)
            Kfd[:, 6 * b + k] = (fp - fm) / (2 * eps)
            vp, vm_ = v.copy(), v.copy()
            vp[b, k] += eps
            vm_[b, k] -= eps
            Vfd[:, 6 * b + k] = (_forces(tr, system, q, vp)[0] - _forces(tr, system, q, vm_)[0]) / (2 * eps)
    assert np.max(np.abs(Kd - Kfd)) <= 1e-6 * np.max(np.abs(Kfd))
    assert np.max(np.abs(Vd - Vfd)) <= 1e-6 * np.max(np.abs(Vfd))
