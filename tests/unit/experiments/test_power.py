"""The power audit (trackdyn.experiments.power): its kernels against the laws, and the balance of small models.

The energy terms are checked against the force laws they integrate (their derivative is the law's
elastic force); the balance is checked on models whose losses are known (a sliding block, a bouncing
ball, a damped pendulum): the physical residual is implicit Euler's dissipation (it shrinks with the
step) and, with the integrator's measured share, the discrete energy theorem closes to round-off.
"""

import warnings

import numpy as np
import pytest

import trackdyn as td
from trackdyn import terrain as tt
from trackdyn.contact import ContactSystem, Material, shapes
from trackdyn.contact import _kernels as CK
from trackdyn.experiments import _power_kernels as PK
from trackdyn.experiments.power import PowerAudit
from trackdyn.mbs._force_kernels import table_eval


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_spring_energy_is_the_integral_of_the_element_law():
    # two elements sharing the table arrays: a linear spring with a constant actuation, and a table with
    # jounce/rebound-like stiffening (the torsion bar's form), probed inside, beside and beyond its points
    # (at a point the table's slope jumps and a central difference averages the two)
    tx = np.array([-0.5, -0.2, 0.0, 0.3, 0.6])
    ty = np.array([-900.0, -120.0, 0.0, 150.0, 1400.0])
    k, x0, act = np.array([250.0, 0.0]), np.array([0.1, 0.0]), np.array([40.0, 0.0])
    spring_tab = np.array([[0, 0], [0, 5]])
    xs = np.array([-0.8, -0.499, -0.35, -0.201, -0.05, 0.001, 0.2, 0.299, 0.45, 0.601, 0.9])
    eps = 1e-6
    for x in xs:
        up, dn = np.zeros(2), np.zeros(2)
        PK.spring_energy(k, x0, act, tx, ty, spring_tab, np.full(2, x + eps), up)
        PK.spring_energy(k, x0, act, tx, ty, spring_tab, np.full(2, x - eps), dn)
        force = [k[e] * (x - x0[e]) - act[e] + table_eval(tx, ty, spring_tab[e, 0], spring_tab[e, 1], x)[0]
                 for e in range(2)]
        np.testing.assert_allclose((up - dn) / (2 * eps), force, rtol=1e-6, atol=1e-5)


def test_damping_power_is_the_damping_force_times_the_rate():
    tx = np.array([-1.0, 0.0, 0.5, 2.0])
    ty = np.array([-3000.0, 0.0, 800.0, 4000.0])
    c = np.array([12.0, 0.0])
    damper_tab = np.array([[0, 0], [0, 4]])
    for r in (-1.5, -0.3, 0.0, 0.2, 1.0, 3.0):
        out = np.zeros(2)
        PK.damping_power(c, tx, ty, damper_tab, np.full(2, r), out)
        np.testing.assert_allclose(out, [12.0 * r * r, np.interp(r, tx, ty, left=None) * r if -1 <= r <= 2
                                         else table_eval(tx, ty, 0, 4, r)[0] * r])
        assert np.all(out >= 0.0)  # a damper through the origin only dissipates


@pytest.mark.parametrize("law, wtype", [
    (CK.L_HERTZ, CK.W_POINT), (CK.L_HERTZ_GIVEN, CK.W_POINT), (CK.L_HOOKE, CK.W_POINT),
    (CK.L_HOOKE_GIVEN, CK.W_POINT), (CK.L_KV, CK.W_POINT), (CK.L_WINKLER, CK.W_POINT),
    (CK.L_WINKLER, CK.W_DISC), (CK.L_WINKLER, CK.W_SPHERE),
])
def test_contact_elastic_energy_is_the_integral_of_the_law(law, wtype):
    par = np.zeros(CK.N_PAR)
    par[CK.P_E], par[CK.P_G], par[CK.P_CDAMP] = 2e7, 8e6, 0.3
    par[CK.P_KN], par[CK.P_KT], par[CK.P_GN], par[CK.P_GT] = 3e6, 2e6, 40.0, 30.0
    par[CK.P_VCHAR], par[CK.P_RAMP] = 1.0, 1e-5
    reff, meff, w, area, rad = 0.2, 30.0, 0.7, 0.05, 0.3
    for delta in (2e-4, 3e-3, 0.02):
        eps = 1e-3 * delta
        up = PK._elastic_energy(law, par, delta + eps, reff, meff, w, area, wtype, rad, PK.GL_U, PK.GL_W)
        dn = PK._elastic_energy(law, par, delta - eps, reff, meff, w, area, wtype, rad, PK.GL_U, PK.GL_W)
        el = CK.normal_law(law, par, delta, 0.0, reff, meff, w, area, wtype, rad)[0]
        np.testing.assert_allclose((up - dn) / (2 * eps), el, rtol=1e-5)
    assert PK._elastic_energy(law, par, 0.0, reff, meff, w, area, wtype, rad, PK.GL_U, PK.GL_W) == 0.0


def _block(h, t_end=0.6):
    m = td.Model()
    b = m.add_body("block", mass=5.0, inertia=[0.05] * 3, pos=[0, 0, 0.05 - 2e-4], vel=[2.0, 0, 0])
    cs = ContactSystem(m, terrain=tt.Flat())
    cs.add_shape(b, shapes.Box([0.2, 0.2, 0.1]), material=Material("steel", young=1e9, restitution=0.3,
                                                                     friction=0.5))
    sim = td.Simulation(m, step=h, providers=[cs])
    audit = PowerAudit(sim, contact=cs).attach()
    sim.run(t_end)
    return audit.balance(), sim


def _ball(h, t_end=0.03):
    # one impact at 1 m/s, no gravity, spinning up by friction (0.5 m/s sideways), rebounding
    m = td.Model(gravity=[0.0, 0.0, 0.0])
    b = m.add_body("ball", mass=2.0, inertia=[8e-3] * 3, pos=[0, 0, 0.105], vel=[0.5, 0, -1.0])
    cs = ContactSystem(m, terrain=tt.Flat())
    cs.add_shape(b, shapes.Sphere(0.1), material=Material("rubber", young=1e7, restitution=0.5, friction=0.5))
    sim = td.Simulation(m, step=h, providers=[cs])
    audit = PowerAudit(sim, contact=cs).attach()
    sim.run(t_end)
    return audit.balance(), sim


def _pendulum(h, t_end=2.0):
    # a link on a revolute, a tabulated torsion spring with damping, a preloaded TSDA with a damper table
    m = td.Model()
    link = m.add_body("link", mass=1.0, inertia=[0.1] * 3, pos=[0.5, 0, 0])
    m.add_joint(td.Revolute(m.ground, link, point=[0, 0, 0], axis=[0, 1, 0], name="pin"))
    m.add_force(td.RSDA(m.ground, link, axis=[0, 1, 0], stiffness=5.0, damping=0.3,
                        spring_table=[[-1, -2], [0, 0], [1, 4]], name="torsion"))
    m.add_force(td.TSDA(m.ground, link, point_a=[0.5, 0, 0.6], point_b=[0.5, 0, 0], stiffness=50.0, actuation=3.0,
                        damper_table=[[-1, -4], [0, 0], [2, 3]], name="strut"))
    sim = td.Simulation(m, step=h)
    audit = PowerAudit(sim).attach()
    sim.run(t_end)
    return audit.balance(), sim


@pytest.mark.parametrize("model, h", [(_block, 1e-3), (_ball, 2.5e-4), (_pendulum, 1e-3)])
def test_the_balance_closes_to_the_integrators_dissipation(model, h):
    # the ball's impact lasts about 1 ms: it is resolved from h = 2.5e-4 on
    bals = [model(h / k)[0] for k in (1, 2, 4)]
    for b in bals:
        assert b.input_work == 0.0
        lost = -(b.kinetic + b.potential)
        assert lost > 0
        # implicit Euler only removes energy: the physical balance leaves a positive residual ...
        assert b.residual > 0
        # ... which the integrator's measured share accounts for (the discrete energy theorem of the step)
        assert abs(b.unexplained) < 1e-6 * lost, b.to_dict()
        assert b.integrator["kinetic (½ΔvᵀMΔv)"] > 0
        assert all(v >= 0 for v in b.dissipated.values()), b.dissipated
    # and it shrinks with the step (first order; faster while a contact is poorly resolved)
    r = [b.residual for b in bals]
    assert r[1] < 0.6 * r[0] and r[2] < 0.6 * r[1], r


def test_a_sliding_block_loses_its_kinetic_energy_to_friction():
    b, sim = _block(2.5e-4)
    assert abs(sim.state.v[0, 0]) < 1e-3  # at rest
    ke0 = 0.5 * 5.0 * 2.0 ** 2
    fric = b.dissipated["contact default/terrain friction"]
    # the rest is the initial overlap's elastic energy damped out (0.4 J) and the step's dissipation
    assert abs(fric - ke0) < 0.01 * ke0, b.to_dict()


def test_the_ball_loses_the_energy_of_its_restitution():
    b, sim = _ball(3.125e-5)
    v = sim.state.v[0]
    assert v[2] > 0  # rebounding
    lost = -(b.kinetic + b.potential)
    diss = sum(b.dissipated.values())
    assert b.dissipated["contact default/terrain normal damping"] > 0.9 * lost
    assert abs(lost - diss) < 0.02 * lost  # the rest is the integrator's (1.5 % at this step)


def test_the_audit_refuses_what_it_cannot_account():
    m = td.Model()
    b = m.add_body("b", mass=1.0, inertia=[0.1] * 3, pos=[0, 0, 1.0])
    m.add_force(td.PointForce(b, [1.0, 0, 0], name="push"))
    with pytest.raises(ValueError, match="PointLoadBlock"):
        PowerAudit(td.Simulation(m, step=1e-3))
    m = td.Model()
    m.add_body("b", mass=1.0, inertia=[0.1] * 3, pos=[0, 0, 1.0])
    with pytest.raises(ValueError, match="integrator 'rk4'"):
        PowerAudit(td.Simulation(m, integrator="rk4", step=1e-3))
    cs = ContactSystem(m, terrain=tt.Flat())
    sim = td.Simulation(m, step=1e-3, providers=[cs])
    with pytest.raises(ValueError, match="not accounted"):
        PowerAudit(sim)  # its contact system not given: its work would be missed
    audit = PowerAudit(sim, contact=cs, start=0.5).attach()
    sim.run(0.2)
    with pytest.raises(ValueError, match="no step counted"):
        audit.balance()
