"""Penetration area of a wheel under a slice segment (agapov-kovalev-pogorelov eq. 1-3)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad

from trackdyn.contact.massless._area import EXACT, PARABOLIC, depth_area, segment_area


def eq3(R, delta):
    """Paper eq. 3: S = (4/3) sqrt(2R) δ^{3/2}."""
    return 4.0 / 3.0 * math.sqrt(2.0 * R) * delta ** 1.5


@pytest.mark.parametrize("R, delta", [(0.365, 0.0254), (0.06, 0.0033), (0.3, 0.1), (0.05, 1e-5)])
def test_parabolic_law_is_eq3_and_exact_law_is_the_circular_segment(R, delta):
    L = 10.0  # an uncut segment: the chord lies well inside it
    S_p = segment_area(PARABOLIC, R, R - delta, 5.0, L, -1.0, -1.0)[0]
    assert S_p == pytest.approx(eq3(R, delta), rel=1e-12)
    assert depth_area(PARABOLIC, R, delta)[0] == pytest.approx(eq3(R, delta), rel=1e-12)
    # exact: R² acos(d/R) - d sqrt(R² - d²) (the closed-form circular segment)
    d = R - delta
    S_closed = R * R * math.acos(d / R) - d * math.sqrt(R * R - d * d)
    S_e = segment_area(EXACT, R, d, 5.0, L, -1.0, -1.0)[0]
    assert S_e == pytest.approx(S_closed, rel=1e-10)
    assert depth_area(EXACT, R, delta)[0] == pytest.approx(S_closed, rel=1e-10)
    # eq. 3 is its small-penetration form: S = eq3 (1 - 3δ/(20R) + O((δ/R)²))
    e = delta / R
    assert S_e / eq3(R, delta) == pytest.approx(1.0 - 0.15 * e, abs=0.1 * e * e + 1e-12)


@pytest.mark.parametrize("law", [EXACT, PARABOLIC])
def test_areas_of_a_line_cut_into_segments_add_up(law):
    """Collinear pieces own disjoint strips: their areas sum to the uncut one (no corner limits)."""
    R, d, x = 0.3, 0.26, 0.47
    whole = segment_area(law, R, d, x, 2.0, -1.0, -1.0)[0]
    cuts = [0.0, 0.31, 0.4, 0.55, 0.6, 2.0]
    parts = sum(segment_area(law, R, d, x - a, b - a, -1.0, -1.0)[0] for a, b in zip(cuts, cuts[1:]))
    assert parts == pytest.approx(whole, rel=1e-12)


def test_a_convex_corner_is_not_counted_twice():
    """Wheel over a right-angle nose: tread and riser split the overlap along the bisector, without overlap."""
    R = 0.1
    cx, cz = 0.03, 0.085  # centre relative to the nose at the origin; tread z = 0 (x > 0), riser x = 0 (z < 0)
    H = 0.5
    # tread: from the nose along +x, outward normal +z, bisector slope 1 at its start
    S_tread = segment_area(EXACT, R, cz, cx, 5.0, 1.0, -1.0)[0]
    # riser: from (0, -H) up to the nose, outward normal -x; the centre lies past its line (d < 0)
    S_riser = segment_area(EXACT, R, -cx, H + cz, H, -1.0, 1.0)[0]

    def tread_column(x):  # circle ∩ {-x < z < 0} at x: nearer the tread than the riser
        h = math.sqrt(max(R * R - (x - cx) ** 2, 0.0))
        return max(0.0, min(cz + h, 0.0) - max(cz - h, -x))

    def riser_row(z):  # circle ∩ {0 < x < -z} at z
        h = math.sqrt(max(R * R - (z - cz) ** 2, 0.0))
        return max(0.0, min(cx + h, -z) - max(cx - h, 0.0))

    def overlap(x):  # circle ∩ {x > 0, z < 0}
        h = math.sqrt(max(R * R - (x - cx) ** 2, 0.0))
        return max(0.0, min(cz + h, 0.0) - max(cz - h, -H))

    assert S_tread == pytest.approx(quad(tread_column, 0.0, cx + R, points=[cx], limit=200)[0], rel=1e-7)
    # the riser counts the rows its line cuts (|z - cz| <= sqrt(R² - d²)); the circle's cap wholly past
    # the line (deep in the corner) is left out
    w = math.sqrt(R * R - cx * cx)
    assert S_riser == pytest.approx(quad(riser_row, cz - w, 0.0, limit=200)[0], rel=1e-7)
    true = quad(overlap, 0.0, cx + R, points=[cx], limit=200)[0]
    assert true * 0.97 < S_tread + S_riser <= true * (1 + 1e-9)


@given(seed=st.integers(0, 2 ** 31 - 1))
@settings(max_examples=60)
def test_partial_derivatives_match_finite_differences(seed):
    rng = np.random.default_rng(seed)
    law = int(rng.integers(0, 2))
    R = rng.uniform(0.05, 0.5)
    args = [R, rng.uniform(-0.99, 0.99) * R, rng.uniform(-R, 1.5 * R), rng.uniform(0.05, 1.0),
            rng.choice([-1.0, rng.uniform(0.1, 3.0)]), rng.choice([-1.0, rng.uniform(0.1, 3.0)])]
    S = segment_area(law, *args)
    eps = 1e-7
    for i, col in ((1, 1), (2, 2), (3, 3), (4, 4), (5, 5)):
        if i >= 4 and args[i] < 0:
            continue
        ap, am = list(args), list(args)
        ap[i] += eps
        am[i] -= eps
        fd = (segment_area(law, *ap)[0] - segment_area(law, *am)[0]) / (2 * eps)
        assert abs(fd - S[col]) <= 1e-5 * max(1.0, abs(fd)) + 1e-9, (i, fd, S[col])


@given(seed=st.integers(0, 2 ** 31 - 1))
@settings(max_examples=40)
def test_depth_area_derivative_matches_finite_differences(seed):
    """dS/dD of the irregularity area, on both sides of the half-disc cap of the exact law (D = R)."""
    rng = np.random.default_rng(seed)
    law = int(rng.integers(0, 2))
    R = rng.uniform(0.03, 0.5)
    D = rng.uniform(0.01, 2.0) * R
    if abs(D - R) < 1e-5 * R:
        D += 2e-5 * R
    eps = 1e-7 * R
    fd = (depth_area(law, R, D + eps)[0] - depth_area(law, R, D - eps)[0]) / (2 * eps)
    assert abs(fd - depth_area(law, R, D)[1]) <= 1e-6 * max(R, abs(fd))


def test_exact_depth_area_levels_off_at_the_half_disc():
    R = 0.06
    assert depth_area(EXACT, R, R)[0] == pytest.approx(0.5 * math.pi * R * R, rel=1e-12)
    assert depth_area(EXACT, R, 1.3 * R) == (pytest.approx(0.5 * math.pi * R * R, rel=1e-12), 0.0)
    # continuous at the cap from below
    assert depth_area(EXACT, R, R * (1 - 1e-9))[0] == pytest.approx(0.5 * math.pi * R * R, rel=1e-8)
