"""The vehicle benchmarks reject bad options before any model is built or settled."""

import pytest

from trackdyn.testing.benchmarks_vehicle import m113_flat, m113_stepsize, step_size_arg


@pytest.mark.parametrize("kw, msg", [({"record": "some"}, "record must be 'all' or 'wheels', got 'some'"),
                                     ({"repeats": 0}, "repeats must be a positive integer, got 0"),
                                     ({"repeats": 2.5}, "repeats must be a positive integer, got 2.5"),
                                     ({"perturb": -1e-6}, r"perturb must be a number in \[0, 0.01\), got -1e-06"),
                                     ({"perturb": 0.5}, r"perturb must be a number in \[0, 0.01\), got 0.5"),
                                     ({"perturb": "1e-5"}, r"perturb must be a number in \[0, 0.01\), got '1e-5'")])
def test_stepsize_rejects_bad_options(kw, msg):
    with pytest.raises(ValueError, match=msg):
        m113_stepsize(**kw)


def test_step_sizes_as_numbers_and_fractions():
    """bench/m113_stepsize.py --steps: 1/1100 divides the 10-ms output step, its decimal form 9.0909...e-4 is long."""
    assert step_size_arg("6.25e-4") == 6.25e-4
    assert step_size_arg("1/1100") == 1 / 1100
    assert round(0.01 / step_size_arg("1/1100"), 9) == 11


@pytest.mark.parametrize("text, why", [("x", "not a number"), ("1/0", "not a number"), ("0", "must be positive"),
                                       ("-1e-3", "must be positive")])
def test_bad_step_sizes_name_the_value(text, why):
    with pytest.raises(ValueError, match=f"step '{text}': {why}"):
        step_size_arg(text)


@pytest.mark.parametrize("segments", [0, 2.5, "3"])
def test_flat_rejects_bad_segment_counts(segments):
    with pytest.raises(ValueError, match=f"segments must be a positive integer, got {segments!r}"):
        m113_flat(segments=segments)


def test_flat_repeats_is_the_old_name_of_segments_and_warns():
    """m113-flat's "repeats" were consecutive segments of one run: the old keyword still works, with a warning."""
    with pytest.warns(FutureWarning, match="'repeats' is deprecated, use 'segments'"):
        with pytest.raises(ValueError, match="segments must be a positive integer, got 0"):
            m113_flat(repeats=0)


def test_flat_script_maps_repeats_to_segments(bench_script):
    flat = bench_script("m113_flat")
    assert flat.options([])["segments"] == 3
    assert flat.options(["--segments", "2"])["segments"] == 2
    with pytest.warns(FutureWarning, match="--repeats is deprecated"):
        assert flat.options(["--repeats", "4"])["segments"] == 4
    with pytest.raises(SystemExit):
        flat.options(["--repeats", "4", "--segments", "2"])


def test_flat_headline_is_the_mean_of_the_whole_run_not_a_segment():
    """Segments of 1, 1 and 4 s wall for 100 steps each: 20 ms per step over the run (the median would be 10)."""
    import numpy as np

    from trackdyn.testing.benchmarks_vehicle import _pooled

    def seg(wall, worst):
        return {"step_size_s": 1e-4, "steps": 100, "sim_time_s": 0.01, "wall_time_s": wall,
                "cpu_ms_per_step": 1e3 * wall / 100, "max_joint_violation_m": worst, "status": "complete",
                "split_ms": {"forces": 1e3 * wall / 200, "recording": 1e3 * wall / 200},
                "load_before": [1.0], "load_after": [2.0]}

    dt = np.concatenate([np.full(100, 10.0), np.full(100, 10.0), np.full(100, 40.0)])
    out = _pooled([seg(1.0, 1e-6), seg(1.0, 3e-6), seg(4.0, 2e-6)], dt)
    assert out["ms_per_step"] == pytest.approx(20.0) and out["wall_per_sim"] == pytest.approx(200.0)
    assert out["steps"] == 300 and out["step_ms_median"] == 10.0 and out["step_ms_p10"] == 10.0
    assert out["split_ms"]["forces"] == pytest.approx(10.0) and out["max_joint_violation_m"] == 3e-6


def test_timed_run_headline_is_the_mean_over_the_whole_run(monkeypatch):
    """Ten steps of 1 ms but one of 91 ms: the headline is 10 ms per step (the mean), the median 1 ms."""
    import types

    import numpy as np

    import trackdyn as td
    from trackdyn.testing import benchmarks as B
    from trackdyn.testing import problems as P

    sim = td.Simulation(P.chain(n_links=2), integrator="euler-implicit-linearized", step=1e-3)
    ticks = iter(np.cumsum([0.0] + [1e-3] * 9 + [91e-3] + [0.0]))  # start, ten steps, the end of the run
    monkeypatch.setattr(B, "time", types.SimpleNamespace(perf_counter=lambda: float(next(ticks)),
                                                         process_time=B.time.process_time))
    out, dt = B.timed_run(sim, 10e-3)
    assert out["steps"] == 10 and out["wall_time_s"] == pytest.approx(0.1)
    assert out["ms_per_step"] == pytest.approx(10.0) and out["wall_per_sim"] == pytest.approx(10.0)
    assert out["step_ms_median"] == pytest.approx(1.0) and dt.max() == pytest.approx(91.0)
