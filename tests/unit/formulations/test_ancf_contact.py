"""Contact of an ANCF cable's points with wheels and flat ground (CableContact, issue #30).

- the cable side's Newton-matrix entries are minus the contact forces' Jacobians by finite differences
  (positions: normal stiffness with the circle's geometric term; velocities: damping and tanh friction);
- a cable laid on flat ground comes to rest with the ground carrying its weight;
- a taut weightless cable pushed up by a fixed wheel between its pinned ends: the wheel carries
  2 T sin α (T the strands' recorded tension, α their angle from the line of the ends), the force balance
  of the wrapped part.
"""

import math

import numpy as np
import pytest

import trackdyn as td
from trackdyn.contact.cable import CableContact, CableSprocket, CableWheel
from trackdyn.formulations.absolute import AbsoluteSystem
from trackdyn.formulations.ancf import STEEL, CableForces, CableMesh

LAW = (2e6, 5e3, 0.3, 0.01)  # wallin-shabana-2013 Table 2: k, c, μ (ground), and a slip speed


def _system(mesh, wheel_at=None, radius=0.2, ground=None, law=LAW, gravity=(0, 0, -9.81), top=0.01, bottom=0.01,
            pins=()):
    m = td.Model(gravity=gravity)
    cf = CableForces(mesh, "c").add_to(m)
    wheels = []
    if wheel_at is not None:
        w = m.add_body("wheel", mass=50.0, inertia=[1.0, 2.0, 1.0], pos=wheel_at)
        m.add_joint(td.Fixed(m.ground, w, point=wheel_at, name="axle"))
        wheels.append(CableWheel("wheel", radius, law, half_width=0.2))
    for k in pins:
        m.add_joint(td.Spherical(m.ground, m.body(cf.node_names[k]), point=mesh.q0[k, :3], name=f"pin{k}"))
    cc = CableContact(cf, wheels, ground=None if ground is None else (ground, law), top=top, bottom=bottom)
    return m, cf, cc, AbsoluteSystem(m, providers=[cf, cc])


@pytest.mark.parametrize("seed", range(3))
def test_cable_side_matrix_is_the_contact_jacobian(seed):
    rng = np.random.default_rng(seed)
    # a cable from +x to -x (inner face down) across the top of a wheel and, further on, on the ground
    base = CableMesh.straight([0.6, 0, 0.005], [-0.6, 0, 0.005], 4, area=1e-3, inertia=1e-9)
    nodes = base.q0.copy()
    nodes[:, 2] += rng.normal(scale=2e-3, size=len(nodes))
    nodes[:, 3:] += rng.normal(scale=0.05, size=(len(nodes), 3))
    mesh = CableMesh(nodes, base.conn, 1e-3, 1e-9, length=base.length)
    # the wheel's top (offset by the face) reaches z = 0.015 under the middle: its points press on it
    m, cf, cc, s = _system(mesh, wheel_at=[0.05, 0, 0.015 - 1.01], radius=1.0, ground=None,
                           law=(2e6, 0.0, 0.0, 0.01))
    st = s.initial_state()
    v = st.v.copy()

    def forces(q, vv, cK=0.0, cD=0.0, data=None):
        s.update_kinematics(q, vv)
        d = np.zeros(s.pattern.nnz) if data is None else data
        return s.eval_forces(0.0, vv, cK, cD, d, st).copy()

    forces(st.q, v)
    assert cc.n_active.sum() >= 2  # the test touches the wheel
    nodes_b = [s.body_names.index(n) for n in cf.node_names]
    grads_b = [s.body_names.index(n) for n in cf.grad_names]
    dof = [6 * (nodes_b if c < 3 else grads_b)[n] + c % 3 for n in range(mesh.n_node) for c in range(6)]
    # positions: subtract the cable's own elastic Jacobian (tested elsewhere) by differencing with the contact off
    data = np.zeros(s.pattern.nnz)
    forces(st.q, v, cK=1.0, data=data)
    law0 = cc.wheel_par.copy()
    cc.wheel_par[:, 0] = 0.0
    data_el = np.zeros(s.pattern.nnz)
    forces(st.q, v, cK=1.0, data=data_el)
    cc.wheel_par[:] = law0
    eps = 1e-8
    worst = 0.0
    for gi in dof:
        qp, qm = st.q.copy(), st.q.copy()
        qp[gi // 6, gi % 6] += eps
        qm[gi // 6, gi % 6] -= eps
        fp, fm = forces(qp, v), forces(qm, v)
        cc.wheel_par[:, 0] = 0.0
        fp -= forces(qp, v)
        fm -= forces(qm, v)
        cc.wheel_par[:] = law0
        col = (fp - fm).ravel() / (2 * eps)
        for gj in dof:
            try:
                sl = s.pattern.slots(gi, gj)
            except KeyError:
                continue
            got = -(data[sl] - data_el[sl])
            worst = max(worst, abs(got - col[gj]))
            assert got == pytest.approx(col[gj], rel=1e-4, abs=1e-3 * LAW[0] * 1e-3)
    assert worst > 0 or cc.n_active.sum() == 0


def test_cable_side_velocity_matrix_is_the_damping_and_friction_jacobian():
    # from -x to +x: the pads look down onto the ground, 0.5 mm into it
    mesh = CableMesh.straight([-0.5, 0, 0.0095], [0.5, 0, 0.0095], 2, area=1e-3, inertia=1e-9)
    m, cf, cc, s = _system(mesh, ground=0.0, law=(2e6, 5e3, 0.3, 0.05))
    st = s.initial_state()
    rng = np.random.default_rng(3)
    nodes_b = [s.body_names.index(n) for n in cf.node_names]
    v = st.v.copy()
    v[nodes_b, :3] = rng.normal(scale=0.03, size=(len(nodes_b), 3))
    v[nodes_b, 2] = -0.01  # approaching: the damping adds to the force

    def forces(vv, cD=0.0, data=None):
        s.update_kinematics(st.q, vv)
        d = np.zeros(s.pattern.nnz) if data is None else data
        return s.eval_forces(0.0, vv, 0.0, cD, d, st).copy()

    forces(v)
    assert cc.n_active.sum() >= 2
    data = np.zeros(s.pattern.nnz)
    forces(v, cD=1.0, data=data)
    eps = 1e-7
    dof = [6 * b + c for b in nodes_b for c in range(3)]
    jac = {}
    for gi in dof:
        vp, vm = v.copy(), v.copy()
        vp[gi // 6, gi % 6] += eps
        vm[gi // 6, gi % 6] -= eps
        jac[gi] = (forces(vp) - forces(vm)).ravel() / (2 * eps)  # ∂f/∂v_i
    for gi in dof:
        for gj in dof:
            try:
                sl = s.pattern.slots(gi, gj)
            except KeyError:
                continue
            # the matrix holds the symmetric part (every element scatter does): the friction's pull through
            # the normal force (μ φ v_t c nᵀ) is not symmetric
            sym = 0.5 * (jac[gi][gj] + jac[gj][gi])
            assert -data[sl] == pytest.approx(sym, rel=1e-4, abs=1e-6 * 5e3)


def test_a_cable_laid_on_the_ground_rests_on_its_weight():
    mesh = CableMesh.straight([0, 0, 0.0105], [1.5, 0, 0.0105], 6, area=2e-4, inertia=1e-9)
    m, cf, cc, s = _system(mesh, ground=0.0, bottom=0.01)
    sim = td.Simulation(m, integrator="euler-implicit-linearized", step=1e-3, output_step=0.05, system=s)
    res = sim.run(1.0)
    weight = STEEL.rho * 2e-4 * 1.5 * 9.81
    fz = res["cable-contact.ground.force.z"]
    assert fz[-1] == pytest.approx(-weight, rel=5e-3)  # the cable's load on the ground: its weight, downwards
    assert abs(res["cable-contact.ground.force.x"][-1]) < 1e-3 * weight


def _over_circle(half_span, centre_z, rho, n):
    """n + 1 points equally spaced along the path from (+half_span, 0) tangent to the circle of radius rho at
    (0, centre_z), over its top, to (-half_span, 0); and the angle α of the straight parts from the line of
    the ends."""
    D = math.hypot(half_span, centre_z)
    gamma = math.atan2(-centre_z, half_span)  # the end -> centre direction, below the horizontal
    alpha = math.asin(rho / D) - gamma  # strand angle above the horizontal
    # tangent point on the right: the radius is normal to the strand
    tp = np.array([rho * math.sin(alpha), centre_z + rho * math.cos(alpha)])
    straight = math.hypot(half_span - tp[0], tp[1])
    arc = 2 * alpha * rho
    total = 2 * straight + arc
    pts, tan = [], []
    for s_ in np.linspace(0.0, total, n + 1):
        if s_ <= straight:
            u = s_ / straight
            pts.append([half_span + u * (tp[0] - half_span), 0.0, u * tp[1]])
            tan.append([-math.cos(alpha), 0.0, math.sin(alpha)])
        elif s_ <= straight + arc:
            th = alpha - (s_ - straight) / rho  # from +alpha to -alpha, measured from the top
            pts.append([rho * math.sin(th), 0.0, centre_z + rho * math.cos(th)])
            tan.append([-math.cos(th), 0.0, math.sin(th)])
        else:
            u = (s_ - straight - arc) / straight
            pts.append([-tp[0] - u * (half_span - tp[0]), 0.0, tp[1] * (1 - u)])
            tan.append([-math.cos(alpha), 0.0, -math.sin(alpha)])
    return np.hstack([pts, tan]), total, alpha


def test_a_taut_cable_over_a_wheel_loads_it_with_twice_the_tension_times_sine():
    span, n_el, T0, area = 2.0, 40, 5e3, 2e-4
    R, top, lift = 0.2, 0.01, 0.3
    rho = R + top
    centre_z = lift - rho  # the face's circle rises `lift` above the line of the ends
    nodes, total, alpha = _over_circle(span / 2, centre_z, rho, n_el)
    eps0 = T0 / (STEEL.E * area)
    nodes[:, 3:] *= 1 + eps0  # the gradient of a cable stretched by eps0: r_x = (1 + eps0) t
    conn = np.c_[np.arange(n_el), np.arange(1, n_el + 1)]
    # a rope: EI = 0.2 N m² bends it round the wheel with moments of EI / ρ ~ 1 N m against T ρ ~ 1 kN m
    mesh = CableMesh(nodes, conn, area, 1e-12, length=np.full(n_el, total / n_el / (1 + eps0)))
    m, cf, cc, s = _system(mesh, wheel_at=[0.0, 0.0, centre_z], radius=R, top=top, gravity=(0, 0, 0),
                           pins=(0, n_el), law=(2e7, 2e3, 0.0, 0.01))
    sim = td.Simulation(m, integrator="euler-implicit-linearized", step=1e-3, output_step=0.05, system=s)
    res = sim.run(0.5)
    load = res["cable-contact.wheel.force.z"][-1]  # the cable's load on the wheel: downwards
    T = res["c.element[0].tension"][-1]
    assert T == pytest.approx(T0, rel=0.05)  # the strands carry about the pre-tension (the points sink F/k)
    assert load == pytest.approx(-2 * T * math.sin(alpha), rel=0.02)
    assert abs(res["cable-contact.wheel.force.x"][-1]) < 0.01 * abs(load)  # symmetric


def _pin_in_gap(law=(2e7, 2e3, 0.0, 0.01), gravity=(0.0, 0.0, 9.81), area=2e-4, along=(0.0, 0.0, 1.0), tip=0.0,
                at=None):
    """A one-element cable (0.3 m, 2 cm² of steel) whose node 0 is a pin in gap 0 of a fixed APC sprocket
    profile (10 teeth, gap arcs of 0.089 m centred 0.3 m out at -z, pin radius 0.015 m at 0.245 m), lying
    ``along`` from it, free otherwise, under ``gravity`` (+z: the cable hangs from its pin towards the
    sprocket's axis, pulling the pin into the gap's root)."""
    p0 = np.array([0.0, 0.0, -0.245]) if at is None else np.asarray(at, float)
    t = np.asarray(along, float)
    p1 = p0 + 0.3 * t
    mesh = CableMesh(np.array([np.r_[p0, t], np.r_[p1, t]]), [[0, 1]], area, 1e-12)
    m = td.Model(gravity=gravity)
    cf = CableForces(mesh, "c").add_to(m)
    sp = m.add_body("sprocket", mass=400.0, inertia=[12.0, 14.0, 12.0], pos=[0, 0, 0])
    m.add_joint(td.Fixed(m.ground, sp, point=[0, 0, 0], name="axle"))
    teeth = CableSprocket("sprocket", 10, 0.3, 0.089, 0.015, law, half_width=0.2, tip_radius=tip)
    cc = CableContact(cf, [], sprockets=[teeth], xi=(0.0,))
    return m, cf, cc, AbsoluteSystem(m, providers=[cf, cc])


def test_a_pulled_pin_rests_in_its_tooth_gap_root():
    m, cf, cc, s = _pin_in_gap()
    sim = td.Simulation(m, integrator="euler-implicit-linearized", step=1e-4, output_step=0.01, system=s)
    res = sim.run(0.3)
    F = np.array([res[f"cable-contact.sprocket.force.{a}"][-1] for a in "xyz"])
    x, z = res["c.node[0].pos.x"][-1], res["c.node[0].pos.z"][-1]
    # the pin went into the gap's root, 0.089 - 0.015 above the arc's centre (0, -0.3), sunk by F/k ≈ 6 µm
    assert x == pytest.approx(0.0, abs=1e-6) and z == pytest.approx(-0.3 + 0.074, abs=2e-5)
    # the sprocket carries the whole cable's weight (pulling along +z)
    W = STEEL.rho * 2e-4 * 0.3 * 9.81
    assert F[2] == pytest.approx(W, rel=0.005) and abs(F[0]) < 1e-6 * W


def _sprocket_matrix_is_its_jacobian(s, cf, cc, q0):
    """The sprocket contact's entries of the Newton matrix (the system's with the contact's stiffness less the
    system's without it) against central differences of the pin's force, at the pin position ``q0``."""
    st = s.initial_state()
    node = s.body_names.index(cf.node_names[0])
    v = st.v.copy()

    def forces(q, cK=0.0, data=None):
        s.update_kinematics(q, v)
        d = np.zeros(s.pattern.nnz) if data is None else data
        return s.eval_forces(0.0, v, cK, 0.0, d, st).copy()

    forces(q0)
    assert cc.n_active.sum() == 1 and np.linalg.norm(cc.sp_force) > 0
    cc_k = cc.sp_law.copy()
    data, data0 = np.zeros(s.pattern.nnz), np.zeros(s.pattern.nnz)
    forces(q0, 1.0, data)
    cc.sp_law[:, 0] = 0.0
    forces(q0, 1.0, data0)
    cc.sp_law[:] = cc_k
    eps = 1e-8
    for c in range(3):
        qp, qm = q0.copy(), q0.copy()
        qp[node, c] += eps
        qm[node, c] -= eps
        col = (forces(qp) - forces(qm))[node, :3] / (2 * eps)
        cc.sp_law[:, 0] = 0.0
        col -= (forces(qp) - forces(qm))[node, :3] / (2 * eps)
        cc.sp_law[:] = cc_k
        for r in range(3):
            sl = s.pattern.slots(6 * node + c, 6 * node + r)
            assert -(data[sl] - data0[sl]) == pytest.approx(col[r], rel=1e-4, abs=1.0)


def test_the_tooth_gap_matrix_is_its_jacobian():
    m, cf, cc, s = _pin_in_gap(law=(2e7, 0.0, 0.0, 0.01), along=(1.0, 0.0, 0.0))
    q0 = s.initial_state().q.copy()
    # 0.0762 from the arc's centre: 2.2 mm into the flank
    q0[s.body_names.index(cf.node_names[0]), :3] = [0.06, 0.0, -0.3 + 0.046]
    _sprocket_matrix_is_its_jacobian(s, cf, cc, q0)

# the APC's addendum circle (0.2605 m); between gaps 0 and 1 (18 degrees from -z towards +x) a pin rests on it
TIP = 0.2605
BETWEEN = np.array([np.sin(np.radians(18.0)), 0.0, -np.cos(np.radians(18.0))])


def test_a_pin_pushed_onto_a_tooth_tip_rests_on_the_addendum_circle():
    # the cable hangs from its pin towards the axis (gravity +z), the pin over the tooth between two gaps
    m, cf, cc, s = _pin_in_gap(tip=TIP, at=(TIP + 0.015 + 0.002) * BETWEEN)
    # a pin free to slide along the tip would roll off into a gap: hold it on the radial line
    node = m.body(cf.node_names[0])
    m.add_joint(td.Prismatic(m.ground, node, point=(TIP + 0.017) * BETWEEN, axis=BETWEEN, name="radial"))
    s = AbsoluteSystem(m, providers=[cf, cc])
    sim = td.Simulation(m, integrator="euler-implicit-linearized", step=1e-4, output_step=0.01, system=s)
    res = sim.run(0.3)
    P = np.array([res[f"c.node[0].pos.{a}"][-1] for a in "xyz"])
    F = np.array([res[f"cable-contact.sprocket.force.{a}"][-1] for a in "xyz"])
    W = STEEL.rho * 2e-4 * 0.3 * 9.81
    # on the tip circle, sunk by its share of the weight over k (the radial line carries the rest)
    assert np.linalg.norm(P) == pytest.approx(TIP + 0.015, abs=1e-5)
    assert F @ BETWEEN == pytest.approx(W * BETWEEN[2], rel=0.01)  # the pin presses inwards: -W cos 18°


def test_the_tooth_tip_matrix_is_its_jacobian():
    m, cf, cc, s = _pin_in_gap(law=(2e7, 0.0, 0.0, 0.01), along=(1.0, 0.0, 0.0), tip=TIP,
                               at=(TIP + 0.015 - 0.002) * BETWEEN)  # 2 mm onto the tooth's tip
    _sprocket_matrix_is_its_jacobian(s, cf, cc, s.initial_state().q.copy())


def test_a_pin_leaving_its_gap_outwards_is_free():
    # the gap is the arc's part inside the sprocket: a pin beyond the tips on the gap's line, 2 mm into the arc
    # circle's outer half (0.376 m from the axis, the circle reaching 0.389 m), meets nothing; in the root it
    # is held (0.228 m, 2 mm into the arc)
    for r, held in ((0.3 + 0.089 - 0.015 + 0.002, False), (0.3 - 0.089 + 0.015 - 0.002, True)):
        m, cf, cc, s = _pin_in_gap(tip=TIP, at=(0.0, 0.0, -r), gravity=(0.0, 0.0, 0.0))
        st = s.initial_state()
        s.update_kinematics(st.q, st.v)
        s.eval_forces(0.0, st.v, 0.0, 0.0, np.zeros(s.pattern.nnz), st)
        assert (np.linalg.norm(cc.sp_force) > 0) == held, r


def test_a_cable_moving_with_the_wheels_rim_feels_no_slip_friction():
    # a short element lying on top of a wheel spinning at ω about +y (rim speed ω R along +x at the top): the
    # cable carried at ω R slips only by the rim's turn between its points (0.04 % of the friction here), a
    # cable at rest slips at ω R; friction linear in the slip (v_s ≫ ω R). A wrong sign in the wheel's rim
    # velocity makes the carried cable's friction twice the resting one's
    R, top, w = 0.2, 0.01, 1.0
    z = R + top - 5e-4
    mesh = CableMesh.straight([0.01, 0, z], [-0.01, 0, z], 1, area=1e-3, inertia=1e-9)
    m, cf, cc, s = _system(mesh, wheel_at=[0.0, 0.0, 0.0], radius=R, top=top, gravity=(0, 0, 0),
                           law=(2e6, 0.0, 0.3, 10.0))
    st = s.initial_state()
    nodes_b = [s.body_names.index(n) for n in cf.node_names]
    wheel = s.body_names.index("wheel")

    def fx(spin, cable_speed):
        v = st.v.copy()
        v[wheel, 3:] = [0.0, spin, 0.0]
        v[nodes_b, 0] = cable_speed
        s.update_kinematics(st.q, v)
        s.eval_forces(0.0, v, 0.0, 0.0, np.zeros(s.pattern.nnz), st)
        assert cc.n_active.sum() >= 2
        return cc.point_force[..., 0].sum()  # the contact's own force on the cable, along x

    # without damping, the motion changes only the friction: the normal forces' own x part (the points off the
    # top) is the force with nothing moving
    still = fx(0.0, 0.0)
    carried, resting = abs(fx(w, w * R) - still), abs(fx(w, 0.0) - still)
    assert resting > 1.0  # about μ f_n tanh(ω R / v_s): 9 N
    assert carried < 0.01 * resting, (carried, resting)
