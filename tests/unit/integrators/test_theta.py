"""``theta-linearized``: the linearised θ-method (one solve per step, see integrators/euler.py)."""

import warnings

import numpy as np
import pytest

from trackdyn.sim.simulation import Simulation
from trackdyn.testing import problems as P
from trackdyn.testing import validation_integrators as V


def _run(model, t_end, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = Simulation(model, **kw)
        res = sim.run(t_end)
    assert res.status == "complete", res.metadata
    return sim, res


def test_theta_one_is_the_linearized_euler_step():
    # free slider-crank: joints, a prismatic guide and a TSDA spring (force-element Jacobians in the matrix)
    a, _ = _run(V.free_slider_crank(), 0.3, integrator="euler-implicit-linearized", step=2e-3, output_step=2e-3,
                record=["slider.pos.x"])
    b, _ = _run(V.free_slider_crank(), 0.3, integrator="theta-linearized", theta=1.0, step=2e-3, output_step=2e-3,
                record=["slider.pos.x"])
    assert np.array_equal(a.state.q, b.state.q)
    assert np.array_equal(a.state.v, b.state.v)
    assert np.array_equal(a.state.lam, b.state.lam)


def test_error_constant_scales_with_theta_minus_one_half():
    # pendulum from 1 rad (closed form): the first-order error term is proportional to θ - 1/2,
    # so θ = 0.6 has 1/5 of Euler's error; θ = 1/2 is second order (EXPECTED_ORDER covers the slope)
    steps = (5e-3, 2.5e-3)
    e_euler = V._pendulum_errors("euler-implicit-linearized", steps)
    e_06 = V._pendulum_errors("theta-linearized", steps, theta=0.6)
    e_05 = V._pendulum_errors("theta-linearized", steps, theta=0.5)
    for k in range(2):
        assert 0.17 < e_06[k] / e_euler[k] < 0.24
    assert V.measured_order(steps, e_06) == pytest.approx(1.0, abs=0.1)
    assert V.measured_order(steps, e_05) == pytest.approx(2.0, abs=0.1)
    assert e_05[-1] < 0.01 * e_euler[-1]


def test_trapezoidal_keeps_the_double_pendulum_energy():
    # undamped double pendulum released horizontal, 5 s at 1 ms: θ = 1/2 keeps the energy (no numerical
    # damping, no growth), Euler loses a large share of it
    drift = {}
    for name, kw in (("theta-linearized", {"theta": 0.5}), ("euler-implicit-linearized", {})):
        m = V.double_pendulum()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sim = Simulation(m, integrator=name, step=1e-3, output_step=0.01, record=["upper.pos.z"], **kw)
        s = sim.system
        E0 = V._energy(s, sim.state.q, sim.state.v)
        scale = E0 + 9.81 * 0.5 + 9.81 * 1.5  # above both rods hanging
        worst = [0.0]

        def watch(si, s=s, E0=E0, worst=worst):
            worst[0] = max(worst[0], abs(V._energy(s, si.state.q, si.state.v) - E0))

        res = sim.run(5.0, callback=watch)
        assert res.status == "complete"
        drift[name] = worst[0] / scale
    assert drift["theta-linearized"] < 1e-3
    assert drift["euler-implicit-linearized"] > 30 * drift["theta-linearized"]


def test_driven_mechanism_follows_the_driver():
    # the motor's rows carry the time secant; θ-weighting must not delay the driven motion
    for kw in ({"theta": 0.5}, {"theta": 0.7}):
        _, res = _run(P.slider_crank(), 1.0, integrator="theta-linearized", step=1e-3, output_step=1e-2,
                      record=["slider.pos.x"], **kw)
        x_exact, _ = P.slider_crank_exact(res.t)
        assert np.max(np.abs(res["slider.pos.x"] - x_exact)) < 1e-5


@pytest.mark.parametrize("theta", [0.4, 1.5, "half", float("nan")])
def test_bad_theta_is_refused(theta):
    with pytest.raises(ValueError, match="theta"):
        Simulation(P.pendulum(), integrator="theta-linearized", step=1e-3, theta=theta)


def _stick_oscillation(integrator, **kw):
    """Box (10 kg) on four Hooke corners in stick, no contact damping, pushed at 1 cm/s: x amplitude over
    0.30-0.35 s and 0.55-0.60 s after the push, and the period (exact 2π/√(4 k_t/m) without rocking)."""
    import trackdyn as td
    from trackdyn import terrain as tt
    from trackdyn.contact import ContactSystem, Material, shapes

    m = td.Model()
    blk = m.add_body("block", mass=10.0, inertia=[0.1, 0.2, 0.25], pos=[0, 0, 0.05 - 10 * 9.81 / 4e7])
    mat = Material("g", young=None, kn=1e7, kt=1e6, gn=0.0, gt=0.0, friction=0.8, restitution=0.5)
    cs = ContactSystem(m, terrain=tt.Flat(material=mat), law="hooke")
    cs.add_shape(blk, shapes.Box([0.3, 0.2, 0.1]), mat)
    sim = Simulation(m, integrator=integrator, step=1e-4, output_step=1e-4, providers=[cs],
                     record=["block.pos.x"], **kw)
    sim.run(0.3)  # settles vertically
    sim.state.v[0, 0] = 0.01
    res = sim.run(0.6)
    t = res.t
    x = res["block.pos.x"] - res["block.pos.x"][t > 0.45].mean()
    a1 = np.max(np.abs(x[(t > 0.3) & (t < 0.35)]))
    a2 = np.max(np.abs(x[t > 0.55]))
    zc = t[1:][(np.sign(x[1:]) != np.sign(x[:-1])) & (t[1:] > 0.3)]
    return a1, a2, 2 * np.mean(np.diff(zc))


def test_contact_shear_spring_is_trapezoidal():
    # the shear spring acts on P H + θ h v_t (ForceContext.hist_weight) and the history advances by h v̄:
    # at θ = 1/2 the stick oscillation keeps its amplitude over 25 periods; Euler's step damps it (the
    # spring would also be damped by k_t h (1-θ) if it looked ahead by a whole step)
    a1, a2, period = _stick_oscillation("theta-linearized", theta=0.5)
    assert a2 / a1 > 0.97
    assert period == pytest.approx(2 * np.pi / np.sqrt(4e6 / 10.0), rel=0.01)
    e1, e2, _ = _stick_oscillation("euler-implicit-linearized")
    assert e2 / e1 < 0.05
