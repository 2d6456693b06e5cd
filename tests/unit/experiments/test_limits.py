"""Limit searches against an exact oracle: a trial that passes below a known threshold."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trackdyn.experiments.limits import bisect_search, limit_search, stepped_search, values_search


def oracle(threshold, log=None):
    def trial(v):
        if log is not None:
            log.append(v)
        return v <= threshold, {"seen": v}
    return trial


@given(st.integers(0, 10_000), st.integers(1, 8))
def test_bisect_brackets_the_threshold_within_tol(seed, k):
    lo, hi = 0.2, 1.0
    tol = 0.1 / 2 ** k
    thr = lo + (hi - lo) * ((seed * 7919) % 10_007) / 10_007.0
    log = []
    s = bisect_search(oracle(thr, log), lo, hi, tol)
    assert s.status == "found"
    a, b = s.bracket
    assert a <= thr < b
    assert b - a <= tol * (1 + 1e-9)
    assert s.limit == a
    # cost: lo, hi, then one halving per bracket width
    assert len(log) == 2 + math.ceil(math.log2((hi - lo) / tol) - 1e-12)
    assert len(set(log)) == len(log)  # no value tried twice


@given(st.integers(0, 10_000))
def test_stepped_finds_the_last_increment_below_the_threshold(seed):
    start, inc, stop = 0.3, 0.02, 0.9
    thr = start + (stop - start) * (seed % 997) / 997.0
    s = stepped_search(oracle(thr), start, inc, stop)
    k = math.floor((thr - start) / inc + 1e-9)
    assert s.status == "found"
    assert s.limit == pytest.approx(start + k * inc)
    assert s.bracket[1] == pytest.approx(start + (k + 1) * inc)
    assert [t.passed for t in s.trials] == [True] * (k + 1) + [False]
    assert s.first_failure.value == pytest.approx(s.bracket[1])
    assert s.last_success.value == pytest.approx(s.limit)


def test_out_of_range_outcomes():
    s = bisect_search(oracle(0.1), 0.2, 1.0, 0.01)
    assert (s.status, s.limit, s.bracket) == ("below-range", None, (None, 0.2))
    s = bisect_search(oracle(5.0), 0.2, 1.0, 0.01)
    assert (s.status, s.limit, s.bracket) == ("above-range", 1.0, (1.0, None))
    assert len(s.trials) == 2
    s = stepped_search(oracle(5.0), 0.2, 0.3, 0.9)
    assert s.status == "above-range" and s.limit == pytest.approx(0.8)
    s = values_search(oracle(0.45), [0.5, 0.3, 0.4])
    assert [t.value for t in s.trials] == [0.3, 0.4, 0.5] and s.limit == 0.4 and s.status == "found"


def test_a_non_monotonic_trial_is_visible_in_the_trials():
    # passes at 0.5 but not at 0.4: the bracket is the largest pass below the smallest failure
    s = values_search(lambda v: (v != 0.4, {}), [0.3, 0.4, 0.5])
    assert s.limit == 0.3 and s.bracket == (0.3, 0.4)
    assert [t.value for t in s.trials] == [0.3, 0.4]


@pytest.mark.parametrize("kw, msg", [
    ({"method": "bisect", "lo": 0.5, "hi": 0.4, "tol": 0.01}, "hi = 0.4 must exceed lo"),
    ({"method": "bisect", "lo": 0.1, "hi": 0.4, "tol": 0.0}, "tol = 0.0"),
    ({"method": "bisect", "lo": 0.1, "hi": 0.4}, "needs tol"),
    ({"method": "stepped", "start": 0.5, "increment": 0.1, "stop": 0.1}, "below start"),
    ({"method": "values", "values": []}, "values is empty"),
    ({"method": "golden", "lo": 0.1, "hi": 0.4, "tol": 0.1}, "choose one of"),
    ({"method": "bisect", "lo": float("nan"), "hi": 0.4, "tol": 0.1}, "must be finite"),
])
def test_bad_search_settings_are_refused(kw, msg):
    with pytest.raises(ValueError, match=msg):
        limit_search(oracle(0.3), **kw)
