"""Contact force kernel: generalized forces and exact Jacobians against finite differences.

Records of every kind (point, line, plane, disc targets; fixed and line-cut
witness points; convex and internal), every law (Hertz and Hooke from
materials or coefficients, Kelvin-Voigt, Winkler), stick and slip, and
contacts with the ground on either side, on random poses and velocities.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trackdyn.contact import _kernels as CK
from trackdyn.contact._buffers import new_outputs, new_records
from trackdyn.mbs import _kernels as MK
from trackdyn.testing.fd import fd_position_jacobian, fd_velocity_jacobian, random_state

seeds = st.integers(0, 2**31 - 1)
MASS = np.array([3.0, 5.0])


def unit(rng):
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def kinematics(q, v):
    nb = q.shape[0]
    pos, R, vel, om = np.zeros((nb + 1, 3)), np.zeros((nb + 1, 3, 3)), np.zeros((nb + 1, 3)), np.zeros((nb + 1, 3))
    MK.body_kinematics(q, v, pos, R, vel, om)
    return pos, R, vel, om


def pair_table(law):
    par = np.zeros((1, CK.N_PAR))
    par[0, CK.P_MU] = 0.6
    par[0, CK.P_E] = 2e6
    par[0, CK.P_G] = 7e5
    par[0, CK.P_CDAMP] = 0.8
    par[0, CK.P_KN] = 3e4
    par[0, CK.P_KT] = 2e4
    par[0, CK.P_GN] = 40.0
    par[0, CK.P_GT] = 30.0
    par[0, CK.P_VSLIP] = 0.3
    par[0, CK.P_VCHAR] = 1.0
    par[0, CK.P_RAMP] = 0.02  # the random penetrations (0.01-0.03 m) fall on both sides
    return np.array([law], dtype=np.int64), par


def make_record(rng, kind, pmode, conc, sides, lside=0, state=None):
    """A record with positive penetration at a random state of two bodies (or at ``state`` = (q, v))."""
    q, v = random_state(rng, 2, pos_scale=0.5) if state is None else state
    bA, bB = sides
    pos, R, _, _ = kinematics(q, v)

    def to_body(b, x):
        return R[b].T @ (x - pos[b])

    def dir_body(b, x):
        return R[b].T @ x

    rec = new_records(1)
    rec.kind[0], rec.pmode[0], rec.conc[0] = kind, pmode, conc
    rec.body[0] = (bA, bB)
    ra = 0.05 + 0.1 * rng.random() if kind != CK.K_DN else 0.3
    rb = 0.1 + 0.1 * rng.random()
    if kind == CK.K_PN:
        rb = 0.0
    depth = 0.01 + 0.02 * rng.random()
    if pmode == CK.PM_FIXED:
        c = rng.normal(size=3) * 0.3
        rec.pa[0] = to_body(bA, c)
    else:
        # a line on side `lside` cut by a plane of the other side at c
        bl = bA if lside == 0 else bB
        bp = bB if lside == 0 else bA
        c = rng.normal(size=3) * 0.3
        e = unit(rng)
        m = unit(rng)
        if abs(m @ e) < 0.3:
            m = (m + e) / np.linalg.norm(m + e)
        rec.lside[0] = lside
        rec.pa[0] = to_body(bl, c - 0.7 * e)
        rec.da[0] = dir_body(bl, e)
        rec.sp[0] = to_body(bp, c + 0.4 * np.cross(m, unit(rng)))
        rec.sn[0] = dir_body(bp, m)
    if kind == CK.K_PP:
        u = unit(rng)
        L = ra + rb - depth if conc > 0 else rb - ra + depth
        cB = c + L * u
        rec.tb[0] = to_body(bB, cB)
    elif kind == CK.K_PL:
        e = unit(rng)
        u = unit(rng)
        u -= (u @ e) * e
        u /= np.linalg.norm(u)
        L = ra + rb - depth if conc > 0 else rb - ra + depth
        a = c - L * u + 0.3 * rng.normal() * e
        rec.tb[0] = to_body(bB, a)
        rec.te[0] = dir_body(bB, e)
    elif kind == CK.K_PN:
        nB = unit(rng)
        P = c - (ra - depth) * nB + 0.2 * np.cross(nB, unit(rng))
        rec.tb[0] = to_body(bB, P)
        rec.te[0] = dir_body(bB, nB)
    else:
        ax = unit(rng)
        nB = unit(rng)
        if abs(nB @ ax) > 0.8:
            nB = np.cross(ax, unit(rng))
            nB /= np.linalg.norm(nB)
        W = np.sqrt(1 - (nB @ ax) ** 2)
        P = c - (ra * W - depth) * nB + 0.2 * np.cross(nB, unit(rng))
        rec.da[0] = dir_body(bA, ax)
        rec.tb[0] = to_body(bB, P)
        rec.te[0] = dir_body(bB, nB)
    rec.ra[0], rec.rb[0] = ra, rb
    rec.reff[0] = 0.07
    rec.weight[0] = 0.5 + rng.random()
    rec.area[0] = 0.02
    rec.wtype[0] = CK.W_POINT
    rec.key[0] = (7, 11)
    return rec, q, v


def evaluate(rec, q, v, law, hist, h):
    pl, pp = pair_table(law)
    out = new_outputs(1)
    pos, R, vel, om = kinematics(q, v)
    f = np.zeros((2, 6))
    Kx, Kv = np.zeros((12, 12)), np.zeros((12, 12))
    hk = np.array([[7, 11]], dtype=np.int64)
    active = CK.record_element(0, rec, out, pl, pp, MASS, hk, hist, pos, R, vel, om, v, h, f, Kx, Kv)
    return active, f, Kx, Kv, out


def check(rec, q, v, law, hist, h, bodies):
    active, f, Kx, Kv, out = evaluate(rec, q, v, law, hist, h)
    assert active, "the test geometry must be in contact"

    def Q(qq, vv):
        _, ff, _, _, _ = evaluate(rec, qq, vv, law, hist, h)
        return np.concatenate([ff[b] if b >= 0 else np.zeros(6) for b in bodies])

    fx = fd_position_jacobian(Q, q, v, bodies, eps=1e-7)
    fv = fd_velocity_jacobian(Q, q, v, bodies, eps=1e-7)
    for b_side, b in enumerate(bodies):
        if b < 0:
            Kx[6 * b_side:6 * b_side + 6] = 0.0
            Kx[:, 6 * b_side:6 * b_side + 6] = 0.0
            Kv[6 * b_side:6 * b_side + 6] = 0.0
            Kv[:, 6 * b_side:6 * b_side + 6] = 0.0
    sx = max(np.abs(fx).max(), 1.0)
    sv = max(np.abs(fv).max(), 1.0)
    np.testing.assert_allclose(Kx, fx, atol=2e-5 * sx, rtol=0)
    np.testing.assert_allclose(Kv, fv, atol=2e-5 * sv, rtol=0)
    return out


GEOMS = [
    ("pp", CK.K_PP, CK.PM_FIXED, 1, 0), ("pp-int", CK.K_PP, CK.PM_FIXED, -1, 0),
    ("pl", CK.K_PL, CK.PM_FIXED, 1, 0), ("pl-int", CK.K_PL, CK.PM_FIXED, -1, 0),
    ("pn", CK.K_PN, CK.PM_FIXED, 1, 0), ("dn", CK.K_DN, CK.PM_FIXED, 1, 0),
    ("line0-pl-int", CK.K_PL, CK.PM_LINE, -1, 0), ("line1-pn", CK.K_PN, CK.PM_LINE, 1, 1),
    ("line0-pn", CK.K_PN, CK.PM_LINE, 1, 0), ("line1-pp", CK.K_PP, CK.PM_LINE, 1, 1),
]
SIDES = [(0, 1), (-1, 1), (0, -1)]


@pytest.mark.parametrize("geom", GEOMS, ids=[g[0] for g in GEOMS])
@pytest.mark.parametrize("sides", SIDES, ids=["bodies", "ground-A", "ground-B"])
@given(seed=seeds)
def test_geometry_kinds(geom, sides, seed):
    _, kind, pmode, conc, lside = geom
    if pmode == CK.PM_LINE and sides != (0, 1):
        return  # line cuts between a body and the ground are covered by 'ground-*' of PM_FIXED + below
    rng = np.random.default_rng(seed)
    rec, q, v = make_record(rng, kind, pmode, conc, sides, lside)
    v *= 0.2  # keep the normal force positive (damping)
    check(rec, q, v, CK.L_HOOKE_GIVEN, np.zeros((1, 3)), 1e-3, sides)


LAWS = [CK.L_HERTZ, CK.L_HERTZ_GIVEN, CK.L_HOOKE, CK.L_HOOKE_GIVEN, CK.L_KV, CK.L_WINKLER]


@pytest.mark.parametrize("law", LAWS, ids=CK.LAW_NAMES)
@pytest.mark.parametrize("regime", ["stick", "slip"])
@given(seed=seeds)
def test_laws(law, regime, seed):
    rng = np.random.default_rng(seed)
    kind = [CK.K_PP, CK.K_PL, CK.K_PN, CK.K_DN][seed % 4]
    rec, q, v = make_record(rng, kind, CK.PM_FIXED, 1, (0, 1))
    v *= 0.05 if regime == "stick" else 0.3
    if law == CK.L_WINKLER:
        rec.wtype[0] = [CK.W_POINT, CK.W_DISC, CK.W_SPHERE][seed % 3]
    # a history in the contact plane, small (stick) or large (slip)
    n = evaluate(rec, q, v, law, np.zeros((1, 3)), 1e-3)[4].normal[0]
    t = np.cross(n, unit(rng))
    hist = (t / np.linalg.norm(t) * (1e-6 if regime == "stick" else 1.0))[None] + 1e-3 * n
    if regime == "stick":
        v *= 0.01
    out = check(rec, q, v, law, hist, 1e-3, (0, 1))
    if law not in (CK.L_KV, CK.L_WINKLER):
        ft = np.linalg.norm(out.ft[0])
        slipping = bool(np.isclose(ft, 0.6 * out.fn[0], rtol=1e-9))
        assert slipping == (regime == "slip")


def test_line_cut_with_ground():
    """A terrain edge (line on the ground) cut by a box's station plane, against a box face."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        rec, q, v = make_record(rng, CK.K_PN, CK.PM_LINE, 1, (0, 1), lside=0)
        # rebuild with the ground as side A: line in world coordinates
        pos, R, _, _ = kinematics(q, v)
        rec.body[0] = (-1, 1)
        rec.pa[0] = R[0] @ rec.pa[0] + pos[0]
        rec.da[0] = R[0] @ rec.da[0]
        v *= 0.2
        check(rec, q, v, CK.L_HERTZ, np.zeros((1, 3)), 1e-3, (-1, 1))


@pytest.mark.parametrize("coupled", [True, False], ids=["coupling-block", "diagonal-only"])
@given(seed=seeds)
def test_step_stage_scatters_the_sum_of_the_record_elements(coupled, seed):
    """The step's contact stage adds up the elements of consecutive records of one body pair before it scatters
    them: the KKT values, Dv and Kxv it writes are those of every record's own element (as used in the step),
    whatever the grouping (runs of one pair, a pair coming back later, ground on either side, a record without
    force inside a run)."""
    rng = np.random.default_rng(seed)
    q, v = random_state(rng, 2, pos_scale=0.5)
    v = 0.2 * v
    layout = [(0, 1), (0, 1), (0, 1), (0, -1), (0, -1), (-1, 1), (0, 1)]
    kinds = [CK.K_PN, CK.K_DN, CK.K_PP, CK.K_PL]
    rec = new_records(len(layout))
    for i, sides in enumerate(layout):
        kind = CK.K_PN if i == 1 else kinds[rng.integers(4)]
        one, _, _ = make_record(rng, kind, CK.PM_FIXED, 1, sides, state=(q, v))
        for name in rec._fields:
            getattr(rec, name)[i] = getattr(one, name)[0]
        rec.key[i] = (7, 11 + i)
        both = sides[0] >= 0 and sides[1] >= 0
        rec.pslot[i] = 0 if (both and coupled) else -1
        rec.ptrans[i] = 0
    rec.ra[1] = 0.0  # a plane record out of contact inside the first run
    pl, pp = pair_table(CK.L_HERTZ)
    hk = np.array([[7, 11 + i] for i in range(len(layout))], dtype=np.int64)
    hd = 1e-4 * rng.normal(size=(len(layout), 3))
    pos, R, vel, om = kinematics(q, v)
    h, cK, cD = 1e-3, 0.7e-6, 0.9e-3
    # the dense 12 x 12 matrix of the two bodies, row-major, upper triangle addressed by the slot maps
    idx = np.arange(144).reshape(12, 12)
    body_slot = np.stack([idx[6 * b:6 * b + 6, 6 * b:6 * b + 6] for b in range(2)]).astype(np.int64)
    pair_slot = idx[None, :6, 6:].astype(np.int64).copy()
    f, Dv, Kxv, data = np.zeros((2, 6)), np.zeros((2, 6)), np.zeros((2, 6)), np.zeros(144)
    out = new_outputs(len(layout))
    # the kernel's work space holds garbage from earlier calls: it must not leak into the result
    work_S, work_Kx, work_Kv = rng.normal(size=(10, 3, 12)), rng.normal(size=(12, 12)), rng.normal(size=(12, 12))
    CK.contact_forces(len(layout), rec, out, pl, pp, MASS, hk, hd, pos, R, vel, om, v, h, cK, cD, True, body_slot,
                      pair_slot, f, Dv, data, Kxv, work_S, work_Kx, work_Kv)
    assert out.fn[1] == 0.0 and np.count_nonzero(out.fn > 0) == len(layout) - 1
    # reference: each record's own element in the bodies' matrix
    Kx, Kv, f_ref = np.zeros((12, 12)), np.zeros((12, 12)), np.zeros((2, 6))
    for i, sides in enumerate(layout):
        kx, kv = np.zeros((12, 12)), np.zeros((12, 12))
        CK.record_element(i, rec, new_outputs(len(layout)), pl, pp, MASS, hk, hd, pos, R, vel, om, v, h, f_ref,
                          kx, kv, False)
        g = np.concatenate([np.arange(6 * b, 6 * b + 6) if b >= 0 else np.full(6, -1) for b in sides])
        keep = g >= 0
        Kx[np.ix_(g[keep], g[keep])] += kx[np.ix_(keep, keep)]
        Kv[np.ix_(g[keep], g[keep])] += kv[np.ix_(keep, keep)]
    Kx_s, Kv_s = 0.5 * (Kx + Kx.T), 0.5 * (Kv + Kv.T)
    stored = np.zeros((12, 12), bool)
    stored[:6, :6] = stored[6:, 6:] = True
    stored[:6, 6:] = coupled
    stored &= np.triu(np.ones((12, 12), bool))
    expect = np.where(stored, -cK * Kx_s - cD * Kv_s, 0.0)
    scale = max(cK * np.abs(Kx).max(), cD * np.abs(Kv).max())
    np.testing.assert_allclose(data.reshape(12, 12), expect, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(f, f_ref, rtol=0, atol=1e-12 * np.abs(f_ref).max())
    # Dv: the stored part of sym(Kv) times v; Kxv: the coupling left out of the matrix, sym(Kx) times v
    full = stored | stored.T
    vg = v.reshape(12)
    np.testing.assert_allclose(Dv.reshape(12), np.where(full, Kv_s, 0.0) @ vg, rtol=0,
                               atol=1e-12 * np.abs(Kv).max() * np.abs(vg).max())
    off = np.zeros((12, 12), bool)
    off[:6, 6:] = off[6:, :6] = not coupled
    np.testing.assert_allclose(Kxv.reshape(12), np.where(off, Kx_s, 0.0) @ vg, rtol=0,
                               atol=1e-12 * np.abs(Kx).max() * np.abs(vg).max())
