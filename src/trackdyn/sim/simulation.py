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

import fnmatch
import platform
import time
import warnings

import numpy as np

from .._version import __version__
from ..formulations.absolute import AbsoluteSystem
from ..integrators import StepFailed, make_integrator
from ..mbs.model import Model, State
from .result import Result

__all__ = ["Simulation", "Recorder"]


class Recorder:
    """Samples named series of a system and state into a preallocated table.

    Parameters
    ----------
    system : AbsoluteSystem
    patterns : list of str or None
        Glob patterns (``*``, ``?``) of the series to keep (``None``: all);
        brackets are literal, as in ``left.roadwheel[0].pos.z``.
    """

    def __init__(self, system, patterns=None):
        self.system = system
        s = system
        cols = []
        for b, nm in enumerate(s.body_names):
            for part, comps in (("pos", "xyz"), ("quat", ("e0", "e1", "e2", "e3")), ("vel", "xyz"),
                                ("omega", "xyz"), ("acc", "xyz")):
                cols.extend(f"{nm}.{part}.{c}" for c in comps)
        self._n_body_cols = len(cols)
        for nm in s.joint_names:
            cols.extend(f"{nm}.force.{c}" for c in "xyz")
            cols.extend(f"{nm}.torque.{c}" for c in "xyz")
        self._n_joint_cols = len(cols) - self._n_body_cols
        self._elem = []
        for blk in list(s.blocks) + list(s.providers):
            for name, (arr, k) in blk.series().items():
                cols.append(name)
                self._elem.append((arr, k))
        self.all_columns = cols
        if patterns is None:
            self.keep = np.arange(len(cols))
        else:
            pats = [patterns] if isinstance(patterns, str) else list(patterns)
            pats = [p.replace("[", "[[]") for p in pats]  # brackets are literal in series names
            keep = [k for k, c in enumerate(cols) if any(fnmatch.fnmatchcase(c, p) for p in pats)]
            if not keep:
                raise ValueError(f"record: no series matches {pats}")
            self.keep = np.array(keep, dtype=np.int64)
        self.columns = [cols[k] for k in self.keep]
        self._need_joints = bool(np.any((self.keep >= self._n_body_cols)
                                        & (self.keep < self._n_body_cols + self._n_joint_cols)))
        self._row = np.zeros(len(cols))
        self.t: list[float] = []
        self.rows: list[np.ndarray] = []

    def sample(self, state: State):
        s = self.system
        s.evaluate_outputs(state)
        row = self._row
        nb_ = s.nb
        body = np.concatenate([state.q, state.v, state.acc[:, :3]], axis=1)  # (nb, 16)
        row[: 16 * nb_] = body.ravel()
        if self._need_joints and s.joint_names:
            F, T = s.reactions(state.lam)
            row[self._n_body_cols: self._n_body_cols + self._n_joint_cols] = np.concatenate([F, T], 1).ravel()
        off = self._n_body_cols + self._n_joint_cols
        for n, (arr, k) in enumerate(self._elem):
            row[off + n] = arr[k]
        self.t.append(state.t)
        self.rows.append(row[self.keep].copy())

    def result(self, metadata) -> Result:
        vals = np.array(self.rows) if self.rows else np.zeros((0, len(self.columns)))
        return Result(np.array(self.t), self.columns, vals, metadata)


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
        ``fnmatch`` patterns of the series to record (default: all).
    system : AbsoluteSystem, optional
        Reuse an already built system (its pattern and symbolic factorisation).
    providers : sequence of ForceProvider
        Extra force sources such as contact (see :class:`~trackdyn.formulations.absolute.ForceProvider`).
    **options
        Passed to the integrator (e.g. ``max_recovery_speed``).
    """

    def __init__(self, model: Model, integrator: str = "euler-implicit-linearized", step: float = 1e-3,
                 output_step: float | None = None, solver: str = "direct", record=None,
                 system=None, providers=(), **options):
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
        self.recorder = Recorder(self.system, record)
        self.wall_time = 0.0
        self.record_time = 0.0
        self.steps = 0

    def step(self) -> State:
        """Advance one step (no recording)."""
        self.state = self.integrator.step(self.state)
        self.steps += 1
        return self.state

    def run(self, t_end: float, callback=None) -> Result:
        """Advance to ``t_end`` (s), sampling every ``output_step``; returns a :class:`Result`.

        A step that fails (non-finite state, singular matrix) stops the run:
        the result keeps the samples so far and ``metadata["status"]`` is
        ``"diverged"`` with the diagnostic in ``metadata["error"]``.
        ``callback(sim)`` is called after every step; returning ``True`` stops.
        """
        t_end = float(t_end)
        if not np.isfinite(t_end) or t_end < self.state.t:
            raise ValueError(f"Simulation.run: t_end {t_end!r} is before the current time {self.state.t}")
        n_steps = int(round((t_end - self.state.t) / self.h))
        rec = self.recorder
        clk = time.perf_counter
        start = clk()
        status, error = "complete", None
        if not rec.t or rec.t[-1] < self.state.t - 0.5 * self.h:
            t0 = clk()
            rec.sample(self.state)
            self.record_time += clk() - t0
        for k in range(n_steps):
            try:
                new_state = self.integrator.step(self.state)
                if (self.steps + 1) % self.output_every == 0:
                    t0 = clk()
                    rec.sample(new_state)
                    self.record_time += clk() - t0
            except StepFailed as err:
                status, error = "diverged", str(err)
                break
            self.state = new_state
            self.steps += 1
            if callback is not None and callback(self):
                status = "stopped"
                break
        self.wall_time += clk() - start
        return rec.result(self.metadata(status, error))

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
            "model": {"bodies": self.system.nb, "constraint_rows": self.system.nc,
                      "removed_rows": dict(self.system.removed_rows),
                      "kkt_size": self.system.pattern.n, "kkt_nnz": self.system.pattern.nnz},
            "machine": {"python": platform.python_version(), "platform": platform.platform(),
                        "processor": platform.processor() or platform.machine()},
            "warnings": list(self.warnings),
        }
        if error:
            meta["error"] = error
        return meta
