"""Force elements: generalized forces and exact Jacobians against finite differences."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import trackdyn as td
from trackdyn.formulations import AbsoluteSystem
from trackdyn.testing.fd import fd_position_jacobian, fd_velocity_jacobian, random_state

seeds = st.integers(0, 2**31 - 1)


def two_bodies(rng):
    m = td.Model()
    a = m.add_body("a", mass=2.0, inertia=[0.3, 0.4, 0.5], pos=rng.normal(size=3))
    b = m.add_body("b", mass=3.0, inertia=[0.5, 0.6, 0.7], pos=rng.normal(size=3) + [1.5, 0, 0])
    return m, a, b


def element_models(rng):
    """(label, model) pairs, each with one force element between random bodies."""
    out = []
    m, a, b = two_bodies(rng)
    m.add_force(td.TSDA(a, b, point_a=rng.normal(size=3), point_b=rng.normal(size=3) + [2, 0, 0],
                        stiffness=1e3, damping=50.0, free_length=1.0, actuation=20.0,
                        spring_table=[[0.0, -10.0], [1.0, 0.0], [2.0, 40.0], [5.0, 400.0]],
                        damper_table=[[-1.0, -30.0], [0.0, 0.0], [1.0, 10.0]], name="e"))
    out.append(("tsda", m))
    m, a, b = two_bodies(rng)
    m.add_force(td.RSDA(a, b, axis=rng.normal(size=3), stiffness=200.0, damping=3.0, free_angle=0.2,
                        actuation=5.0, spring_table=[[-1.0, -50.0], [0.0, 0.0], [1.0, 90.0]],
                        damper_table=[[-2.0, -1.0], [2.0, 3.0]], name="e"))
    out.append(("rsda", m))
    m, a, b = two_bodies(rng)
    K = rng.normal(size=(3, 3))
    m.add_force(td.Bushing(a, b, point=rng.normal(size=3), stiffness=np.diag([1e4, 2e4, 3e4]) + 100 * K,
                           damping=[10.0, 20.0, 30.0], rot_stiffness=[300.0, 200.0, 100.0],
                           rot_damping=np.diag([1.0, 2.0, 3.0]) + 0.1 * K, name="e"))
    out.append(("bushing", m))
    m, a, b = two_bodies(rng)
    m.add_force(td.PointForce(b, force=rng.normal(size=3) * 10, point=rng.normal(size=3), frame="body", name="e"))
    out.append(("force-body", m))
    m, a, b = two_bodies(rng)
    m.add_force(td.PointForce(b, force=rng.normal(size=3) * 10, point=rng.normal(size=3), frame="world", name="e"))
    out.append(("force-world", m))
    m, a, b = two_bodies(rng)
    m.add_force(td.PointTorque(b, torque=rng.normal(size=3) * 10, frame="body", name="e"))
    out.append(("torque-body", m))
    m, a, b = two_bodies(rng)
    m.add_force(td.TSDA(m.ground, b, point_a=[0, 0, 1], point_b=rng.normal(size=3), stiffness=500.0,
                        damping=5.0, name="e"))
    out.append(("tsda-ground", m))
    return out


LABELS = ["tsda", "rsda", "bushing", "force-body", "force-world", "torque-body", "tsda-ground"]


@pytest.mark.parametrize("label", LABELS)
@given(seed=seeds)
def test_element_jacobians(label, seed):
    rng = np.random.default_rng(seed)
    model = dict(element_models(rng))[label]
    s = AbsoluteSystem(model)
    blk = s.blocks[0]
    q, v = random_state(rng, 2)
    q[1, :3] += [1.5, 0.0, 0.0]
    bodies = blk.body[0]

    def Q(qq, vv):
        s.update_kinematics(qq, vv)
        blk.evaluate(0.0, s.kin, vv)
        return blk.Q[0].copy()

    Q(q, v)
    Kx, Kv = blk.Kx[0].copy(), blk.Kv[0].copy()
    fx = fd_position_jacobian(Q, q, v, bodies)
    fv = fd_velocity_jacobian(Q, q, v, bodies)
    scale = max(1.0, np.abs(fx).max(), np.abs(fv).max())
    live = np.concatenate([np.arange(6 * k, 6 * k + 6) for k, b in enumerate(bodies) if b >= 0])
    assert np.allclose(Kx[np.ix_(live, live)], fx[np.ix_(live, live)], rtol=1e-5, atol=2e-5 * scale)
    assert np.allclose(Kv[np.ix_(live, live)], fv[np.ix_(live, live)], rtol=1e-5, atol=2e-5 * scale)


def test_tsda_force_and_sign():
    """A stretched spring pulls its ends together; the recorded force is the tension."""
    m = td.Model(gravity=(0, 0, 0))
    b = m.add_body("b", mass=1.0, inertia=[1, 1, 1], pos=[2.0, 0, 0])
    m.add_force(td.TSDA(m.ground, b, [0, 0, 0], [2.0, 0, 0], stiffness=100.0, free_length=1.5, name="s"))
    s = AbsoluteSystem(m)
    s.update_kinematics(s.q0, s.v0)
    blk = s.blocks[0]
    blk.evaluate(0.0, s.kin, s.v0)
    assert np.isclose(blk.force[0], 50.0)
    assert np.allclose(blk.Q[0, 6:9], [-50.0, 0, 0])


def test_rsda_torque_sign():
    """Body b turned by +θ about the axis feels -k θ about it."""
    from trackdyn.math import quat_from_axis_angle

    m = td.Model(gravity=(0, 0, 0))
    b = m.add_body("b", mass=1.0, inertia=[1, 1, 1])
    m.add_force(td.RSDA(m.ground, b, axis=[0, 0, 1], stiffness=10.0, name="r"))
    s = AbsoluteSystem(m)
    q = s.q0.copy()
    q[0, 3:] = quat_from_axis_angle([0, 0, 1], 0.3)
    s.update_kinematics(q, s.v0)
    blk = s.blocks[0]
    blk.evaluate(0.0, s.kin, s.v0)
    assert np.isclose(blk.angle[0], 0.3)
    assert np.allclose(blk.Q[0, 9:12], [0, 0, -3.0])


@given(seed=seeds, to_ground=st.booleans(), coupling=st.sampled_from(["full", "diagonal"]))
def test_rsda_rotation_only_scatter_equals_the_full_scatter(seed, to_ground, coupling):
    """An RSDA's Jacobians are zero outside the rotations' rows and columns, so the scatter that visits only
    those entries (``scatter_rotational`` with its compact slot map, what the formulation uses for RSDA blocks)
    adds exactly what the full one adds."""
    from trackdyn.mbs import _force_kernels as FK

    rng = np.random.default_rng(seed)
    m, a, b = two_bodies(rng)
    m.add_force(td.RSDA(m.ground if to_ground else a, b, axis=rng.normal(size=3), stiffness=200.0, damping=3.0,
                        free_angle=0.2, damper_table=[[-2.0, -1.0], [2.0, 3.0]], name="e"))
    s = AbsoluteSystem(m, coupling=coupling)  # "diagonal": the coupling block's terms go to Kxv, not the matrix
    blk = s.blocks[0]
    assert blk.rotational
    q, v = random_state(rng, 2)
    s.update_kinematics(q, v)
    blk.evaluate(0.0, s.kin, v)
    trans = np.r_[0:3, 6:9]
    assert not blk.Kx[0][trans].any() and not blk.Kx[0][:, trans].any() and not blk.Kv[0][:, trans].any()
    outs = []
    for rot_only in (False, True):
        f, Dv, Kxv, data = np.zeros((2, 6)), np.zeros((2, 6)), np.zeros((2, 6)), np.arange(s.pattern.nnz, dtype=float)
        if rot_only:
            FK.scatter_rotational(blk.body, blk.Q, blk.Kx, blk.Kv, blk.slot_rot, 1e-6, 1e-3, v, f, data, Dv, Kxv)
        else:
            FK.scatter_elements(blk.body, blk.Q, blk.Kx, blk.Kv, blk.slot, 1e-6, 1e-3, v, f, data, Dv, Kxv)
        outs.append((f, Dv, Kxv, data))
    for x, y in zip(*outs):
        assert np.array_equal(x, y)
    assert np.abs(outs[0][1]).max() > 0  # the damping reached Dv: the comparison is not between zeros
    if coupling == "diagonal" and not to_ground:
        assert np.abs(outs[0][2]).max() > 0  # and the left-out coupling reached Kxv
