"""Factitious irregularities (agapov-kovalev-pogorelov §3.4, Figs. 8-9) against their closed forms.

The M113 (one track plane per side) hangs 1 cm above flat ground at its
design pose, so no wheel touches the ground; trapezoidal barriers between
road wheels 2 and 1 pierce the straight track line between them. The model:
the depth ``D`` of the irregularity is the depth-weighted mean of the depths
``d_i`` of the slice vertices above the line (``Σ d_i² / Σ d_i``: the mean
depth when the line is pierced at several points), its position ``ξ̄`` the
depth-weighted mean of their positions along the line (0 at wheel A, 1 at
wheel B), and each wheel gets the normal force of a wheel pressed ``D`` into
the terrain (eq. 1-3) times a stiffness that falls with the distance from it:
``N_A = κ (1 - ξ̄)^p S(D)``, ``N_B = κ ξ̄^p S(D)`` (``p = 2``), the maximum
``κ`` (the wheel's own contact stiffness) right under the wheel.
"""

import functools

import numpy as np
import pytest

import trackdyn.spec as S
from trackdyn import terrain as tt
from trackdyn.assembly.builder import vehicle_geometry
from trackdyn.formulations.absolute import AbsoluteSystem
from trackdyn.contact.massless._area import EXACT, depth_area
from trackdyn.assembly.massless import build_massless
from trackdyn.contact.massless.track import MasslessOptions, MasslessTrack

LIFT = 0.01  # track line above the ground, m
A_NAME, B_NAME = "left.roadwheel[2]", "left.roadwheel[1]"


@functools.lru_cache(maxsize=None)
def _m113():
    spec = S.get("m113")
    return spec, vehicle_geometry(spec)  # the closed track's geometry: the slow part of a build


def _evaluate(pieces, p=2.0):
    spec, geo = _m113()
    vm = build_massless(spec, planes=1, geometry=geo)
    names = vm.model.body_names
    q0 = vm.model._q0
    a, b = names.index(A_NAME), names.index(B_NAME)
    lay = vm.layout
    R = lay.wheel_radius[lay.wheel_body.index(A_NAME)]
    line_z = q0[a][2] - R  # vehicle frame
    origin = (0.0, 0.0, LIFT - line_z)
    vm = build_massless(spec, origin=origin, planes=1, geometry=geo)
    terrain = tt.Flat()
    for pc in pieces:
        terrain = terrain + pc
    tr = MasslessTrack(vm, terrain, MasslessOptions(planes=1, irregularity_exponent=p))
    system = AbsoluteSystem(vm.model, providers=[tr])
    system.update_kinematics(system.q0, np.zeros((system.nb, 6)))
    tr.evaluate(system.kin)
    xa, xb = system.q0[a][0], system.q0[b][0]
    normal = {w: tr.wout[k, 0] for k, w in enumerate(lay.wheel_body)}
    tr.right_x = (system.q0[names.index(A_NAME.replace("left", "right"))][0],
                  system.q0[names.index(B_NAME.replace("left", "right"))][0])
    return tr, normal, xa, xb, R


def _vertices(pieces):
    """(x, depth above the track line) of the barrier tops."""
    out = []
    for pc in pieces:
        for seg in pc.curve(0.0):
            for x, z in (seg[1][:2], seg[1][2:]):
                if z - LIFT > 0 and (x, z - LIFT) not in out:
                    out.append((x, z - LIFT))
    return out


def _expected(pieces, xa, xb, R, kappa, p=2.0):
    v = _vertices(pieces)
    # every top corner is the shared end of two slice segments: it counts twice (same weights)
    d = np.array([dv for _, dv in v])
    xi = np.array([(x - xa) / (xb - xa) for x, _ in v])
    D = float((d * d).sum() / d.sum())
    xib = float((d * xi).sum() / d.sum())
    SD = depth_area(EXACT, R, D)[0]
    return D, xib, kappa * (1 - xib) ** p * SD, kappa * xib ** p * SD


def test_a_single_barrier_loads_the_two_wheels_by_their_distance():
    pieces = [tt.TrapezoidBarrier(height=LIFT + 0.02, top_length=0.06, slope=np.pi / 3, x=-1.80)]
    tr, normal, xa, xb, R = _evaluate(pieces)
    D, xib, NA, NB = _expected(pieces, xa, xb, R, tr.kappa)
    assert tr.sout[0, 4] == pytest.approx(D, rel=1e-9)  # left.track.irregularity: its depth
    assert normal[A_NAME] == pytest.approx(NA, rel=1e-9)
    assert normal[B_NAME] == pytest.approx(NB, rel=1e-9)
    # no other wheel of the left track is loaded: the irregularity is its only contact
    assert sum(v for w, v in normal.items() if w.startswith("left.")) == pytest.approx(NA + NB, rel=1e-12)
    # the right track crosses the same (profile) barrier; its road wheels sit 0.1 m further back (staggered
    # torsion bars of the M113), so its share differs
    _, _, NA_r, NB_r = _expected(pieces, *tr.right_x, R, tr.kappa)
    assert normal[A_NAME.replace("left", "right")] == pytest.approx(NA_r, rel=1e-9)
    assert normal[B_NAME.replace("left", "right")] == pytest.approx(NB_r, rel=1e-9)
    assert NA > 0 and NB > 0


def test_mean_depth_when_the_line_is_pierced_at_several_points():
    # both barriers clear of the wheel circles (no direct wheel contact)
    pieces = [tt.TrapezoidBarrier(height=LIFT + 0.02, top_length=0.05, slope=np.pi / 3, x=-1.85),
              tt.TrapezoidBarrier(height=LIFT + 0.04, top_length=0.05, slope=np.pi / 3, x=-1.62)]
    tr, normal, xa, xb, R = _evaluate(pieces)
    D, xib, NA, NB = _expected(pieces, xa, xb, R, tr.kappa)
    assert 0.02 < D < 0.04  # between the two depths, nearer the deeper one
    assert D == pytest.approx((2 * 0.02 ** 2 + 2 * 0.04 ** 2) / (2 * 0.02 + 2 * 0.04), rel=1e-9)
    assert tr.sout[0, 4] == pytest.approx(D, rel=1e-9)
    assert normal[A_NAME] == pytest.approx(NA, rel=1e-9)
    assert normal[B_NAME] == pytest.approx(NB, rel=1e-9)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_stiffness_falls_with_the_distance_from_the_wheel(p):
    """Sliding one barrier from wheel A to wheel B: N_A falls and N_B rises as (1-ξ)^p, ξ^p (Figs. 8-9)."""
    ratios = []
    last = None
    for x in np.linspace(-1.90, -1.49, 6):  # the barrier's top stays > 0.1 m from both wheel centres
        pieces = [tt.TrapezoidBarrier(height=LIFT + 0.015, top_length=0.02, slope=np.pi / 2.5, x=float(x))]
        tr, normal, xa, xb, R = _evaluate(pieces, p=p)
        D, xib, NA, NB = _expected(pieces, xa, xb, R, tr.kappa, p=p)
        assert normal[A_NAME] == pytest.approx(NA, rel=1e-9)
        assert normal[B_NAME] == pytest.approx(NB, rel=1e-9)
        if last is not None:
            assert normal[A_NAME] < last[0] and normal[B_NAME] > last[1]
        last = (normal[A_NAME], normal[B_NAME])
        # N_A + N_B against the stiffness at the wheel (κ S(D), ξ = 0)
        ratios.append((normal[A_NAME] + normal[B_NAME]) / (tr.kappa * depth_area(EXACT, R, D)[0]))
    assert max(ratios) <= 1.0 + 1e-12
    if p > 1:
        assert min(ratios) < 0.75  # softest mid-way between the wheels


def test_irregularities_can_be_switched_off():
    pieces = [tt.TrapezoidBarrier(height=LIFT + 0.02, top_length=0.06, slope=np.pi / 3, x=-1.80)]
    spec, geo = _m113()
    tr, normal, *_ = _evaluate(pieces)
    assert sum(normal.values()) > 0
    vm = build_massless(spec, origin=tr.vehicle.origin, planes=1, geometry=geo)
    tr2 = MasslessTrack(vm, tt.Flat() + pieces[0], MasslessOptions(planes=1, irregularities=False))
    system = AbsoluteSystem(vm.model, providers=[tr2])
    system.update_kinematics(system.q0, np.zeros((system.nb, 6)))
    tr2.evaluate(system.kin)
    assert tr2.wout[:, 0].sum() == 0.0
