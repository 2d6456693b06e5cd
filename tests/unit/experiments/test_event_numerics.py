"""What the events make of their trials' runs, with the runs stubbed (no simulation; fast).

- half-round: only completed runs feed the ride-limiting speed; the others
  are listed under ``excluded`` with the reason;
- limit searches: a trial repeated at half the step (``refine``) leaves the
  other trials at the larger step; the result says so (``steps_s``,
  ``mixed_steps``) rather than re-running them (docs/events.md, "Numerical
  settings").
"""

from types import SimpleNamespace as NS

import numpy as np
import pytest

from trackdyn.experiments import events as E
from trackdyn.experiments.trials import G


def _run(status, h, reason=None, monitor=None, t=1.0):
    """The parts of a TrialRun that the events read."""
    return NS(status=status, reason=reason, prep=NS(sim=NS(state=NS(t=t), h=h)),
              result=NS(metadata={"error": "blew up"}), wall_time_s=1.0, build_time_s=0.1, monitor=monitor,
              tensioning=None, summary={})


class _Monitor:
    """A chassis moving at ``speed`` from x = 0 for ``t_end`` s, the seat's a_z zero but one spike at the end."""

    def __init__(self, speed, peak_g, h, t_end=20.0):
        self.t = np.arange(0.0, t_end + 1e-9, 0.01)
        self.x = speed * self.t
        self.v = np.full_like(self.t, speed)
        self.t_az = np.arange(0.0, t_end + 1e-9, h)
        self.az = np.zeros_like(self.t_az)
        self.az[-1] = peak_g * G

    def arr(self, key):
        return {"t": self.t, "x": self.x, "v": self.v}[key]

    def driver_acc(self):
        return self.t_az, self.az


def _stub_half_round(monkeypatch, outcomes, diverge=()):
    """``outcomes``: speed -> (peak g, completed); speeds in ``diverge`` diverge at steps above 3e-4 s."""
    seen = []

    def run_trial(sc, stop=None, driver_acc=False, tension=None):
        v, h = sc.speed, sc.step
        seen.append((v, h))
        if v in diverge and h > 3e-4:
            return _run("diverged", h)
        peak, completed = outcomes[v]
        # a completed run is stopped by the event's rule; an incomplete one runs into its time limit
        return _run("stopped" if completed else "complete", h, "passed" if completed else None,
                    _Monitor(v, peak, h))

    monkeypatch.setattr(E, "run_trial", run_trial)
    monkeypatch.setattr(E, "_fig55", lambda ctx, run, t0, t1: {"itt_N": None, "idler_x_m": None, "idler_z_m": None})
    return seen


def test_half_round_limit_ignores_runs_that_did_not_complete(monkeypatch):
    # 3 m/s ran into its time limit with a 9 g peak: with it the limit would be 2.19 m/s and, with
    # stop_after_limit, 4 m/s would never run
    seen = _stub_half_round(monkeypatch, {2.0: (1.0, True), 3.0: (9.0, False), 4.0: (4.0, True)})
    res = E.half_round("m113", height_in=10, speeds=[2, 3, 4], step=5e-4, stop_after_limit=True)
    assert [v for v, _ in seen] == [2.0, 3.0, 4.0]
    assert res["peaks"] == [[2.0, pytest.approx(1.0)], [4.0, pytest.approx(4.0)]]
    assert res["limiting_speed_mps"] == pytest.approx(2.0 + (2.5 - 1.0) / (4.0 - 1.0) * 2.0)
    (ex,) = res["excluded"]
    assert ex["speed_mps"] == 3.0 and ex["peak_g"] == pytest.approx(9.0)
    assert "did not complete" in ex["reason"] and "time limit" in ex["reason"]
    assert not res["all_completed"] and [r["completed"] for r in res["runs"]] == [True, False, True]
    assert res["steps_s"] == [5e-4] and res["mixed_steps"] is False
    # the figure shows the excluded run apart from the curves that give the limit
    ax = E.event_figures(res)["figure"].axes[0]
    marks = [ln for ln in ax.lines if ln.get_label() == "did not complete (excluded)"]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [3.0]


def test_half_round_with_every_run_complete_excludes_nothing(monkeypatch):
    _stub_half_round(monkeypatch, {2.0: (1.0, True), 3.0: (3.0, True)})
    res = E.half_round("m113", height_in=10, speeds=[2, 3], step=5e-4)
    assert res["excluded"] == [] and res["limiting_speed_mps"] == pytest.approx(2.75)


def test_half_round_flags_a_run_repeated_at_half_the_step(monkeypatch):
    _stub_half_round(monkeypatch, {2.0: (1.0, True), 3.0: (3.0, True)}, diverge={3.0})
    res = E.half_round("m113", height_in=10, speeds=[2, 3], step=5e-4)
    assert [r["step_s"] for r in res["runs"]] == [5e-4, 2.5e-4]
    assert res["steps_s"] == [5e-4, 2.5e-4] and res["mixed_steps"] is True


def _stub_climb(monkeypatch, threshold, diverge=()):
    """Trials pass up to ``threshold`` m; values in ``diverge`` diverge at steps above 3e-4 s."""
    seen = []

    def climb_trial(ctx, kind, value, *args, label=None, **kwargs):
        def attempt(h):
            seen.append((value, h))
            return _run("diverged" if value in diverge and h > 3e-4 else "stopped", h, "success")

        run = ctx.run(f"{kind} {label}", attempt)
        passed = value <= threshold + 1e-9
        return {"passed": passed, "mode": None if passed else "nose-in", "stop_reason": "success",
                "sim_time_s": 1.0, "wall_time_s": 1.0, "step_s": run.prep.sim.h, "path": [[0.0], [0.0]]}

    monkeypatch.setattr(E, "_climb_trial", climb_trial)
    return seen


def test_a_limit_search_with_a_refined_trial_reports_mixed_steps(monkeypatch):
    # the 2 cm search of docs/events.md: 0.42 m diverged at 5e-4 s and was repeated at 2.5e-4 s
    seen = _stub_climb(monkeypatch, 0.44, diverge={0.42})
    res = E.step_climb_limit("m113", search="stepped", lo=0.40, hi=0.48, increment=0.02, step=5e-4, refine=1)
    assert res["limit_m"] == pytest.approx(0.44) and res["search_status"] == "found"
    assert seen == [(0.4, 5e-4), (0.42, 5e-4), (0.42, 2.5e-4), (0.44, 5e-4), (0.46, 5e-4)]
    assert [t["step_s"] for t in res["trials"]] == [5e-4, 2.5e-4, 5e-4, 5e-4]
    assert res["steps_s"] == [5e-4, 2.5e-4] and res["mixed_steps"] is True
    assert [r["step_s"] for r in res["refinements"]] == [5e-4]
    assert res["step_size_s"] == 5e-4  # the requested step stays what it was


def test_a_limit_search_at_one_step_is_not_flagged(monkeypatch):
    _stub_climb(monkeypatch, 0.44)
    res = E.gap_crossing_limit("m113", search="values", values=[0.4, 0.5], step=5e-4)
    assert res["limit_m"] == pytest.approx(0.4)
    assert res["steps_s"] == [5e-4] and res["mixed_steps"] is False and res["refinements"] == []


def test_steps_are_those_of_the_kept_runs_not_of_the_diverged_attempts(monkeypatch):
    # every trial diverged at 5e-4 s and ran at 2.5e-4 s: one step, not mixed
    _stub_climb(monkeypatch, 0.44, diverge={0.4, 0.5})
    res = E.gap_crossing_limit("m113", search="values", values=[0.4, 0.5], step=5e-4)
    assert [t["step_s"] for t in res["trials"]] == [2.5e-4, 2.5e-4]
    assert res["steps_s"] == [2.5e-4] and res["mixed_steps"] is False and len(res["refinements"]) == 2


def test_a_diverged_attempt_keeps_its_partial_results(monkeypatch, tmp_path):
    # a run that blows up stops with a diagnostic and keeps its partial results: the 3 m/s attempt that
    # diverged at 5e-4 s is written under diverged/ and its refinement record points there
    _stub_half_round(monkeypatch, {2.0: (1.0, True), 3.0: (3.0, True)}, diverge={3.0})
    written = []

    def write_trial(run, d):
        d.mkdir(parents=True, exist_ok=True)
        written.append((run.status, d.relative_to(tmp_path).as_posix()))
        return d

    monkeypatch.setattr(E, "write_trial", write_trial)
    res = E.half_round("m113", height_in=10, speeds=[2, 3], step=5e-4, out=tmp_path, refine=1)
    diverged = [d for status, d in written if status == "diverged"]
    assert diverged == ["diverged/half-round_10_in_at_3_m_s_h0.0005"]
    (rec,) = res["refinements"]
    assert rec["folder"] == diverged[0] and rec["step_s"] == 5e-4
    assert (tmp_path / diverged[0]).is_dir()
