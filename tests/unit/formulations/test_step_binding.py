"""AbsoluteSystem's kernels bound to the step buffers (load_step / bind_step) against the general path."""

import numpy as np
import pytest

import trackdyn as td
from trackdyn.formulations import AbsoluteSystem
from trackdyn.testing import problems as P


def _model():
    """A chain with every element block: TSDA (one with a user law), RSDA, bushing, point loads (one timed)."""
    m = P.chain(n_links=6)
    b = [m.body(f"link[{k}]") for k in range(6)]
    m.add_force(td.TSDA(b[0], b[2], point_a=[0, 0, 0], point_b=[0, 0, 0], stiffness=300.0, damping=4.0,
                        free_length=0.2, name="spring"))
    m.add_force(td.TSDA(b[1], b[4], point_a=[0, 0, 0], point_b=[0, 0, 0], force=lambda l, ld, t: 50 * l + 2 * ld,
                        name="law"))
    m.add_force(td.RSDA(b[2], b[3], axis=[0, 1, 0], stiffness=20.0, damping=0.5, name="twist"))
    m.add_force(td.Bushing(b[3], b[5], point=[0.3, 0, 0], stiffness=[1e3, 2e3, 3e3], damping=[1, 2, 3],
                           rot_stiffness=[10, 20, 30], rot_damping=[0.1, 0.2, 0.3], name="bush"))
    m.add_force(td.PointForce(b[5], force=[1.0, 2.0, 3.0], point=[0.1, 0, 0], name="push"))
    m.add_force(td.PointForce(b[4], force=lambda t: [0.0, 0.0, 5.0 * t], name="timed"))
    return m


def _stages(s, t, q, v, lam, cK, cD, data):
    """The step's stages in the Euler step's order; returns copies of what they wrote."""
    s.update_kinematics(q, v)
    data[:] = s.base_data
    s.eval_forces(t, v, cK, cD, data)
    s.add_constraint_stiffness(lam, cK, data, v)
    s.eval_constraints()
    s.fill_jacobian(data)
    return [a.copy() for a in (data, s.f, s.Dv, s.Kxv, s.phi, s.J, s.kin.pos, s.kin.R, s.kin.omega_w)]


@pytest.mark.parametrize("cK,cD", [(1e-6, 1e-3), (4e-8, 2e-4)])
def test_bound_stages_equal_the_general_path(cK, cD, recwarn):
    s = AbsoluteSystem(_model())
    rng = np.random.default_rng(3)
    q = s.q0 + np.concatenate([rng.normal(scale=0.01, size=(s.nb, 3)), np.zeros((s.nb, 4))], axis=1)
    q[:, 3:] /= np.linalg.norm(q[:, 3:], axis=1, keepdims=True)
    state = td.State(0.3, q, rng.normal(size=(s.nb, 6)), rng.normal(size=s.nc) * 50, np.zeros((s.nb, 6)), {})
    want = _stages(s, state.t, state.q.copy(), state.v.copy(), state.lam.copy(), cK, cD, s.data)
    s.update_kinematics(s.q0, s.v0)  # another pose in the kinematics: the bound path must compute its own
    s.bind_step(1e-6, 1e-3, s.data)
    qb, vb, lb = s.load_step(state)
    assert qb is s.q_step and np.shares_memory(qb, s.kin.q_ext) and np.array_equal(vb, state.v)
    got = _stages(s, state.t, qb, vb, lb, cK, cD, s.data)
    for g, w in zip(got, want):
        assert np.array_equal(g, w)  # bit for bit; with the other cK, cD the general path ran
    # other arrays than the buffers take the general path, with their own values
    v2 = state.v * 2.0
    s.update_kinematics(state.q.copy(), v2)
    s.eval_forces(state.t, v2, 1e-6, 1e-3, s.data)
    f_general = s.f.copy()
    s.load_step(td.State(state.t, state.q, v2, state.lam, state.acc, {}))
    s.update_kinematics(s.q_step, s.v_step)
    s.eval_forces(state.t, s.v_step, 1e-6, 1e-3, s.data)
    assert np.array_equal(s.f, f_general) and not np.array_equal(f_general, want[1])


def test_load_step_names_a_wrong_shape(recwarn):
    s = AbsoluteSystem(_model())
    bad = td.State(0.0, s.q0[:-1], s.v0, np.zeros(s.nc), np.zeros_like(s.v0), {})
    with pytest.raises(ValueError, match=r"state.q: expected shape \(6, 7\) for this model, got \(5, 7\)"):
        s.load_step(bad)
