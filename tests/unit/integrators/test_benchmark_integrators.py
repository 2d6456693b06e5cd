"""The chain64-integrators benchmark on a short horizon: its search logic, not its timings."""

import numpy as np

from trackdyn.testing.benchmarks import BENCHMARKS
from trackdyn.testing.benchmarks_integrators import chain64_integrators


def test_search_returns_the_largest_passing_step_of_the_sequence():
    assert "chain64-integrators" in BENCHMARKS
    out = chain64_integrators(t_end=0.1, tol=1e-6, integrators=["hht", "abm"], reference=("rk4", 1e-3),
                              abm_rtols=(1e-1, 1e-3, 1e-5))
    assert {"ms_per_step", "wall_per_sim", "steps", "step_size_s", "split_ms", "runs"} <= set(out)
    hht, abm = out["runs"]
    assert hht["passed"] and hht["tip_dev_m"] <= 1e-6
    larger = [t for t in hht["tried"] if t["step_size_s"] > hht["step_size_s"]]
    assert larger and all(t["tip_dev_m"] > 1e-6 for t in larger)
    assert abm["passed"] and abm["tip_dev_m"] <= 1e-6 and abm["rtol"] in (1e-1, 1e-3, 1e-5)
    assert np.isclose(abm["step_size_s"] * abm["steps"], 0.1)
