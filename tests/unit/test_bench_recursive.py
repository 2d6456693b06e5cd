"""``trackdyn bench chain64-recursive``: structure and inputs (timings live in docs/recursive.md, never asserted)."""

import pytest

from trackdyn.testing.benchmarks import BENCHMARKS, run_benchmark


def test_chain64_recursive_bench_runs_and_refuses_bad_steps():
    """``trackdyn bench chain64-recursive`` (issue #31): trackdyn's own run, without the MuJoCo peers."""
    assert "chain64-recursive" in BENCHMARKS
    with pytest.raises(ValueError, match="divide 10 ms"):
        run_benchmark("chain64-recursive", step=3e-3)
    out = run_benchmark("chain64-recursive", t_end=0.02, peers=False)
    (r,) = out["runs"]
    assert r["engine"] == "trackdyn" and r["status"] == "complete" and r["steps"] == 200
    assert r["us_per_step"] > 0
