"""Penalty revolute pins (wallin-shabana-2013 §6.2): exact Jacobians against finite differences, the
violation and force signs, and the equivalence with the revolute joint's own constraint equations."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trackdyn as td
from trackdyn.formulations import AbsoluteSystem
from trackdyn.formulations.penalty import PenaltyPin, PenaltyPins
from trackdyn.testing.fd import fd_position_jacobian, fd_velocity_jacobian, random_state

seeds = st.integers(0, 2**31 - 1)


def pin_model(rng, to_ground=False):
    m = td.Model(gravity=(0, 0, 0))
    a = m.ground if to_ground else m.add_body("a", mass=2.0, inertia=[0.3, 0.4, 0.5], pos=rng.normal(size=3))
    b = m.add_body("b", mass=3.0, inertia=[0.5, 0.6, 0.7], pos=rng.normal(size=3) + [1.5, 0, 0])
    pin = PenaltyPin("pin", a, b, tuple(rng.normal(size=3)), tuple(rng.normal(size=3)))
    return m, pin


@given(seed=seeds, to_ground=st.booleans())
@settings(max_examples=40, deadline=None)
def test_penalty_pin_jacobians_match_finite_differences(seed, to_ground):
    """∂Q/∂x and ∂Q/∂v of a pin between two random poses (large violations, so the geometric terms count)."""
    rng = np.random.default_rng(seed)
    m, pin = pin_model(rng, to_ground)
    s = AbsoluteSystem(m)
    prov = PenaltyPins(m, [pin], k=1e4, c=30.0, k_axis=2e3, c_axis=7.0)
    nb = s.nb
    q, v = random_state(rng, nb)
    bodies = prov.body[0]

    def Q(qq, vv):
        s.update_kinematics(qq, vv)
        prov.evaluate(s.kin)
        return prov.Q[0].copy()

    Q(q, v)
    Kx, Kv = prov.Kx[0].copy(), prov.Kv[0].copy()
    fx = fd_position_jacobian(Q, q, v, bodies)
    fv = fd_velocity_jacobian(Q, q, v, bodies)
    scale = max(1.0, np.abs(fx).max(), np.abs(fv).max())
    live = np.concatenate([np.arange(6 * k, 6 * k + 6) for k, b in enumerate(bodies) if b >= 0])
    err_x = np.abs(Kx[np.ix_(live, live)] - fx[np.ix_(live, live)]).max() / scale
    err_v = np.abs(Kv[np.ix_(live, live)] - fv[np.ix_(live, live)]).max() / scale
    assert err_x < 2e-6 and err_v < 2e-6, (err_x, err_v)


def test_penalty_violation_is_the_revolute_constraint():
    """d's point rows are p_i - p_j, its axis rows the revolute's two DP1 rows, at any pose: the penalty pin
    enforces the same equations as :class:`~trackdyn.Revolute` (the absolute system's rows of the same joint)."""
    rng = np.random.default_rng(3)
    m, pin = pin_model(rng)
    a, b = pin.body_a, pin.body_b
    m.add_joint(td.Revolute(a, b, point=pin.point, axis=pin.axis, name="rev"))
    s = AbsoluteSystem(m, remove_redundant=False)
    prov = PenaltyPins(m, [pin], k=1.0, c=0.0)
    q, v = random_state(rng, 2)
    s.update_kinematics(q, v)
    s.eval_constraints()
    prov.evaluate(s.kin)
    # Revolute rows: 3 CD rows of p_j - p_i, then the two DP1 rows
    assert np.allclose(prov.d[0, :3], -s.phi[:3], atol=1e-12)
    assert np.allclose(np.sort(np.abs(prov.d[0, 3:])), np.sort(np.abs(s.phi[3:5])), atol=1e-12)
    # and the generalised force is -Jᵀ k C with the revolute's own rows (k = 1, c = 0; the sign of each row
    # cancels in Jᵀ C)
    Q_rows = -(s.J[:5].T @ s.phi[:5])
    assert np.allclose(prov.Q[0], Q_rows, atol=1e-12 * max(1.0, np.abs(Q_rows).max()))


def test_penalty_force_pulls_the_pin_together():
    """Body b moved by +dx from the pin point feels -k dx at the pin (the recorded force is the one on b)."""
    m = td.Model(gravity=(0, 0, 0))
    b = m.add_body("b", mass=1.0, inertia=[1, 1, 1], pos=[1.0, 0, 0])
    prov = PenaltyPins(m, [PenaltyPin("pin", m.ground, b, (0.0, 0.0, 0.0), (0.0, 1.0, 0.0))], k=1e6, c=0.0)
    s = AbsoluteSystem(m)
    q = s.q0.copy()
    q[0, 0] += 1e-3
    s.update_kinematics(q, s.v0)
    prov.evaluate(s.kin)
    assert np.allclose(prov.force[0], [-1e3, 0, 0])
    assert np.allclose(prov.Q[0, 6:9], [-1e3, 0, 0])
    assert np.isclose(prov.d[0, 0], -1e-3)
