"""The ANCF cable in the absolute-coordinate system (CableForces): its nodes as point bodies of a Model,
stepped by the generic integrators.

- the forces it adds are the mesh's elastic forces plus eq. 20's gravity, and its Newton-matrix entries are
  minus their position Jacobian (finite differences through the system's own force evaluation);
- the lumped masses carry the cable's mass;
- a pre-tensioned cable between two fixed points, stepped by ``euler-implicit-linearized`` to rest, sags at
  mid-span by the hand calculation w L² / (8 T) (the taut string's parabola; T from the pre-strain) to 1 %
  and stands where the mesh's own Newton statics puts it.
"""

import numpy as np
import pytest

import trackdyn as td
from trackdyn.formulations.absolute import AbsoluteSystem
from trackdyn.formulations.ancf import STEEL, CableForces, CableMesh, lumped_masses


def _cable_model(mesh, name="c"):
    m = td.Model()
    cf = CableForces(mesh, name).add_to(m)
    return m, cf


def _deformed(seed, n_el=3):
    rng = np.random.default_rng(seed)
    base = CableMesh.straight([0, 0, 0], [1.2, 0.1, -0.2], n_el, area=1e-3, inertia=2e-7)
    nodes = base.q0 + rng.normal(scale=0.05, size=base.q0.shape)
    return CableMesh(nodes, base.conn, 1e-3, 2e-7, length=base.length)


@pytest.mark.parametrize("seed", range(3))
def test_forces_are_the_mesh_forces_and_the_matrix_their_jacobian(seed):
    mesh = _deformed(seed)
    m, cf = _cable_model(mesh)
    s = AbsoluteSystem(m, providers=[cf])
    st = s.initial_state()

    def forces(q, cK=0.0, data=None):
        s.update_kinematics(q, st.v)
        d = np.zeros(s.pattern.nnz) if data is None else data
        return s.eval_forces(0.0, st.v, cK, 0.0, d, st).copy()

    f = forces(st.q)
    Q, K = mesh.elastic(mesh.q0)
    Qg = mesh.gravity_force(s.gravity)
    nodes = [s.body_names.index(n) for n in cf.node_names]
    grads = [s.body_names.index(n) for n in cf.grad_names]
    want = (Q + Qg).reshape(-1, 6)
    assert np.allclose(f[nodes, :3], want[:, :3], rtol=0, atol=1e-9 * np.abs(Q).max())
    assert np.allclose(f[grads, :3], want[:, 3:], rtol=0, atol=1e-9 * np.abs(Q).max())
    assert np.abs(f[:, 3:]).max() == 0.0  # the idle rotations feel nothing
    data = np.zeros(s.pattern.nnz)
    forces(st.q, cK=1.0, data=data)
    dof = np.array([6 * (nodes if c < 3 else grads)[n] + c % 3 for n in range(mesh.n_node) for c in range(6)])
    eps = 1e-7
    for i, gi in enumerate(dof):
        qp, qm = st.q.copy(), st.q.copy()
        qp[gi // 6, gi % 6] += eps
        qm[gi // 6, gi % 6] -= eps
        col = (forces(qp) - forces(qm)).ravel() / (2 * eps)  # ∂f/∂q_i over every body dof
        for j, gj in enumerate(dof):
            try:
                got = -data[s.pattern.slots(gi, gj)]
            except KeyError:  # nodes of no common element: no entry, and nothing to hold
                assert K[j, i] == 0.0 and abs(col[gj]) < 1e-6 * np.abs(K).max()
                continue
            assert got == pytest.approx(col[gj], rel=1e-5, abs=1e-6 * np.abs(K).max())
            assert got == pytest.approx(K[j, i], rel=1e-9, abs=1e-9 * np.abs(K).max())


def test_lumped_masses_carry_the_cable_mass():
    mesh = CableMesh.straight([0, 0, 0], [3.0, 0, 0], 6, area=1e-3, inertia=2e-7)
    m_r, m_rx = lumped_masses(mesh)
    assert m_r.sum() == pytest.approx(mesh.rho_a * 3.0, rel=1e-12)
    assert m_r[0] == pytest.approx(0.5 * m_r[1]) and m_rx[1] == pytest.approx(2 * mesh.rho_a * 0.5**3 / 78)


def test_a_taut_cable_stepped_to_rest_sags_as_the_hand_calculation():
    span, n_el = 3.0, 12
    area, inertia = 2e-4, 1e-10  # a 2 cm² steel rope, bending negligible (EI / (T L²) ~ 1e-6)
    T0 = 20e3  # N: pre-strain T0 / EA of the stress-free length
    eps0 = T0 / (STEEL.E * area)
    straight = CableMesh.straight([0, 0, 1.0], [span, 0, 1.0], n_el, area, inertia)
    mesh = CableMesh(straight.q0, straight.conn, area, inertia, length=straight.length / (1 + eps0))
    # the taut string's mid-span sag: w L² / (8 T), w the weight per span length (T barely changes with sag)
    w = STEEL.rho * area * 9.81 * (1 / (1 + eps0))
    sag_hand = w * span**2 / (8 * T0)
    m, cf = _cable_model(mesh, "rope")
    for k in (0, n_el):
        m.add_joint(td.Spherical(m.ground, m.body(cf.node_names[k]), point=mesh.q0[k, :3], name=f"end{k}"))
    s = AbsoluteSystem(m, providers=[cf])
    sim = td.Simulation(m, integrator="euler-implicit-linearized", step=2e-3, output_step=0.1, system=s)
    res = sim.run(3.0)
    mid = n_el // 2
    z = res[f"rope.node[{mid}].pos.z"]
    sag = 1.0 - z[-1]
    assert abs(z[-1] - z[-2]) < 1e-3 * sag  # at rest
    assert sag == pytest.approx(sag_hand, rel=0.01)
    # the mesh's own Newton statics (both ends' positions held) puts the mid node at the same height
    qs = mesh.static(fixed=[0, 1, 2, 6 * n_el, 6 * n_el + 1, 6 * n_el + 2])
    assert z[-1] == pytest.approx(qs[mid, 2], abs=1e-3 * sag)
    # the recorded axial force is the pre-tension (plus the sag's share, (8/3)(sag/L)² of it)
    assert res["rope.element[0].tension"][-1] == pytest.approx(T0, rel=0.01)
