"""Simulation: a thin coordinator of formulation, integrator and recorder.

It owns the clock, the step loop, output sampling and the wall-time split; the
physics lives in :mod:`trackdyn.formulations` and :mod:`trackdyn.integrators`.

Example
-------
>>> import trackdyn as td
>>> m = td.Model()
>>> link = m.add_body("link", mass=1.0, inertia=[0.1, 0.1, 0.1], pos=[0.5, 0, 0])
>>> _ = m.add_joint(td.Revolute(m.ground, link, point=[0, 0, 0], axis=[0, 1, 0], name="pin"))
>>> sim = td.Simulation(m, integrator="euler-implicit-linearized", step=1e-3, output_step=1e-2)
>>> res = sim.run(t_end=0.1)
>>> float(res["link.pos.z"][-1]) < 0
True
"""

from __future__ import annotations

import platform
import time
import warnings
from pathlib import Path

import numpy as np

from .._version import __version__
from ..formulations.absolute import AbsoluteSystem
from ..integrators import StepFailed, make_integrator
from ..mbs.model import Model, State
from .monitor import DivergenceMonitor, RealtimeMonitor
from .recorder import Recorder
from ..io.results import Result

__all__ = ["Simulation"]


class Simulation:
    """Run a model in time.

    Parameters
    ----------
    model : Model
    integrator : str
        Name of the time stepper (``"euler-implicit-linearized"``).
    step : float
        Time step h, s.
    output_step : float
        Sampling interval of the recorded series, s; a multiple of ``step``.
    solver : str
        Saddle-point solver of implicit steppers (``"direct"``).
    record : list of str, optional
        Glob patterns of the series to record (default: all; the language of
        :func:`trackdyn.io.match_series`: ``left.roadwheel[*].pos.z``), with
        optional intervals (:func:`trackdyn.sim.recorder.parse_record`).
    system : AbsoluteSystem, optional
        Reuse an already built system (its pattern and symbolic factorisation).
    providers : sequence of ForceProvider
        Extra force sources such as contact (see :class:`~trackdyn.formulations.absolute.ForceProvider`).
    monitor : bool or dict
        Divergence checks after every step (:class:`~trackdyn.sim.monitor.DivergenceMonitor`):
        ``True`` (default) with its default thresholds, a dict of thresholds
        (``max_violation``, ``max_speed``, ``max_spin``, ``max_energy_jump``), or
        ``False``.
    **options
        Passed to the integrator (e.g. ``max_recovery_speed``).
    """

    def __init__(self, model: Model, integrator: str = "euler-implicit-linearized", step: float = 1e-3,
                 output_step: float | None = None, solver: str = "direct", record=None,
                 system=None, providers=(), monitor=True, **options):
        h = float(step)
        if not np.isfinite(h) or h <= 0:
            raise ValueError(f"Simulation: step must be positive, got {step!r}")
        out = h if output_step is None else float(output_step)
        ratio = out / h
        if not np.isfinite(ratio) or ratio < 1 - 1e-9 or abs(ratio - round(ratio)) > 1e-6 * ratio:
            raise ValueError(
                f"Simulation: output_step {output_step!r} must be a positive multiple of step {step!r}"
            )
        self.model = model
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.system = system if system is not None else AbsoluteSystem(model, providers=providers)
        self.warnings = [str(w.message) for w in caught]
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        self.integrator = make_integrator(integrator, self.system, h, solver=solver, **options)
        self.h = h
        self.output_every = int(round(ratio))
        self.output_step = self.output_every * h
        self.state = self.system.initial_state()
        if monitor is True or isinstance(monitor, dict):
            thresholds = monitor if isinstance(monitor, dict) else {}
            if getattr(self.integrator, "minimal_coordinates", False):  # no multipliers, no joint violation
                self.monitor = RealtimeMonitor(self.system, self.integrator, **thresholds)
            else:
                self.monitor = DivergenceMonitor(self.system, **thresholds)
        elif monitor is False or monitor is None:
            self.monitor = None
        else:
            raise ValueError(f"Simulation: monitor = {monitor!r}: give True, False or a dict of thresholds")
        self.last_good_state = None
        self.recorder = Recorder(self.system, record)
        self.wall_time = 0.0
        self.record_time = 0.0
        self.steps = 0

    def step(self) -> State:
        """Advance one step (no recording)."""
        self.state = self.integrator.step(self.state)
        self.steps += 1
        return self.state

    def run(self, t_end: float, callback=None, out=None) -> Result:
        """Advance to ``t_end`` (s), sampling every ``output_step``; returns a :class:`Result`.

        A step that fails (non-finite state, singular matrix) or that the
        divergence monitor rejects (joint violation, runaway speed or spin,
        unexplained energy jump) stops the run: the result keeps the samples
        so far, ``metadata["status"]`` is ``"diverged"`` with the diagnostic in
        ``metadata["error"]``, and the last good state is kept in
        :attr:`last_good_state` (and written to ``last_good_state.npz`` in
        ``out``, loadable with :func:`trackdyn.io.checkpoint.load_state`).
        ``callback(sim)`` is called after every step; returning ``True`` stops.
        ``out`` (a folder) streams the samples there in chunks and finalises
        it atomically (:meth:`Recorder.open`); the result then reads from it.
        """
        t_end = float(t_end)
        if not np.isfinite(t_end) or t_end < self.state.t:
            raise ValueError(f"Simulation.run: t_end {t_end!r} is before the current time {self.state.t}")
        n_steps = int(round((t_end - self.state.t) / self.h))
        rec = self.recorder
        if out is not None:
            rec.open(out)
        clk = time.perf_counter
        start = clk()
        status, error = "complete", None
        try:
            if rec.last_t is None or rec.last_t < self.state.t - 0.5 * self.h:
                t0 = clk()
                rec.sample(self.state)
                self.record_time += clk() - t0
            for k in range(n_steps):
                try:
                    new_state = self.integrator.step(self.state)
                    if self.monitor is not None:
                        self.monitor.check(self.state, new_state, self.h)
                    if (self.steps + 1) % self.output_every == 0:
                        t0 = clk()
                        rec.sample(new_state)
                        self.record_time += clk() - t0
                except StepFailed as err:
                    status, error = "diverged", str(err) + self._divergence_hints()
                    self.last_good_state = self.state.copy()
                    break
                self.state = new_state
                self.steps += 1
                if callback is not None and callback(self):
                    status = "stopped"
                    break
        except BaseException as err:  # a crash or Ctrl-C: an output folder stays marked incomplete
            rec.abort(err)
            raise
        self.wall_time += clk() - start
        return self._finish(status, error, out)

    def _divergence_hints(self) -> str:
        """What the force providers know about a blow-up (e.g. explicit contact's step limit), as text."""
        hints = []
        for prov in getattr(self.system, "providers", None) or []:
            hint = getattr(prov, "divergence_hint", None)
            text = hint() if callable(hint) else None
            if text:
                hints.append(text)
        return "".join(f"; {t}" for t in hints)

    def _finish(self, status, error, out) -> Result:
        """The run's Result; a diverged run also keeps its last good state (``last_good_state.npz`` in ``out``)."""
        meta = self.metadata(status, error)
        if status == "diverged":
            meta["last_good_t"] = float(self.state.t)
            if out is not None:
                from ..io.checkpoint import save_state

                save_state(Path(out) / "last_good_state.npz", self.state)
                meta["last_good_state"] = "last_good_state.npz"
        return self.recorder.result(meta)

    def _model_info(self) -> dict:
        """Sizes of the system; a formulation without a saddle-point matrix (e.g. the recursive one) has no
        ``pattern``: its ``kkt_size`` and ``kkt_nnz`` are ``None``."""
        s = self.system
        pattern = getattr(s, "pattern", None)
        return {"bodies": s.nb, "constraint_rows": s.nc, "removed_rows": dict(getattr(s, "removed_rows", ())),
                "kkt_size": None if pattern is None else pattern.n,
                "kkt_nnz": None if pattern is None else pattern.nnz}

    def metadata(self, status="complete", error=None) -> dict:
        it = self.integrator
        sim_time = self.state.t
        timing = dict(it.timing)
        timing["recording"] = self.record_time
        meta = {
            "status": status,
            "trackdyn_version": __version__,
            "formulation": self.system.formulation,
            "settings": {**it.settings(), "output_step": self.output_step},
            "sim_time_s": sim_time,
            "wall_time_s": self.wall_time,
            "steps": self.steps,
            "step_size_s": self.h,
            "wall_per_sim": self.wall_time / sim_time if sim_time > 0 else None,
            "timing_s": timing,
            "counters": dict(it.counters),
            "model": self._model_info(),
            "machine": {"python": platform.python_version(), "platform": platform.platform(),
                        "processor": platform.processor() or platform.machine()},
            "warnings": list(self.warnings),
        }
        if error:
            meta["error"] = error
        return meta
