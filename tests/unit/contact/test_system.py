"""ContactSystem: materials and laws, families and exclusions, coupling, history in State.extra, outputs."""

import math

import numpy as np
import pytest

import trackdyn as td
from trackdyn import terrain as tt
from trackdyn.contact import ContactSystem, Material, effective_moduli, shapes
from trackdyn.contact import _kernels as CK
from trackdyn.contact._restitution import damping_for_restitution, impact_restitution
from trackdyn.contact.materials import combine


# --------------------------------------------------------------------------- materials
def test_effective_moduli_eq_2_19():
    a = Material("a", young=2e11, poisson=0.3)
    b = Material("b", young=1e7, poisson=0.45)
    E, G = effective_moduli(a, b)
    assert E == pytest.approx(1 / ((1 - 0.09) / 2e11 + (1 - 0.45**2) / 1e7))
    assert G == pytest.approx(1 / (2 * 2.3 * 0.7 / 2e11 + 2 * 2.45 * 0.55 / 1e7))


def test_combination_rules():
    a = Material("a", young=None, kn=1e5, kt=2e5, gn=10.0, gt=20.0, friction=0.3, restitution=0.5)
    b = Material("b", young=None, kn=3e5, kt=4e5, gn=30.0, gt=40.0, friction=0.7, restitution=0.2)
    law, par = combine(a, b, "hooke", True, "exact", 1.0)
    assert law == CK.L_HOOKE_GIVEN
    assert par[CK.P_MU] == 0.3
    np.testing.assert_allclose(par[[CK.P_KN, CK.P_KT, CK.P_GN, CK.P_GT]], [2e5, 3e5, 20.0, 30.0])
    law, par = combine(Material("c", young=1e7, restitution=0.5), Material("d", young=1e9, restitution=0.2),
                       "hertz", True, "exact", 1.0)
    assert law == CK.L_HERTZ
    assert par[CK.P_CDAMP] == pytest.approx(damping_for_restitution(0.2, "hertz"))
    kv = Material.kelvin_voigt("kv", 2e6, 5e3, 0.3)
    assert combine(kv, kv, "hertz", True, "exact", 1.0)[0] == CK.L_KV
    with pytest.raises(ValueError, match="Kelvin-Voigt material against a smooth-contact"):
        combine(kv, a, "hertz", True, "exact", 1.0)
    soil = Material.winkler("soil", 1e6)
    assert combine(soil, a, "hertz", True, "exact", 1.0)[0] == CK.L_WINKLER


@pytest.mark.parametrize("law", ["hertz", "hooke"])
@pytest.mark.parametrize("e", [0.1, 0.45, 0.85])
def test_restitution_table_inverts_the_impact(law, e):
    c = damping_for_restitution(e, law)
    assert impact_restitution(c, law) == pytest.approx(e, rel=2e-3)


def test_material_bad_input():
    with pytest.raises(ValueError, match="poisson"):
        Material("x", poisson=0.6)
    with pytest.raises(ValueError, match="restitution"):
        Material("x", restitution=-0.1)
    with pytest.raises(ValueError, match="give young"):
        Material("x", young=None)
    with pytest.raises(ValueError, match="stiffness"):
        Material.kelvin_voigt("x", -1.0, 1.0)


# --------------------------------------------------------------------------- shapes
def test_shape_bad_input():
    with pytest.raises(ValueError, match="Sphere: radius"):
        shapes.Sphere(0.0)
    with pytest.raises(ValueError, match="Cylinder: slices"):
        shapes.Cylinder(0.3, 0.1, slices=4)
    with pytest.raises(ValueError, match="perpendicular"):
        shapes.Segment([0, 0, 0], [1, 1, 0])
    with pytest.raises(ValueError, match="must cut the addendum"):
        shapes.Sprocket(10, 0.5, 0.3, 0.089, 0.2)
    with pytest.raises(ValueError, match="gaps overlap"):
        shapes.Sprocket(30, 0.2605, 0.3, 0.089, 0.2)
    with pytest.raises(AttributeError):
        shapes.Sphere(0.1).radius = 2.0


def test_sprocket_outline_closed_gear():
    sp = shapes.Sprocket(10, 0.2605, 0.3, 0.089, 0.225)
    P = sp.profile(n_per_arc=401)
    r = np.hypot(P[:, 0], P[:, 1])
    assert r.max() == pytest.approx(0.2605, abs=1e-9)
    assert r.min() == pytest.approx(0.3 - 0.089, abs=1e-4)


# --------------------------------------------------------------------------- system
def ball_on_ground(mass=2.0, **kw):
    m = td.Model()
    b = m.add_body("ball", mass=mass, inertia=[0.01] * 3, pos=[0, 0, 0.1])
    cs = ContactSystem(m, terrain=tt.Flat(), **kw)
    cs.add_shape(b, shapes.Sphere(0.1), material=Material("rubber", young=1e7, restitution=0.3))
    return m, cs


def test_series_and_resting_forces():
    m, cs = ball_on_ground()
    res = td.Simulation(m, step=1e-4, output_step=1e-2, providers=[cs]).run(0.5)
    for name in ["contact.count", "contact.penetration", "ball.contact.force.z", "ball.contact.torque.x",
                 "ball.contact.count", "ball.contact.penetration", "ground.contact.force.z"]:
        assert name in res.frame().columns
    assert res["ball.contact.force.z"][-1] == pytest.approx(2.0 * 9.81, rel=1e-6)
    assert res["ground.contact.force.z"][-1] == pytest.approx(-2.0 * 9.81, rel=1e-6)
    assert res["contact.count"][-1] == 1
    c = cs.contacts()
    assert c["point"].shape == (1, 3) and c["normal_force"][0] == pytest.approx(2 * 9.81, rel=1e-6)


def test_bad_system_input():
    m, cs = ball_on_ground()
    with pytest.raises(ValueError, match="law"):
        ContactSystem(m, law="coulomb")
    with pytest.raises(ValueError, match="max_penetration"):
        ContactSystem(m, max_penetration=-1.0)
    with pytest.raises(ValueError, match="expected a shape"):
        cs.add_shape(0, "sphere")
    with pytest.raises(ValueError, match="coupling: mode"):
        cs.coupling("a", "b", "half")
    td.Simulation(m, step=1e-3, providers=[cs])
    with pytest.raises(ValueError, match="after the simulation was built"):
        cs.add_shape(0, shapes.Sphere(0.1))


def two_spheres(**setup):
    m = td.Model(gravity=(0, 0, 0))
    a = m.add_body("a", mass=1.0, inertia=[0.01] * 3, pos=[0, 0, 0])
    b = m.add_body("b", mass=1.0, inertia=[0.01] * 3, pos=[0.19, 0, 0])
    cs = ContactSystem(m)
    mat = Material("m", young=1e7)
    cs.add_shape(a, shapes.Sphere(0.1), mat, family="fa")
    cs.add_shape(b, shapes.Sphere(0.1), mat, family="fb")
    return m, a, b, cs


def push(m, cs):
    sim = td.Simulation(m, step=1e-4, providers=[cs])
    sim.step()
    return sim.state.v[1, 0]


def test_families_exclusions_and_joints():
    m, a, b, cs = two_spheres()
    assert push(m, cs) > 0  # overlapping spheres push apart
    m, a, b, cs = two_spheres()
    cs.collide("fa", "fb", False)
    assert push(m, cs) == 0.0
    m, a, b, cs = two_spheres()
    cs.exclude(a, b)
    assert push(m, cs) == 0.0
    m, a, b, cs = two_spheres()
    m.add_joint(td.Distance(a, b, [0, 0, 0], [0.19, 0, 0], name="rod"))
    assert push(m, cs) == 0.0  # jointed bodies do not collide by default


def test_coupling_pairs_full_and_diagonal():
    m, a, b, cs = two_spheres()
    assert cs.coupling_pairs() == [(0, 1)]
    m, a, b, cs = two_spheres()
    cs.coupling("fa", "fb", "diagonal")
    assert cs.coupling_pairs() == []
    assert push(m, cs) > 0  # still collide, with each body's own Jacobian block only


def test_unsupported_pair_warns():
    m = td.Model()
    a = m.add_body("a", mass=1.0, inertia=[0.01] * 3)
    b = m.add_body("b", mass=1.0, inertia=[0.01] * 3, pos=[1, 0, 0])
    cs = ContactSystem(m)
    cs.add_shape(a, shapes.Cylinder(0.2, 0.1))
    cs.add_shape(b, shapes.Cylinder(0.2, 0.1))
    with pytest.warns(UserWarning, match="cylinder"):
        cs.coupling_pairs()


def block_on_incline(angle=math.radians(15)):
    from trackdyn.math.quaternion import quat_from_axis_angle

    m = td.Model()
    n = np.array([-math.sin(angle), 0, math.cos(angle)])
    blk = m.add_body("block", mass=1.0, inertia=[0.01] * 3, pos=0.05 * n, quat=quat_from_axis_angle([0, 1, 0], -angle))
    cs = ContactSystem(m, terrain=tt.Plane.incline(angle))
    cs.add_shape(blk, shapes.Box([0.2, 0.2, 0.1]), Material("b", young=1e8, friction=0.6))
    return m, cs


def test_history_lives_in_state_and_checkpoints():
    """The shear history is plain arrays in State.extra; a copied state replays the same trajectory."""
    m, cs = block_on_incline()
    sim = td.Simulation(m, step=1e-4, providers=[cs])
    sim.run(0.2)
    ex = sim.state.extra
    assert ex["contact.key"].shape == (4, 2) and ex["contact.disp"].shape == (4, 3)
    # the springs hold the block: displacement along the slope, on the order of m g sinθ / k_t
    assert np.all(np.linalg.norm(ex["contact.disp"], axis=1) > 0)
    saved = sim.state.copy()
    a = sim.run(0.3)["block.pos.x"][-1]
    sim.state = saved
    b = sim.run(0.3)["block.pos.x"][-1]
    assert a == b


def test_history_buffers_grow_to_the_records_capacity():
    """When the committed history outgrows its buffers they are reallocated as large as the record buffers
    (grown by doubling), not to the count of the moment: one reallocation, not one per new largest count."""
    m, cs = block_on_incline()
    sim = td.Simulation(m, step=1e-4, providers=[cs])
    sim.run(0.01)
    cs._new_history_buffers(1)  # as if the history had been sized for one contact
    sim.step()
    assert cs._hist_key.shape[0] == cs._hist_disp.shape[0] == cs.rec.kind.shape[0] >= 4
    assert sim.state.extra["contact.key"].shape == (4, 2)


@pytest.mark.parametrize("m, runs", [(0, 1), (1, 1), (7, 1), (220, 18), (221, 221), (64, 2)])
def test_history_key_sort_matches_lexsort(m, runs):
    """The commit's merge sort orders keys as ``np.lexsort`` does: sorted runs, reversed runs, equal first words."""
    rng = np.random.default_rng(m + runs)
    key = np.zeros((m, 2), np.int64)
    if m:
        cuts = np.sort(rng.choice(np.arange(1, m), size=min(runs - 1, m - 1), replace=False)) if m > 1 else []
        for part in np.split(np.arange(m), cuts):
            k0 = np.sort(rng.integers(0, 12, part.size))  # few distinct first words: ties decided by the second
            key[part, 0] = k0
            key[part, 1] = rng.permutation(10_000)[:part.size] if runs == m else np.arange(part.size) * 7 + k0
    idx = np.full((2, m + 3), -1, np.int64)
    work = np.full(m + 4, -1, np.int64)
    CK.sort_keys(m, key, idx, work)
    order = np.lexsort((key[:, 1], key[:, 0]))
    assert np.array_equal(key[idx[0, :m]], key[order])


def test_commit_history_writes_sorted_capped_displacements():
    """commit_history: d = d0 + h T v (capped at s_cap / k_t), entries without history left out, sorted by key."""
    rng = np.random.default_rng(3)
    n, nb = 9, 4
    key = rng.integers(0, 5, (n, 2)) * 100 + np.arange(n)[:, None]
    key = key[::-1].copy()  # reversed: every entry out of order
    body = rng.integers(-1, nb, (n, 2))
    s_hist = np.array([1, 1, 0, 1, 1, 1, 0, 1, 1], np.bool_)
    s_d0 = rng.normal(size=(n, 3)) * 1e-4
    s_Tv = rng.normal(size=(n, 3, 12))
    s_kt = np.full(n, 1e6)
    s_cap = np.full(n, 1e9)
    s_cap[4] = 1.0  # this one slides: |d| capped at 1e-6
    v = rng.normal(size=(nb, 6))
    h = 1e-3
    out_key = np.zeros((n, 2), np.int64)
    out_disp = np.zeros((n, 3))
    work = (np.zeros((n, 2), np.int64), np.zeros((n, 3)), np.zeros((2, n), np.int64), np.zeros(n + 1, np.int64))
    m = CK.commit_history(n, key, body, s_hist, s_d0, s_Tv, s_kt, s_cap, v, h, out_key, out_disp, *work)
    want = {}
    for r in np.nonzero(s_hist)[0]:
        vv = np.concatenate([v[b] if b >= 0 else np.zeros(6) for b in body[r]])
        d = s_d0[r] + h * s_Tv[r] @ vv
        if s_kt[r] * np.linalg.norm(d) > s_cap[r]:
            d *= s_cap[r] / (s_kt[r] * np.linalg.norm(d))
        want[tuple(key[r])] = d
    assert m == len(want)
    order = sorted(want)
    assert [tuple(k) for k in out_key[:m]] == order
    np.testing.assert_allclose(out_disp[:m], np.array([want[k] for k in order]), rtol=1e-13, atol=1e-18)
    assert np.linalg.norm(want[tuple(key[4])]) == pytest.approx(1e-6)


def test_kelvin_voigt_box_static_deflection():
    """wallin-shabana Table 2 ground contact (k = 2e6 N/m, c = 5e3 N s/m): four corners, δ = m g / (4 k)."""
    m = td.Model()
    blk = m.add_body("block", mass=18.0, inertia=[0.1, 0.2, 0.25], pos=[0, 0, 0.05])
    cs = ContactSystem(m, terrain=tt.Flat(material=Material.kelvin_voigt("ground", 2e6, 5e3, 0.3)))
    cs.add_shape(blk, shapes.Box([0.3, 0.2, 0.1]), Material.kelvin_voigt("link", 2e6, 5e3, 0.3))
    res = td.Simulation(m, step=1e-4, output_step=1e-2, providers=[cs]).run(0.5)
    assert 0.05 - res["block.pos.z"][-1] == pytest.approx(18 * 9.81 / (4 * 2e6), rel=1e-6)


def test_kelvin_voigt_friction_is_regularised():
    """A block pushed sideways on Kelvin-Voigt ground: friction μ F_n tanh(v / v_s)."""
    m = td.Model()
    blk = m.add_body("block", mass=10.0, inertia=[0.1, 0.2, 0.25], pos=[0, 0, 0.05], vel=[0.2, 0, 0])
    mat = Material.kelvin_voigt("g", 2e6, 5e3, friction=0.3, slip_speed=0.05)
    cs = ContactSystem(m, terrain=tt.Flat(material=mat))
    cs.add_shape(blk, shapes.Box([0.3, 0.2, 0.1]), mat)
    sim = td.Simulation(m, step=1e-4, providers=[cs])
    sim.run(0.02)
    c = cs.contacts()
    v = sim.state.v[0, 0]
    ft = c["tangential_force"][:, 0].sum()  # on the ground
    assert ft == pytest.approx(0.3 * c["normal_force"].sum() * math.tanh(v / 0.05), rel=2e-2)


def test_damping_ramp_keeps_first_touch_smooth():
    """A sphere arriving at 1 m/s exactly at the surface is not stopped by the linearised step."""
    m = td.Model(gravity=(0, 0, 0))
    ball = m.add_body("ball", mass=1.0, inertia=[4e-3] * 3, pos=[0, 0, 0.1 + 2e-5 * 100], vel=[0, 0, -1.0])
    cs = ContactSystem(m, terrain=tt.Flat())
    cs.add_shape(ball, shapes.Sphere(0.1), Material("b", young=1e7, restitution=0.5))
    sim = td.Simulation(m, step=2e-5, providers=[cs])
    for _ in range(101):
        sim.step()
    assert sim.state.v[0, 2] < -0.9


# --------------------------------------------------------------------------- explicit contact
def _sliding_scene(implicit):
    """A spinning box sliding on the ground, two overlapping spheres of a "full"-coupled family pair, a wheel on
    the box, a pin in a sprocket gap: every contact kind and witness mode of the vehicles."""
    m = td.Model()
    blk = m.add_body("block", mass=10.0, inertia=[0.1, 0.2, 0.25], pos=[0, 0, 0.0496], vel=[0.3, 0.1, -0.02],
                     omega=[0.2, -0.1, 0.5])
    a = m.add_body("a", mass=1.0, inertia=[0.01] * 3, pos=[1.0, 0, 0.5], vel=[0.1, 0, 0])
    b = m.add_body("b", mass=1.0, inertia=[0.01] * 3, pos=[1.19, 0.01, 0.5], vel=[-0.2, 0.1, 0])
    # a wheel (axis y) lying on the block's top: rim slices on a face (witness points on a line)
    w = m.add_body("w", mass=5.0, inertia=[0.02, 0.03, 0.02], pos=[0.01, 0.0, 0.1985], omega=[0.3, 1.0, 0.1],
                   quat=[math.cos(0.02), 0.0, 0.0, math.sin(0.02)])
    # a pin seated 1 mm deep in a gap of the M113's sprocket (witness points on the pin's axis)
    spr = m.add_body("sprocket", mass=50.0, inertia=[2.0, 3.0, 2.0], pos=[3.0, 0.0, 1.0], omega=[0.0, 2.0, 0.0])
    pin = m.add_body("pin", mass=1.0, inertia=[0.01] * 3, pos=[3.0, 0.0, 1.0 - (0.3 - 0.089 + 0.0125 - 0.001)],
                     vel=[0.1, 0.0, 0.05], omega=[0.1, 0.0, 0.2])
    cs = ContactSystem(m, terrain=tt.Flat(), implicit=implicit)
    cs.add_shape(spr, shapes.Sprocket(teeth=10, addendum_radius=0.2605, arc_centre_radius=0.3, arc_radius=0.089,
                                      separation=0.225), family="gear")
    cs.add_shape(pin, shapes.Cylinder(0.0125, 0.4), family="pin")
    for fam in ("default", "fa", "fb"):
        cs.collide("gear", fam, False)
        cs.collide("pin", fam, False)
    mat = Material("m", young=1e8, friction=0.6, restitution=0.3)
    cs.add_shape(blk, shapes.Box([0.3, 0.2, 0.1]), mat)
    cs.add_shape(a, shapes.Sphere(0.1), mat, family="fa")
    cs.add_shape(b, shapes.Sphere(0.1), mat, family="fb")
    cs.add_shape(w, shapes.Cylinder(0.1, 0.04), mat)
    return m, cs


def _one_evaluation(implicit):
    from trackdyn.formulations.absolute import ForceContext

    m, cs = _sliding_scene(implicit)
    sim = td.Simulation(m, step=1e-4, providers=[cs])
    s, st, h = sim.system, sim.state, 1e-4
    s.update_kinematics(st.q, st.v)
    f, Dv, Kxv = np.zeros((s.nb, 6)), np.zeros((s.nb, 6)), np.zeros((s.nb, 6))
    data = np.zeros(s.pattern.nnz)
    cs.accumulate(ForceContext(st.t, h, st, s.kin, f, Dv, data, h * h, h, Kxv))
    return cs, s, f, Dv, Kxv, data


def test_explicit_contact_same_forces_nothing_in_the_matrix():
    ci, si, fi, Dvi, Kxvi, di = _one_evaluation(True)
    ce, se, fe, Dve, Kxve, de = _one_evaluation(False)
    assert ci.implicit and not ce.implicit
    # the box on the ground, the spheres, the wheel on the box are in contact
    assert np.abs(fi[0, 2]) > 10.0 and np.abs(fi[1, 0]) > 1.0 and fi[3, 2] > 1.0 and fi[5, 2] < -1.0
    np.testing.assert_allclose(fe, fi, rtol=1e-12, atol=1e-9)
    assert np.abs(di).max() > 0.0 and np.abs(Dvi).max() > 0.0
    assert not de.any() and not Dve.any() and not Kxve.any()
    # coupling blocks (the spheres', the box's with each sphere) are declared only for implicit contact
    assert (1, 2) in ci.coupling_pairs() and ce.coupling_pairs() == []
    assert se.pattern.nnz < si.pattern.nnz


def test_explicit_contact_rest_and_rebound():
    """Explicit contact: the Hertz static penetration at rest, the pair's restitution on impact."""
    m = td.Model()
    ball = m.add_body("ball", mass=2.0, inertia=[8e-3] * 3, pos=[0, 0, 0.1])
    cs = ContactSystem(m, terrain=tt.Flat(), implicit=False)
    steel = Material("steel", young=2e11, restitution=0.5)
    cs.add_shape(ball, shapes.Sphere(0.1), steel)
    res = td.Simulation(m, step=1e-4, output_step=1e-2, providers=[cs]).run(0.5)
    E = 1.0 / ((1 - 0.09) / 2e11 + (1 - 0.09) / 2e10)  # steel on the default concrete ground
    delta = (2.0 * 9.81 / (4.0 / 3.0 * E * math.sqrt(0.1))) ** (2.0 / 3.0)
    assert 0.1 - res["ball.pos.z"][-1] == pytest.approx(delta, rel=1e-3)
    assert res["ball.contact.force.z"][-1] == pytest.approx(2.0 * 9.81, rel=1e-6)
    # impact at 1 m/s without gravity: rebound at e = min(0.5, ground 0.1) (exact damping)
    for h, tol in ((1e-5, 0.005), (1e-4, 0.02)):
        m = td.Model(gravity=(0, 0, 0))
        ball = m.add_body("ball", mass=1.0, inertia=[4e-3] * 3, pos=[0, 0, 0.1005], vel=[0, 0, -1.0])
        cs = ContactSystem(m, terrain=tt.Flat(), implicit=False)
        cs.add_shape(ball, shapes.Sphere(0.1), Material("b", young=1e7, restitution=0.5))
        sim = td.Simulation(m, step=h, providers=[cs])
        sim.run(0.02)
        assert sim.state.v[0, 2] == pytest.approx(0.1, rel=tol)


def test_explicit_contact_has_a_step_limit_implicit_does_not():
    """Steel ball resting on concrete (contact stiffness ~1e7 N/m, 2 kg: explicit limit ~ 2/ω ≈ 9e-4 s)."""
    for implicit, h, rests in ((True, 1e-3, True), (False, 1e-4, True), (False, 1e-3, False)):
        m = td.Model()
        ball = m.add_body("ball", mass=2.0, inertia=[8e-3] * 3, pos=[0, 0, 0.1])
        cs = ContactSystem(m, terrain=tt.Flat(), implicit=implicit)
        cs.add_shape(ball, shapes.Sphere(0.1), Material("steel", young=2e11, restitution=0.5))
        res = td.Simulation(m, step=h, output_step=1e-2, providers=[cs]).run(0.3)
        assert (abs(res["ball.pos.z"][-1] - 0.1) < 1e-5) == rests, (implicit, h)


def test_explicit_contact_bad_input():
    m, cs = ball_on_ground()
    with pytest.raises(ValueError, match="implicit must be True or False"):
        ContactSystem(m, implicit="no")
    with pytest.raises(AttributeError):
        cs.implicit = False  # the KKT pattern depends on it: fixed at construction
