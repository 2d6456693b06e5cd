"""Pinned ANCF chains (CableMesh.pinned_loop and pinned meshes; the pin springs of CableForces; issue #30).

The paper's ANCF track pin (wallin-shabana-2013 §8) shares the position of neighbouring elements,
``r^i = r^j``, as linear connectivity applied once; a cable element has no transverse gradient, so the pin
leaves the elements free to turn about it, as a link's pin does. The tests:

- a two-link chain hung between two supports (a V) stands where statics puts two pinned rods: the links'
  axial force at their middle is ``W / (2 sin α)`` (W one link's weight, α its angle below the horizontal),
  by the mesh's own Newton statics (the reduction q = T q_red) and by the multibody system stepped to rest;
  with a pin spring k about the lateral axis (free straight), the spring's moment ``M = k · 2α`` unloads it
  to ``W / (2 sin α) - M cos α / (L sin α)``;
- the pin springs' and the elements' axial dashpots' forces and Newton-matrix entries are the
  finite-difference Jacobians (positions: the matrix times v plus ``Kxv``, velocities: the damping matrix);
- ``pinned_loop`` builds the closed chain through given pins with straight, uniformly strained elements, so a
  chain wrapped on a sprocket-like circle carries no spurious axial force (a C1 cable through the same pins
  does: docs/joints/ancf.md).
"""

import math

import numpy as np
import pytest

import trackdyn as td
from trackdyn.formulations.absolute import AbsoluteSystem
from trackdyn.formulations.ancf import STEEL, CableForces, CableMesh

L, D = 1.0, 1.6                      # link length, supports' distance: cos α = 0.8
ALPHA = math.acos(D / (2 * L))
AREA, INERTIA = 1e-3, 1e-7           # 7.8 kg/m steel; EI = 2e4 N m² (own-weight deflection ~5e-5 m)
W = STEEL.rho * AREA * L * 9.81      # one link's weight


def _v_mesh():
    """Two links from (0, 0, 0) down to the middle pin and up to (D, 0, 0), each along its chord."""
    P = np.array([[0.0, 0.0, 0.0], [D / 2, 0.0, -L * math.sin(ALPHA)], [D, 0.0, 0.0]])
    t = [(P[1] - P[0]) / L, (P[2] - P[1]) / L]
    nodes = np.array([np.r_[P[0], t[0]], np.r_[P[1], t[0]], np.r_[P[1], t[1]], np.r_[P[2], t[1]]])
    return CableMesh(nodes, [[0, 1], [2, 3]], AREA, INERTIA, position=[0, 1, 1, 2], joints=[[1, 2]])


def _mid_axial(mesh, q):
    """EA ε at each element's middle (the recorded tension's definition)."""
    out = []
    for a, b in mesh.conn:
        rx = 1.5 * (q[b, :3] - q[a, :3]) / mesh.length[0] - 0.25 * (q[a, 3:] + q[b, 3:])
        out.append(mesh.EA * 0.5 * (rx @ rx - 1.0))
    return np.array(out)


def test_pinned_mesh_statics_hangs_as_two_pinned_rods():
    mesh = _v_mesh()
    assert mesh.n_red == 3 * 3 + 4 * 3  # three positions, four gradients
    q = mesh.static(fixed=[0, 1, 2, 18, 19, 20])  # the supports' positions (nodes 0 and 3)
    assert np.allclose(q[1, :3], q[2, :3], atol=0)  # the pin's two nodes stay one point
    N = _mid_axial(mesh, q)
    want = W / (2 * math.sin(ALPHA))
    assert N == pytest.approx([want, want], rel=2e-3)  # 63.8 N; the links' bending under their weight is ~1e-4
    # a pin turns freely: the two elements' gradients at the pin differ by the V's angle 2α
    t1, t2 = q[1, 3:] / np.linalg.norm(q[1, 3:]), q[2, 3:] / np.linalg.norm(q[2, 3:])
    assert math.acos(t1 @ t2) == pytest.approx(2 * ALPHA, rel=1e-3)


@pytest.mark.parametrize("k", [0.0, 10.0])
def test_pinned_chain_stepped_to_rest_carries_the_statics_axial_force(k):
    mesh = _v_mesh()
    m = td.Model()
    cf = CableForces(mesh, "v", pin_stiffness=k, pin_damping=2.0, pin_free_angle=0.0).add_to(m)
    for a, node in ((0, 0), (2, 3)):  # the supports: positions 0 and 2 (mesh nodes 0 and 3)
        m.add_joint(td.Spherical(m.ground, m.body(cf.node_names[a]), point=mesh.q0[node, :3], name=f"support{a}"))
    s = AbsoluteSystem(m, providers=[cf])
    sim = td.Simulation(m, integrator="euler-implicit-linearized", step=1e-3, output_step=0.05, system=s)
    res = sim.run(2.0)
    M = k * 2 * ALPHA  # the spring's moment on each link (free straight, bent by 2α)
    want = W / (2 * math.sin(ALPHA)) - M * math.cos(ALPHA) / (L * math.sin(ALPHA))
    for e in (0, 1):
        got = res[f"v.element[{e}].tension"][-1]
        assert got == pytest.approx(want, rel=3e-3), (k, e, got, want)
    assert abs(cf.pin_angle[0]) == pytest.approx(2 * ALPHA, rel=1e-3)


def _ring(n=8, radius=0.25, seed=0):
    rng = np.random.default_rng(seed)
    th = 2 * np.pi * np.arange(n) / n
    P = np.c_[radius * np.cos(th), np.zeros(n), radius * np.sin(th)]
    mesh = CableMesh.pinned_loop(P, AREA, INERTIA)
    q = mesh.q0.copy()
    q[:, 3:] += rng.normal(scale=0.05, size=(mesh.n_node, 3))  # kinked gradients: the springs load
    return CableMesh(q, mesh.conn, AREA, INERTIA, length=mesh.length, position=mesh.position, joints=mesh.joints)


@pytest.mark.parametrize("seed", range(2))
def test_pin_springs_and_axial_dashpots_jacobians_are_finite_differences(seed, newton_block):
    mesh = _ring(seed=seed)
    m = td.Model(gravity=(0, 0, 0))
    cf = CableForces(mesh, "r", pin_stiffness=800.0, pin_damping=30.0, pin_free_angle=0.1,
                     axial_damping=5e4).add_to(m)
    s = AbsoluteSystem(m, providers=[cf])
    st = s.initial_state()
    rng = np.random.default_rng(10 + seed)
    v = rng.normal(size=st.v.shape)
    v[:, 3:] = 0.0

    def forces(q, vv, cK=0.0, cD=0.0, data=None):
        s.update_kinematics(q, vv)
        d = np.zeros(s.pattern.nnz) if data is None else data
        return s.eval_forces(0.0, vv, cK, cD, d, st).copy()

    grads = np.array([s.body_names.index(nm) for nm in cf.grad_names + cf.node_names])
    dof = (6 * grads[:, None] + np.arange(3)).ravel()
    # positions: the directional derivative along v = (matrix) v + Kxv on the nodes' and gradients' rows
    data = np.zeros(s.pattern.nnz)
    forces(st.q, v, cK=1.0, data=data)
    Kxv = s.Kxv.copy().ravel()
    eps = 1e-7
    qp, qm = st.q.copy(), st.q.copy()
    qp[grads, :3] += eps * v[grads, :3]
    qm[grads, :3] -= eps * v[grads, :3]
    fd = ((forces(qp, v) - forces(qm, v)).ravel() / (2 * eps))[dof]
    Kq = newton_block(s, data, dof)
    got = Kq @ v.ravel()[dof] + Kxv[dof]
    assert np.allclose(got, fd, rtol=1e-5, atol=1e-6 * np.abs(fd).max())
    # velocities: the damping matrix
    data = np.zeros(s.pattern.nnz)
    forces(st.q, v, cD=1.0, data=data)
    for i in (0, 4, 11):
        gi = dof[i]
        vp, vm = v.copy(), v.copy()
        vp.ravel()[gi] += 0.5  # the forces are linear in v: a large step keeps the round-off of the elastic
        vm.ravel()[gi] -= 0.5  # forces (MN, from the kinked gradients) out of the difference
        col = ((forces(st.q, vp) - forces(st.q, vm)).ravel() / 1.0)[dof]
        for j, gj in enumerate(dof):
            try:
                dd = -data[s.pattern.slots(min(gi, gj), max(gi, gj))]
            except KeyError:
                dd = 0.0
            assert dd == pytest.approx(col[j], rel=1e-5, abs=1e-6 * np.abs(col).max() + 1e-9)


def test_pinned_loop_on_a_circle_is_straight_links_at_uniform_strain():
    n, radius, T = 10, 0.249, 10e3
    th = 2 * np.pi * np.arange(n) / n
    P = np.c_[radius * np.cos(th), np.zeros(n), radius * np.sin(th)]
    mesh = CableMesh.pinned_loop(P, 0.015, 2e-6, strain=T / (STEEL.E * 0.015))
    assert mesh.closed and mesh.n_pos == n and mesh.n_node == 2 * n
    Q, _ = mesh.elastic(mesh.q0)
    # every element straight at the strain of T: the elastic forces are the end loads ±T along the chord
    chord = 2 * radius * math.sin(math.pi / n)
    assert mesh.length == pytest.approx(np.full(n, chord / (1 + T / (STEEL.E * 0.015))), rel=1e-12)
    f_end = Q.reshape(-1, 6)[1, :3]  # element 0's end node (position dofs)
    assert np.linalg.norm(f_end) == pytest.approx(T, rel=1e-5)  # EA ε (1 + ε0), ε0 = 3.3e-6
    assert np.abs(Q.reshape(-1, 6)[:, 3:]).max() < 1e-6 * T  # no moment: no curvature anywhere


# -- the linearised step about a predicted end (CableForces(predictor=True), ForceContext.linearized_step)
SPIN_L, SPIN_N, SPIN_W = 1.0, 16, 20.0   # bar length (m), elements, spin (rad/s)


def _spinning_bar(predictor, h, t_end=0.1, theta=1.0):
    """A free straight bar of SPIN_N elements of the pins' steel spinning in its plane about its middle at
    SPIN_W, no gravity, stepped by the linearised Euler step at ``h``; returns (tension at the middle
    element's middle, its distance from the bar's middle, ω at the end)."""
    mesh = CableMesh.straight((-0.5 * SPIN_L, 0, 0), (0.5 * SPIN_L, 0, 0), SPIN_N, AREA, INERTIA)
    m = td.Model(gravity=(0.0, 0.0, 0.0))
    x = mesh.q0[:, 0]
    cf = CableForces(mesh, "bar", predictor=predictor).add_to(
        m, node_velocity=np.c_[0 * x, SPIN_W * x, 0 * x], grad_velocity=np.tile([0.0, SPIN_W, 0.0], (len(x), 1)))
    integ, opts = ("euler-implicit-linearized", {}) if theta == 1.0 else ("theta-linearized", {"theta": theta})
    sim = td.Simulation(m, integrator=integ, step=h, output_step=0.05, system=AbsoluteSystem(m, providers=[cf]),
                        **opts)
    e = SPIN_N // 2
    res = sim.run(t_end)
    s = sim.state
    ia, ib = (sim.system.body_names.index(cf.node_names[k]) for k in (0, SPIN_N))
    chord = s.q[ib, :3] - s.q[ia, :3]
    w = np.cross(chord, s.v[ib, :3] - s.v[ia, :3])[2] / (chord @ chord)
    return res[f"bar.element[{e}].tension"][-1], 0.5 * SPIN_L / SPIN_N, w


@pytest.mark.parametrize("theta", [1.0, 0.6])
@pytest.mark.parametrize("h", [2.5e-4, 5e-4])
def test_a_spinning_bar_carries_its_centrifugal_tension_under_the_predicted_linearisation(h, theta):
    """A rod spinning about its middle carries ρAω²(L²/4 - x²)/2 (EA u'' = -ρAω² x). Linearised about the
    step's start, a turning element's positions and gradients move along their tangents and stretch by
    (ωh)²/2 a step: EA(ωh)²/2 = 2.5 and 10 kN of spurious tension at ωh = 0.005 and 0.01, 6 and 25 times
    the physical 390 N (measured against the formula: 0.1 % and 0.03 %). About the predicted end the stretch
    is seen in the step that makes it, the linearisation's error falls to O(EA (ωh)⁴) (0.1 N here; it is
    12 % at ωh = 0.02 and 180 % at 0.04), and the tension is the physical one (measured 0.7 % and 1.4 %
    above it, the lumped masses' error at 16 elements and the spin's decay included). The linearised
    θ-method at θ = 0.6 gets the same (0.7 %, 0.8 %; without the prediction 3.9 and 15 times the physical
    tension); at θ = 0.5 the axial vibration that the start excites is not damped and rides on it."""
    rho_a = STEEL.rho * AREA
    N, x, w = _spinning_bar(True, h, theta=theta)
    assert N == pytest.approx(rho_a * w * w * (SPIN_L ** 2 / 4 - x * x) / 2.0, rel=0.02)
    if theta != 1.0:
        return
    N0, x, w0 = _spinning_bar(False, h)
    spurious = STEEL.E * AREA * (w0 * h) ** 2 / 2.0
    assert N0 - rho_a * w0 * w0 * (SPIN_L ** 2 / 4 - x * x) / 2.0 == pytest.approx(spurious, rel=0.02)
