"""Exact Jacobians of the massless track forces against central finite differences (absolute coordinates).

Each case puts a vehicle on a terrain that exercises one part of the model —
wheels on slice segments and their friction, factitious irregularities
between wheels, triangle meshes through the hierarchy, inclined planes, hull
corners and ground corners in the hull — perturbs the pose a little
(Hypothesis seeds) and compares ``∂Q/∂q`` and ``∂Q/∂v`` of the provider with
finite differences over every body's six coordinates.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trackdyn.spec as S
from trackdyn import terrain as tt
from trackdyn.formulations.absolute import AbsoluteSystem
from trackdyn.contact.massless import _kernels as K
from trackdyn.assembly.massless import build_massless
from trackdyn.contact.massless.track import MasslessTrack
from trackdyn.mbs import _kernels as MK
from trackdyn.testing.fd import perturb


def _height_field():
    x = np.linspace(-6, 3, 40)
    y = np.linspace(-3, 3, 13)
    z = 0.05 * np.sin(1.7 * x)[:, None] + 0.03 * np.cos(1.3 * y)[None, :]
    return tt.HeightField(x, y, z)


CASES = {
    # name: (vehicle, terrain, origin, what must be active)
    "flat": ("m113", lambda: tt.Flat(), (0.0, 0.0, 0.56), "wheels"),
    "half-round": ("m113", lambda: tt.Flat() + tt.HalfRound(0.12, x=-1.83), (0.0, 0.0, 0.56), "irregularities"),
    "step": ("m113", lambda: tt.Flat() + tt.Step(0.3, x=-1.2), (0.0, 0.0, 0.56), "irregularities"),
    "mesh": ("m113", _height_field, (0.0, 0.0, 0.57), "irregularities"),
    "incline": ("m113", lambda: tt.Plane.incline(0.1, heading=0.4), (0.0, 0.0, 0.38), "wheels"),
    "stairs-hull": ("robot", lambda: tt.Flat() + tt.Stairs(x=0.52, n=3), (0.0, 0.0, 0.107), "hull"),
}


def _setup(name):
    veh, terrain, origin, _ = CASES[name]
    vm = build_massless(S.get(veh), origin=origin)
    tr = MasslessTrack(vm, terrain())
    system = AbsoluteSystem(vm.model, providers=[tr])
    return vm, tr, system


_SETUPS = {}


def _cached(name):
    if name not in _SETUPS:
        _SETUPS[name] = _setup(name)
    return _SETUPS[name]


def _forces(tr, system, q, v, jac=K.FULL):
    nb = system.nb
    system.update_kinematics(q, v)
    tr.evaluate(system.kin, jac=jac)
    f = np.zeros((nb, 6))
    K.scatter_absolute(tr.roles, tr.blk, tr.Q, tr.Kx, tr.Kv, tr.on, tr.slot, 0.0, 0.0, v, f, np.zeros(1),
                       np.zeros((nb, 6)), np.zeros((nb, 6)), False)
    counts = (tr.wout[:, 2].copy(), tr.sout[:, 6:8].copy(), float(tr.hout[4]))
    return f.ravel(), counts


def _dense(tr, nb):
    Kd = np.zeros((6 * nb, 6 * nb))
    Vd = np.zeros((6 * nb, 6 * nb))
    for e in range(len(tr.roles)):
        if not tr.on[e]:
            continue
        for a in range(24):
            ba = tr.roles[e, a // 6]
            if ba < 0 or tr.blk[e, a // 6] != a // 6:
                continue
            for c in range(24):
                bc = tr.roles[e, c // 6]
                if bc < 0 or tr.blk[e, c // 6] != c // 6:
                    continue
                Kd[6 * ba + a % 6, 6 * bc + c % 6] += tr.Kx[e, a, c]
                Vd[6 * ba + a % 6, 6 * bc + c % 6] += tr.Kv[e, a, c]
    return Kd, Vd


def _same(c1, c2):
    return np.array_equal(c1[0], c2[0]) and np.array_equal(c1[1], c2[1]) and c1[2] == c2[2]


@pytest.mark.parametrize("name", list(CASES))
@given(seed=st.integers(0, 2 ** 31 - 1))
@settings(max_examples=3)
def test_exact_jacobians_match_finite_differences(name, seed):
    vm, tr, system = _cached(name)
    nb = system.nb
    rng = np.random.default_rng(seed)
    dx = rng.normal(scale=1e-3, size=(nb, 6))
    q = np.empty_like(system.q0)
    MK.advance_positions_dq(system.q0, dx, q)
    v = rng.normal(scale=0.3, size=(nb, 6))
    f0, c0 = _forces(tr, system, q, v)
    what = CASES[name][3]
    if what == "irregularities":
        assert c0[1][:, 1].sum() > 0, "the case should form factitious irregularities"
    elif what == "hull":
        assert c0[2] > 0, "the case should touch the hull"
    assert c0[0].sum() > 0
    Kd, Vd = _dense(tr, nb)
    eps = 1e-7
    Kfd = np.zeros_like(Kd)
    Vfd = np.zeros_like(Vd)
    for b in range(nb):
        for k in range(6):
            fp, cp = _forces(tr, system, perturb(q, b, k, eps), v)
            fm, cm = _forces(tr, system, perturb(q, b, k, -eps), v)
            if not (_same(cp, c0) and _same(cm, c0)):
                pytest.skip("a contact switched within the difference step")  # pragma: no cover - rare
            Kfd[:, 6 * b + k] = (fp - fm) / (2 * eps)
            vp, vm_ = v.copy(), v.copy()
            vp[b, k] += eps
            vm_[b, k] -= eps
            Vfd[:, 6 * b + k] = (_forces(tr, system, q, vp)[0] - _forces(tr, system, q, vm_)[0]) / (2 * eps)
    # central differences of forces up to ~1e6 N: truncation ~1e-8 relative, round-off ~1e-16/1e-7
    assert np.max(np.abs(Kd - Kfd)) <= 1e-6 * np.max(np.abs(Kfd))
    assert np.max(np.abs(Vd - Vfd)) <= 1e-6 * np.max(np.abs(Vfd))


@pytest.mark.parametrize("name", list(CASES))
def test_stiff_mode_gives_the_same_forces(name):
    """The real-time stepper's cheap Jacobian mode computes the very same forces."""
    vm, tr, system = _cached(name)
    rng = np.random.default_rng(7)
    v = rng.normal(scale=0.3, size=(system.nb, 6))
    f_full, _ = _forces(tr, system, system.q0, v, K.FULL)
    f_stiff, _ = _forces(tr, system, system.q0, v, K.STIFF)
    assert np.max(np.abs(f_full - f_stiff)) <= 1e-9 * np.max(np.abs(f_full))


def test_stiff_jacobian_holds_the_contact_stiffness():
    """STIFF keeps the dominant (normal stiffness) block of each loaded wheel exactly."""
    vm, tr, system = _cached("flat")
    nb = system.nb
    v = np.zeros((nb, 6))
    _forces(tr, system, system.q0, v, K.FULL)
    Kf, _ = _dense(tr, nb)
    _forces(tr, system, system.q0, v, K.STIFF)
    Ks, _ = _dense(tr, nb)
    names = system.body_names
    for k in range(5):
        b = names.index(f"left.roadwheel[{k}]")
        i = 6 * b + 2  # vertical force on the wheel per vertical displacement of the wheel
        assert Ks[i, i] < 0
        assert Ks[i, i] == pytest.approx(Kf[i, i], rel=1e-6)
