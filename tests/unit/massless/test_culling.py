"""The cheap tests that decide whether the massless kernels call a contact routine at all."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from trackdyn.massless import _kernels as K


def _point_segment_distance(X, a, b):
    d = b - a
    s = np.clip(np.dot(X - a, d) / np.dot(d, d), 0.0, 1.0)
    return np.linalg.norm(X - (a + s * d))


@given(seed=st.integers(0, 2 ** 31 - 1), n=st.integers(1, 12))
@settings(max_examples=60, deadline=None)
def test_segments_near_is_the_point_segment_distance(seed, n):
    """``_segments_near`` (hull planes are skipped when it is False) against the brute-force distance."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, 3))
    b = a + rng.normal(size=(n, 3))
    L = np.linalg.norm(b - a, axis=1)
    t = (b - a) / L[:, None]
    X = rng.normal(scale=2.0, size=3)
    dist = min(_point_segment_distance(X, a[j], b[j]) for j in range(n))
    for r in (0.5 * dist, 0.999 * dist, 1.001 * dist, 2.0 * dist):
        assert K._segments_near((X[0], X[1], X[2]), r, a, t, L, n) == (dist <= r)
    assert not K._segments_near((X[0], X[1], X[2]), 10.0, a, t, L, 0)  # no segment: nothing near
