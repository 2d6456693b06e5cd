"""An ANCF cable's pads against a profile terrain (CableContact(profile=...), issue #30): the events'
obstacles for the ``ancf`` fidelity.

- the profile contacts' Jacobians (pad points through the nearest surface, a step's convex edge against
  the pad line) against finite differences: along a velocity, the Newton matrix times it plus ``Kxv`` (the
  normal's turn with the element and the pad offset's, kept on the right-hand side); the velocity
  Jacobian, the matrix's damping and friction entries;
- a flat profile holds a cable as the flat ground does (the same rest height, the same load);
- a bar pinned at one end and lying across an edge (a ridge's peak) at a fraction ξ of its length carries
  its weight W on the pin and the edge as statics says: the edge takes ``W / (2 ξ)``.
"""

import numpy as np
import pytest

import trackdyn as td
from trackdyn.contact.cable import CableContact
from trackdyn.formulations.absolute import AbsoluteSystem
from trackdyn.formulations.ancf import STEEL, CableForces, CableMesh

LAW = (2e6, 5e3, 0.3, 0.01)
EDGE = (4e6, 1e4, 0.3, 0.01)


def _system(mesh, profile, gravity=(0, 0, -9.81), bottom=0.01, pins=(), ground=None):
    """A cable with the profile contact. The pads sit ``bottom`` off the pin line."""
    m = td.Model(gravity=gravity)
    cf = CableForces(mesh, "c").add_to(m)
    for k in pins:
        m.add_joint(td.Spherical(m.ground, m.body(cf.node_names[k]), point=mesh.q0[k, :3], name=f"pin{k}"))
    cc = CableContact(cf, (), ground=ground, top=0.01, bottom=bottom, profile=profile, xi=(0.0, 0.25, 0.5, 0.75))
    return m, cf, cc, AbsoluteSystem(m, providers=[cf, cc])


# a 0.2 m step at x = 0: flat at z = 0 before it, its top at 0.2 m after
STEP = (np.array([-5.0, 0.0, 0.0, 5.0]), np.array([0.0, 0.0, 0.2, 0.2]), LAW, EDGE)
# a ridge whose peak at (0, 0.2) turns the profile by 22.6 degrees: an edge with nothing else near it
RIDGE = (np.array([-1.0, 0.0, 1.0]), np.array([0.0, 0.2, 0.0]), LAW, EDGE)


@pytest.mark.parametrize("seed", range(3))
def test_profile_contact_matrix_is_its_jacobian(seed, newton_block):
    rng = np.random.default_rng(seed)
    # a cable running +x (an open cable's inner face is t x a: up, so its pads are down) rising over the step's
    # edge, its pads 4 mm into the top at its right end and 19 mm below the edge at x = 0
    base = CableMesh.straight([-0.3, 0, 0.2 + 0.01 - 0.004 - 0.03], [0.3, 0, 0.2 + 0.01 - 0.004], 3, area=1e-3,
                              inertia=1e-8)
    nodes = base.q0.copy()
    nodes[:, 2] += rng.normal(scale=1e-3, size=len(nodes))
    nodes[:, 3:] += rng.normal(scale=0.02, size=(len(nodes), 3))
    mesh = CableMesh(nodes, base.conn, 1e-3, 1e-8, length=base.length)
    m, cf, cc, s = _system(mesh, STEP)
    st = s.initial_state()
    v = st.v.copy()
    v[:, :3] = rng.normal(scale=0.05, size=(v.shape[0], 3))
    v[:, 3:] = 0.0

    def forces(q, vv, cK=0.0, cD=0.0, data=None):
        s.update_kinematics(q, vv)
        d = np.zeros(s.pattern.nnz) if data is None else data
        return s.eval_forces(0.0, vv, cK, cD, d, st).copy()

    forces(st.q, v)
    assert cc.n_profile >= 2  # points on the top and the edge under the pad
    edge_hits = [q for q in range(cc.n_profile) if not np.any(np.isclose(cc.c_w[q], cc.pt_s).all(axis=1))]
    assert edge_hits, "the step's edge is under a pad"
    bodies = sorted({b for row in cf.elem_body for b in row})
    dof = np.array([6 * b + c for b in bodies for c in range(3)])
    # positions: the derivative along v = the matrix times v plus Kxv (the terms kept out of the matrix)
    data = np.zeros(s.pattern.nnz)
    forces(st.q, v, cK=1.0, data=data)
    Kxv = s.Kxv.copy().ravel()[dof]
    eps = 1e-7
    qp, qm = st.q.copy(), st.q.copy()
    qp[:, :3] += eps * v[:, :3]
    qm[:, :3] -= eps * v[:, :3]
    fd = (forces(qp, v) - forces(qm, v)).ravel()[dof] / (2 * eps)
    Kq = newton_block(s, data, dof)
    got = Kq @ v.ravel()[dof] + Kxv
    assert np.allclose(got, fd, rtol=1e-5, atol=1e-6 * np.abs(fd).max())
    # velocities: the damping and friction matrix holds the symmetric part of ∂F/∂v (as for the wheels)
    data = np.zeros(s.pattern.nnz)
    forces(st.q, v, cD=1.0, data=data)
    J = np.zeros((len(dof), len(dof)))
    for i, gi in enumerate(dof):
        vp, vm = v.copy(), v.copy()
        vp.ravel()[gi] += 1e-6  # small: the tanh friction's knee (v_s = 0.01 m/s) curves the forces
        vm.ravel()[gi] -= 1e-6
        J[:, i] = (forces(st.q, vp) - forces(st.q, vm)).ravel()[dof] / 2e-6
    Jsym = 0.5 * (J + J.T)
    for i, gi in enumerate(dof):
        for j, gj in enumerate(dof):
            try:
                got = -data[s.pattern.slots(min(gi, gj), max(gi, gj))]
            except KeyError:
                continue
            assert got == pytest.approx(Jsym[i, j], rel=1e-4, abs=1e-6 * np.abs(Jsym).max()), (gi, gj)


def _rest(mesh, profile=None, ground=None, t=1.5, pins=()):
    m, cf, cc, s = _system(mesh, profile, ground=ground, pins=pins)
    sim = td.Simulation(m, integrator="euler-implicit-linearized", step=1e-3, output_step=0.05, system=s)
    res = sim.run(t)
    return res, cc


def test_a_flat_profile_holds_a_cable_as_flat_ground_does():
    mesh = CableMesh.straight([-0.6, 0, 0.0105], [0.6, 0, 0.0105], 6, area=1e-3, inertia=1e-8)
    weight = STEEL.rho * 1e-3 * 1.2 * 9.81
    flat, c1 = _rest(mesh, ground=(0.0, LAW))
    prof, c2 = _rest(mesh, profile=(np.array([-5.0, 5.0]), np.array([0.0, 0.0]), LAW, EDGE))
    z1, z2 = flat["c.node[3].pos.z"][-1], prof["c.node[3].pos.z"][-1]
    assert z2 == pytest.approx(z1, abs=1e-7)
    assert -c2.ground_force[2] == pytest.approx(weight, rel=1e-3)
    assert -c1.ground_force[2] == pytest.approx(weight, rel=1e-3)


@pytest.mark.parametrize("xi", [0.6, 0.8])
def test_a_bar_pinned_at_one_end_rests_on_an_edge_as_statics_says(xi):
    L, bottom = 0.5, 0.01
    # a stiff bar (one element) from its pin at x = -xi L to the right, the ridge's peak under it at x = 0
    x0 = -xi * L
    z = 0.2 + bottom
    mesh = CableMesh.straight([x0, 0, z], [x0 + L, 0, z], 1, area=1e-3, inertia=1e-6)  # running +x: pads down
    weight = STEEL.rho * 1e-3 * L * 9.81
    res, cc = _rest(mesh, profile=RIDGE, pins=(0,), t=1.0)
    # moments about the pin: W L / 2 = N xi L
    assert -cc.ground_force[2] == pytest.approx(weight / (2 * xi), rel=5e-3)
    assert cc.n_profile == 1  # the edge alone: the ridge's flanks fall away under the bar
