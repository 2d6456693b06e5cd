"""NSC building blocks: cone projection, the CCP solvers, the envelope's gaps and the contact Jacobian rows."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trackdyn as td
from trackdyn import terrain
from trackdyn.contact import Material, shapes
from trackdyn.contact import _nsc_kernels as NK
from trackdyn.contact.nsc import NscContact
from trackdyn.contact.nsc_solvers import solve_ccp
from trackdyn.formulations import AbsoluteSystem
from trackdyn.math.quaternion import quat_from_axis_angle, quat_to_matrix
from trackdyn.mbs import _kernels as MK

finite = st.floats(-10.0, 10.0, allow_nan=False)


# --------------------------------------------------------------------------- the cone
@given(finite, finite, finite, st.floats(0.0, 5.0))
def test_cone_projection_is_the_euclidean_projection(gn, g1, g2, mu):
    x = np.array([gn, g1, g2])
    p = np.empty(3)
    NK.project_cones(1, np.zeros(1, np.int64), np.array([mu]), x, p)
    # in the cone
    assert math.hypot(p[1], p[2]) <= mu * p[0] + 1e-12
    # idempotent
    pp = np.empty(3)
    NK.project_cones(1, np.zeros(1, np.int64), np.array([mu]), p, pp)
    np.testing.assert_allclose(pp, p, atol=1e-12)
    # x - Π x lies in the polar cone and is orthogonal to Π x (Moreau)
    d = x - p
    assert abs(d @ p) < 1e-9 * (1 + x @ x)
    assert mu * math.hypot(d[1], d[2]) <= -d[0] + 1e-9 * (1 + abs(x).max())


# --------------------------------------------------------------------------- the solvers
def _random_ccp(seed, m):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(3 * m, 3 * m + 2))
    N = A @ A.T / (3 * m) * rng.uniform(0.1, 10.0)
    r = rng.normal(size=3 * m)
    mu = rng.uniform(0.0, 2.0, size=m)
    eta = np.array([np.trace(N[3 * i:3 * i + 3, 3 * i:3 * i + 3]) / 3 for i in range(m)])
    return N, r, mu, eta


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 8))
def test_the_three_solvers_solve_the_same_ccp(seed, m):
    N, r, mu, eta = _random_ccp(seed, m)
    sols = []
    for method in ("psor", "bb", "apgd"):
        g, u = np.zeros(3 * m), np.zeros(3 * m)
        info = solve_ccp(method, m, mu, eta, r, g, u, N=N, tol=1e-10, max_iter=50000)
        assert info.converged, (method, info)
        np.testing.assert_allclose(u, N @ g + r, atol=1e-12)
        for i in range(m):  # γ ∈ K, u ∈ K* (|u_t| ≤ u_n / μ), γ·u = 0
            gi, ui = g[3 * i:3 * i + 3], u[3 * i:3 * i + 3]
            assert math.hypot(gi[1], gi[2]) <= mu[i] * gi[0] + 1e-12
            assert mu[i] * math.hypot(ui[1], ui[2]) <= ui[0] + 1e-7
            assert abs(gi @ ui) < 1e-8
        sols.append(0.5 * g @ N @ g + r @ g)
    # the objective's minimum is unique (γ may not be: N can be singular)
    assert max(sols) - min(sols) < 1e-9 * (1 + abs(sols[0]))


@pytest.mark.parametrize(("seed", "m"), [(16, 5), (23, 3), (28, 3), (60, 8)])
def test_bb_does_not_stall_at_round_off(seed, m):
    # these problems stalled the first BB (a Python loop) for ever at a residual of 1e-10 to 9e-9: near the
    # solution round-off made gᵀd >= 0, the line search took a zero step, and the next iteration repeated it
    N, r, mu, eta = _random_ccp(seed, m)
    g, u = np.zeros(3 * m), np.zeros(3 * m)
    info = solve_ccp("bb", m, mu, eta, r, g, u, N=N, tol=1e-10, max_iter=20000)
    assert info.converged, info
    np.testing.assert_allclose(u, N @ g + r, atol=1e-12)


def test_the_compiled_solvers_count_their_products():
    N, r, mu, eta = _random_ccp(3, 6)
    for method in ("psor", "bb", "apgd"):
        g, u = np.zeros(18), np.zeros(18)
        info = solve_ccp(method, 6, mu, eta, r, g, u, N=N, tol=1e-9, max_iter=5000)
        assert info.converged
        # BB: one product per iteration and one for the start; APGD: its backtracking adds some
        assert info.products == info.iterations + 1 if method == "bb" else info.products >= info.iterations


def test_warm_start_from_the_solution_costs_no_iteration():
    N, r, mu, eta = _random_ccp(7, 5)
    g, u = np.zeros(15), np.zeros(15)
    solve_ccp("apgd", 5, mu, eta, r, g, u, N=N, tol=1e-11, max_iter=50000)
    for method in ("psor", "bb", "apgd"):
        g2 = g.copy()
        info = solve_ccp(method, 5, mu, eta, r, g2, u, N=N, tol=1e-9, max_iter=10)
        assert info.iterations <= 1 and info.converged, (method, info)


# --------------------------------------------------------------------------- scenes
STEEL = Material("steel", friction=0.4)


def _scene(specs, ground=True, envelope=0.01):
    """specs: (shape, pos, quat) per body; ground: True (flat), False (none) or a terrain; returns (system, nsc)."""
    m = td.Model()
    if ground is True:
        ground = terrain.Flat(material=STEEL)
    nsc = NscContact(m, terrain=ground or None, envelope=envelope)
    for k, (shape, pos, quat) in enumerate(specs):
        b = m.add_body(f"b{k}", mass=1.0 + k, inertia=[0.02, 0.03, 0.04], pos=pos, quat=quat)
        nsc.add_shape(b, shape, material=STEEL)
    return AbsoluteSystem(m, providers=[nsc]), nsc


def _detect(system, nsc, q, v):
    system.update_kinematics(q, v)
    m = nsc.detect(system.kin, 1e-3)
    return {tuple(nsc.c_key[i]): i for i in range(m)}, m


TILT = quat_from_axis_angle([0.3, 1.0, 0.2], 0.4).tolist()
# 10 teeth, tips at 0.25 m, gaps of 0.05 m radius centred at 0.25 m (the first at -z), gears at y = ±0.1
SPROCKET = shapes.Sprocket(10, 0.25, 0.25, 0.05, 0.2, guide_clearance=0.05)


@pytest.mark.parametrize(("specs", "ground", "gaps"), [
    # sphere 4 mm above the ground
    ([(shapes.Sphere(0.1), [0, 0, 0.104], [1, 0, 0, 0])], True, [0.004]),
    # box corners 3 mm above the ground
    ([(shapes.Box([0.2, 0.3, 0.1]), [0, 0, 0.053], [1, 0, 0, 0])], True, [0.003] * 4),
    # capsule lying 2 mm above the ground: both ends
    ([(shapes.Capsule(0.05, 0.4, axis=[1, 0, 0]), [0, 0, 0.052], [1, 0, 0, 0])], True, [0.002] * 2),
    # a disc slice of a wheel 5 mm above the ground
    ([(shapes.Cylinder(0.3, 0.1, slices=1), [0, 0, 0.305], [1, 0, 0, 0])], True, [0.005]),
    # sphere 6 mm above a box's top face
    ([(shapes.Box([1.0, 1.0, 0.2]), [0, 0, 0], [1, 0, 0, 0]), (shapes.Sphere(0.1), [0.1, 0, 0.206], [1, 0, 0, 0])],
     False, [0.006]),
    # sphere near a box's edge (x = 0.5, z = 0.1), 5 mm away along the diagonal
    ([(shapes.Box([1.0, 1.0, 0.2]), [0, 0, 0], [1, 0, 0, 0]),
      (shapes.Sphere(0.1), [0.5 + 0.105 / math.sqrt(2), 0, 0.1 + 0.105 / math.sqrt(2)], [1, 0, 0, 0])],
     False, [0.005]),
    # sphere near a box's vertex, 4 mm away
    ([(shapes.Box([1.0, 1.0, 0.2]), [0, 0, 0], [1, 0, 0, 0]),
      (shapes.Sphere(0.1), (np.array([0.5, 0.5, 0.1]) + 0.104 / math.sqrt(3)).tolist(), [1, 0, 0, 0])],
     False, [0.004]),
    # a small box 3 mm above a large one: its 4 lower corners
    ([(shapes.Box([1.0, 1.0, 0.2]), [0, 0, 0], [1, 0, 0, 0]), (shapes.Box([0.2, 0.2, 0.1]), [0, 0, 0.153],
                                                              [1, 0, 0, 0])], False, [0.003] * 4),
    # two spheres 7 mm apart; an upright capsule's end 2 mm above a lying capsule (the SMC narrow phase tests
    # capsule ends only)
    ([(shapes.Sphere(0.1), [0, 0, 0], [1, 0, 0, 0]), (shapes.Sphere(0.2), [0.307, 0, 0], [1, 0, 0, 0])], False,
     [0.007]),
    ([(shapes.Capsule(0.05, 0.4, axis=[1, 0, 0]), [0, 0, 0], [1, 0, 0, 0]),
      (shapes.Capsule(0.05, 0.4, axis=[0, 0, 1]), [0, 0, 0.302], [1, 0, 0, 0])], False, [0.002]),
    # a wheel (one slice) 3 mm above a box's face, 4 mm from a box's edge
    ([(shapes.Box([1.0, 1.0, 0.2]), [0, 0, 0], [1, 0, 0, 0]),
      (shapes.Cylinder(0.3, 0.1, slices=1), [0, 0, 0.403], [1, 0, 0, 0])], False, [0.003]),
    ([(shapes.Box([1.0, 1.0, 0.2]), [0, 0, 0], [1, 0, 0, 0]),
      (shapes.Cylinder(0.3, 0.1, slices=1), [0.5 + 0.304 / math.sqrt(2), 0, 0.1 + 0.304 / math.sqrt(2)],
       [1, 0, 0, 0])], False, [0.004]),
    # a box's four corners 2 mm beside a wheel's flat side
    ([(shapes.Cylinder(0.3, 0.1, slices=1), [0, 0, 0], [1, 0, 0, 0]),
      (shapes.Box([0.1, 0.1, 0.1]), [0, 0.102, 0], [1, 0, 0, 0])], False, [0.002] * 4),
    # a pin 3 mm outside a sprocket's tooth tip (both gears), 3 mm inside a tooth gap's arc, a guide sphere
    # 3 mm from the lateral clearance
    ([(SPROCKET, [0, 0, 0], [1, 0, 0, 0]),
      (shapes.Capsule(0.02, 0.3), [0.273 * math.sin(math.pi / 10), 0, -0.273 * math.cos(math.pi / 10)],
       [1, 0, 0, 0])], False, [0.003] * 2),
    ([(SPROCKET, [0, 0, 0], [1, 0, 0, 0]), (shapes.Capsule(0.02, 0.3), [0, 0, -0.223], [1, 0, 0, 0])], False,
     [0.003] * 2),
    ([(SPROCKET, [0, 0, 0], [1, 0, 0, 0]), (shapes.Sphere(0.02), [0, 0.027, -0.1], [1, 0, 0, 0])], False,
     [0.003]),
])
def test_envelope_finds_separated_contacts_with_their_true_gap(specs, ground, gaps):
    system, nsc = _scene(specs, ground)
    _, m = _detect(system, nsc, system.q0, system.v0)
    got = sorted(nsc.c_phi[:m].tolist())
    # the envelope keeps contacts below twice its size: only those expected here
    assert len(got) == len(gaps), got
    np.testing.assert_allclose(got, sorted(gaps), atol=1e-12)


@pytest.mark.parametrize("quat", [[1, 0, 0, 0], TILT])
def test_envelope_finds_a_polyhedron_s_vertices_with_their_true_gap(quat):
    """A hull-like convex polyhedron (a wedge with a sloped nose) over the ground, its lowest vertex 4 mm up:
    every vertex within the envelope is found, each record with its vertex's true gap."""
    wedge = shapes.ConvexPolyhedron([[0.0, -0.3, 0.0], [0.8, -0.3, 0.0], [1.1, -0.3, 0.35], [0.0, -0.3, 0.4],
                                     [0.0, 0.3, 0.0], [0.8, 0.3, 0.0], [1.1, 0.3, 0.35], [0.0, 0.3, 0.4]])
    R = quat_to_matrix(np.asarray(quat, float))
    z = (R @ (wedge.vertices + np.asarray(wedge.pos)).T)[2]
    system, nsc = _scene([(wedge, [0, 0, 0.004 - z.min()], quat)], True, envelope=0.01)
    _, m = _detect(system, nsc, system.q0, system.v0)
    true_gaps = z - z.min() + 0.004
    got = sorted(nsc.c_phi[:m].tolist())
    assert m >= int(np.sum(true_gaps < 0.01)) >= 1
    for g in got:
        assert np.min(np.abs(true_gaps - g)) < 1e-12, (g, true_gaps)
    assert abs(got[0] - 0.004) < 1e-12


STEP = terrain.ProfileTerrain([terrain.Step(height=0.2, x=1.0)], material=STEEL)  # top z = 0.2 from x = 1
HALF_ROUND = terrain.ProfileTerrain([terrain.HalfRound(height=0.2, x=1.0)], material=STEEL)  # axis (1.2, 0)
DITCH = terrain.ProfileTerrain([terrain.Gap(width=0.5, depth=0.5, x=1.0)], material=STEEL)  # walls x = 1, 1.5
D45 = 1.0 / math.sqrt(2.0)
# a prism 0.6 x 0.6 x 0.2 m (polyhedron), its bottom face at z = -0.1 in the body frame
PRISM = shapes.ConvexPolyhedron([[x, y, z] for x in (-0.3, 0.3) for y in (-0.3, 0.3) for z in (-0.1, 0.1)])


@pytest.mark.parametrize(("specs", "ground", "gaps"), [
    # sphere 4 mm above the step's top
    ([(shapes.Sphere(0.1), [1.5, 0, 0.304], [1, 0, 0, 0])], STEP, [0.004]),
    # sphere 5 mm from the step's edge (a convex profile vertex), along the diagonal of its normal cone
    ([(shapes.Sphere(0.1), [1.0 - 0.105 * D45, 0, 0.2 + 0.105 * D45], [1, 0, 0, 0])], STEP, [0.005]),
    # sphere 6 mm from the ditch's near wall
    ([(shapes.Sphere(0.1), [1.106, 0, -0.3], [1, 0, 0, 0])], DITCH, [0.006]),
    # sphere 5 mm above the half-round's crest (an arc)
    ([(shapes.Sphere(0.1), [1.2, 0, 0.305], [1, 0, 0, 0])], HALF_ROUND, [0.005]),
    # a wheel slice 5 mm above the step's top
    ([(shapes.Cylinder(0.3, 0.1, slices=1), [1.5, 0, 0.505], [1, 0, 0, 0])], STEP, [0.005]),
    # box corners 3 mm above the step's top
    ([(shapes.Box([0.2, 0.3, 0.1]), [1.5, 0, 0.253], [1, 0, 0, 0])], STEP, [0.003] * 4),
    # a box across the step's edge, its bottom 3 mm above the top: two corners over the top, the edge line
    # against the bottom face at its two stations (the overhanging corners are 0.203 m above the low ground)
    ([(shapes.Box([0.4, 0.3, 0.1]), [1.0, 0, 0.253], [1, 0, 0, 0])], STEP, [0.003] * 4),
    # the same, nose up by 0.1 rad about the edge's line: the bottom face still 3 mm from the edge, its
    # corners out of the envelope (the face's normal inside the edge's normal cone: a line contact)
    ([(shapes.Box([0.4, 0.3, 0.1]), [1.0 - 0.053 * math.sin(0.1), 0, 0.2 + 0.053 * math.cos(0.1)],
       [math.cos(0.05), 0, -math.sin(0.05), 0])], STEP, [0.003] * 2),
    # a prism (polyhedron) across the step's edge, its bottom 4 mm above the top: two vertices and the two
    # stations of the edge line against its bottom face
    ([(PRISM, [1.0, 0, 0.304], [1, 0, 0, 0])], STEP, [0.004] * 4),
    # a box's bottom face 2 mm above the half-round's crest: the crest line (radius 0.2) at two stations
    ([(shapes.Box([0.2, 0.3, 0.1]), [1.2, 0, 0.252], [1, 0, 0, 0])], HALF_ROUND, [0.002] * 2),
])
def test_envelope_on_profile_terrain_finds_contacts_with_their_true_gap(specs, ground, gaps):
    """Steps, half-rounds and ditches (profile terrains): every record found on the inflated shapes, points,
    faces against the profile's edges and crests, is moved back onto the true shapes and has its true gap."""
    system, nsc = _scene(specs, ground)
    _, m = _detect(system, nsc, system.q0, system.v0)
    got = sorted(nsc.c_phi[:m].tolist())
    assert len(got) == len(gaps), got
    np.testing.assert_allclose(got, sorted(gaps), atol=1e-12)


def test_contacts_beyond_the_envelope_are_not_reported():
    system, nsc = _scene([(shapes.Sphere(0.1), [0, 0, 0.2], [1, 0, 0, 0])], True, envelope=0.01)
    _, m = _detect(system, nsc, system.q0, system.v0)
    assert m == 0


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_jacobian_rows_against_finite_differences(seed):
    """D_n v is the gap's rate along the motion q ⊕ t v (central differences), and the whole row D v the
    velocity of B's material point relative to A's at the contact point, in the contact frame."""
    rng = np.random.default_rng(seed)
    tilt = quat_from_axis_angle(rng.normal(size=3), rng.uniform(0.0, 0.3)).tolist()
    specs = [(shapes.Box([1.0, 1.0, 0.2]), [0, 0, 0.1 + 0.004], tilt),
             (shapes.Box([0.3, 0.2, 0.1]), [0.05, 0.02, 0.2 + 0.05 + 0.01], TILT),
             (shapes.Sphere(0.08), [-0.3, -0.2, 0.2 + 0.08 + 0.01], [1, 0, 0, 0]),
             (shapes.Capsule(0.04, 0.3), [0.3, -0.3, 0.2 + 0.04 + 0.02], tilt)]
    system, nsc = _scene(specs, True, envelope=0.05)
    _check_rows(system, nsc, rng, 4)


@pytest.mark.filterwarnings("ignore:.*no narrow phase for shape pairs")
@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_jacobian_rows_on_profile_terrain_against_finite_differences(seed):
    """As above on a step's edge and a half-round's crest: faces against terrain lines (boxes, a polyhedron),
    corners and a sphere. The faces on lines are tilted about the line only: a face at an angle to the line
    has a gap that also changes as the station's cut slides along the line, which is not a material point's
    motion (the row is the material point's velocity, checked exactly in ``_check_rows``)."""
    rng = np.random.default_rng(seed)

    def on_line(axis_x, axis_z, reach, lo, hi, y=0.0):
        """(pos, quat) of a body turned by a in [lo, hi] about y whose bottom face lies reach from (x, z)."""
        a = rng.uniform(lo, hi)
        return [axis_x + reach * math.sin(a), y, axis_z + reach * math.cos(a)], [math.cos(a / 2), 0, math.sin(a / 2), 0]

    ground = terrain.ProfileTerrain([terrain.Step(height=0.2, x=1.0), terrain.HalfRound(height=0.2, x=3.0)],
                                    material=STEEL)
    specs = [(shapes.Box([0.4, 0.3, 0.1]), *on_line(1.0, 0.2, 0.05 + 0.005, -0.08, 0.0)),  # nose up
             (PRISM, *on_line(1.0, 0.2, 0.1 + 0.005, -0.08, 0.0, y=1.0)),
             (shapes.Box([0.2, 0.3, 0.1]), *on_line(3.2, 0.0, 0.2 + 0.05 + 0.004, -0.08, 0.08)),  # the crest
             (shapes.Sphere(0.1), [1.0 - 0.105 * D45, -1.0, 0.2 + 0.105 * D45], [1, 0, 0, 0])]
    system, nsc = _scene(specs, ground, envelope=0.05)
    _check_rows(system, nsc, rng, 7)


def _check_rows(system, nsc, rng, at_least):
    q = system.q0.copy()
    v = rng.normal(scale=0.5, size=q.shape[:1] + (6,))
    keys, m = _detect(system, nsc, q, v)
    assert m >= at_least
    Dv = np.empty(3 * m)
    NK.gather_D(m, nsc.c_body, nsc.c_D, NK.NO_PERM, v.ravel(), Dv)
    frames, points, bodies = nsc.c_frame[:m].copy(), nsc.c_point[:m].copy(), nsc.c_body[:m].copy()
    pos, R = system.kin.pos.copy(), system.kin.R.copy()
    # material point velocities
    for i in range(m):
        rel = np.zeros(3)
        for side, sg in ((0, -1.0), (1, 1.0)):
            b = bodies[i, side]
            if b >= 0:
                w = R[b] @ v[b, 3:]
                rel += sg * (v[b, :3] + np.cross(w, points[i] - pos[b]))
        np.testing.assert_allclose(Dv[3 * i:3 * i + 3], frames[i] @ rel, atol=1e-12)
    # the normal row against the gap's rate
    eps = 1e-6
    phis = []
    for s in (eps, -eps):
        qs = np.empty_like(q)
        MK.advance_positions(q, v, s, qs)
        ks, _ = _detect(system, nsc, qs, v)
        phis.append({k: nsc.c_phi[i] for k, i in ks.items()})
    for k, i in keys.items():
        rate = (phis[0][k] - phis[1][k]) / (2 * eps)
        assert abs(rate - Dv[3 * i]) < 1e-6 * (1 + abs(rate)), (k, rate, Dv[3 * i])


# --------------------------------------------------------------------------- refused input
def test_unsupported_pairs_and_terrains_are_refused_by_name():
    m = td.Model()
    a = m.add_body("a", mass=1.0, inertia=[1, 1, 1])
    b = m.add_body("b", mass=1.0, inertia=[1, 1, 1], pos=[0, 0, 1])
    nsc = NscContact(m)
    nsc.add_shape(a, shapes.Box([1, 1, 1]))
    nsc.add_shape(b, shapes.Segment([0, 0, 0], [1, 0, 0]))
    with pytest.raises(ValueError, match="'segment' is not supported"):
        AbsoluteSystem(m, providers=[nsc])
    with pytest.raises(ValueError, match="HeightField.*mesh terrains"):
        NscContact(m, terrain=terrain.HeightField([0.0, 1.0], [0.0, 1.0], np.zeros((2, 2))))
    for kw, word in (({"envelope": 0.0}, "envelope"), ({"recovery_speed": -1}, "recovery_speed"),
                     ({"restitution": 1.5}, "restitution"), ({"restitution": "chrono"}, "restitution")):
        with pytest.raises(ValueError, match=word):
            NscContact(m, **kw)


def test_the_stepper_needs_an_nsc_contact_and_valid_options():
    m = td.Model()
    ball = m.add_body("ball", mass=1.0, inertia=[1e-3] * 3, pos=[0, 0, 1])
    with pytest.raises(ValueError, match="NscContact"):
        td.Simulation(m, integrator="nsc-euler")
    nsc = NscContact(m, terrain=terrain.Flat())
    nsc.add_shape(ball, shapes.Sphere(0.1))
    for kw, word in (({"contact_solver": "gs"}, "contact_solver"), ({"friction": "viscous"}, "friction"),
                     ({"contact_tolerance": 0}, "contact_tolerance"),
                     ({"contact_solver": "psor", "delassus": "operator"}, "dense")):
        with pytest.raises(ValueError, match=word):
            td.Simulation(m, integrator="nsc-euler", providers=[nsc], **kw)
    # another stepper would silently step through the ground
    sim = td.Simulation(m, integrator="euler-implicit-linearized", providers=[nsc])
    with pytest.raises(ValueError, match="nsc-euler"):
        sim.step()


@pytest.mark.parametrize(("solver", "delassus"), [("psor", "dense"), ("bb", "operator"), ("apgd", "operator")])
def test_joint_and_contact_in_one_problem_dense_or_operator(solver, delassus):
    """A pinned rod resting on the ground (frictionless): contact and pin share the weight equally whether N
    is formed or applied through the factorisation."""
    L, r, mass = 1.0, 0.05, 4.0
    m = td.Model()
    rod = m.add_body("rod", mass=mass, inertia=[0.01, mass * L * L / 12, mass * L * L / 12], pos=[L / 2, 0, r])
    m.add_joint(td.Revolute(m.ground, rod, point=[0, 0, r], axis=[0, 1, 0], name="pin"))
    mat = Material("ice", friction=0.0)
    nsc = NscContact(m, terrain=terrain.Flat(material=mat))
    nsc.add_shape(rod, shapes.Sphere(r, pos=[L / 2, 0, 0]), material=mat)
    sim = td.Simulation(m, integrator="nsc-euler", step=1e-3, providers=[nsc], monitor=False,
                        contact_solver=solver, delassus=delassus, contact_tolerance=1e-10)
    for _ in range(100):
        sim.step()
    assert nsc.body_out[0, 2] == pytest.approx(0.5 * mass * 9.81, rel=1e-6)
    assert sim.integrator.counters["contact_unconverged"] == 0


def _sphere_grid(n=8):
    m = td.Model()
    nsc = NscContact(m, terrain=terrain.Flat(material=STEEL))
    for i in range(n):
        for j in range(n):
            b = m.add_body(f"s{i}_{j}", mass=1.0, inertia=[4e-3] * 3, pos=[0.2 * i, 0.2 * j, 0.1])
            nsc.add_shape(b, shapes.Sphere(0.1), material=STEEL)
    return m, nsc


def test_operator_and_dense_delassus_agree_beyond_the_dense_limit():
    """64 touching spheres on the ground: 176 contacts (above the 150 of delassus="auto"'s dense limit); they
    rest, and the operator path (one solve per product) gives the dense path's velocities."""
    states = []
    for delassus in ("operator", "dense"):
        m, nsc = _sphere_grid()
        sim = td.Simulation(m, integrator="nsc-euler", step=1e-3, providers=[nsc], monitor=False,
                            contact_solver="apgd", delassus=delassus)
        q0 = sim.state.q.copy()
        for _ in range(20):
            sim.step()
        assert sim.integrator.last["contacts"] == 176
        assert np.abs(sim.state.q[:, :3] - q0[:, :3]).max() < 1e-10
        states.append(sim.state)
    # the same solution to a few times the contact tolerance (1e-9 m/s)
    np.testing.assert_allclose(states[0].v, states[1].v, atol=5e-9)


def test_a_copied_state_replays_the_same_steps():
    """Warm-start impulses live in State.extra: stepping a copy of a state repeats the trajectory exactly."""
    m, nsc = _sphere_grid(3)
    sim = td.Simulation(m, integrator="nsc-euler", step=1e-3, providers=[nsc], monitor=False)
    sim.state.v[:, 0] = np.linspace(-0.5, 0.5, 9)  # sliding into each other
    for _ in range(10):
        sim.step()
    saved = sim.state.copy()
    runs = []
    for _ in range(2):
        sim.state = saved.copy()
        for _ in range(10):
            sim.step()
        runs.append(sim.state.q.copy())
    np.testing.assert_array_equal(runs[0], runs[1])
    assert len(saved.extra["contact.key"]) > 0
