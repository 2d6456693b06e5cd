"""A simulation of a chunked stepper: several steps and output samples per compiled call.

Chosen by :func:`trackdyn.sim.run.prepare` for an integrator that declares
``chunked = True`` (it has ``run_chunk``: the massless fidelity's
:class:`~trackdyn.integrators.realtime.RealtimeStepper`); the steps are the
very same as one at a time.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import StepFailed
from ..formulations.tree import TreeSystem
from ..mbs.model import State
from .monitor import RealtimeMonitor
from .simulation import Simulation

__all__ = ["RealtimeSimulation"]


class RealtimeSimulation(Simulation):
    """:class:`~trackdyn.sim.simulation.Simulation` of the real-time stepper, several steps per compiled call.

    :meth:`run` advances up to 64 output samples per call of
    :meth:`RealtimeStepper.run_samples` (driver, step and divergence checks
    compiled; each sample's state and track outputs kept in history buffers)
    and records them after the call as :meth:`Simulation.run` does; the
    stretches that are not whole samples (a start or end between samples)
    take one call of :meth:`RealtimeStepper.run_chunk` each. The steps are
    the very same as one at a time. A step the compiled loop refuses (slice
    buffer to grow, a failed check) is redone by the Python path, which
    grows the buffer or stops the run with the monitor's diagnostic. Runs
    with a ``callback`` (called after every step), a driver without a
    compiled form (:meth:`RealtimeStepper.chunk_driver`) or a monitor other
    than :class:`RealtimeMonitor` take :meth:`Simulation.run` unchanged.
    """

    def _fast(self, callback) -> bool:
        it = self.integrator
        mon = self.monitor
        return (callback is None and getattr(it, "chunked", False) and it._chunk_drv is not None
                and (mon is None or type(mon) is RealtimeMonitor) and isinstance(self.system, TreeSystem))

    def run(self, t_end: float, callback=None, out=None):
        if not self._fast(callback):
            return super().run(t_end, callback=callback, out=out)
        t_end = float(t_end)
        if not np.isfinite(t_end) or t_end < self.state.t:
            raise ValueError(f"Simulation.run: t_end {t_end!r} is before the current time {self.state.t}")
        n_steps = int(round((t_end - self.state.t) / self.h))
        rec = self.recorder
        it = self.integrator
        mon = self.monitor
        lim = (np.array([mon.max_speed, mon.max_spin, mon.max_energy_jump, 1.0]) if mon is not None
               else np.array([np.inf, np.inf, np.inf, 0.0]))
        if out is not None:
            rec.open(out)
        # the loop's compiled kernels loaded from Numba's cache before the clock starts (≈ 0.2 s each for the
        # stepper's loop and the outputs on the shared AMD machine), as the model build is: the wall time is the
        # time loop's (bench/README.md, stop 27)
        it.prime(self.state, lim)
        self.system.prime_outputs()
        rec.prime(self.state)
        clk = time.perf_counter
        start = clk()
        status, error = "complete", None
        every = self.output_every
        try:
            if rec.last_t is None or rec.last_t < self.state.t - 0.5 * self.h:
                t0 = clk()
                rec.sample(self.state)
                self.record_time += clk() - t0
            done = 0
            pending = None  # a state to record: its track outputs come from the next chunk's first step

            def record(st, fresh):
                self.system.fresh_q = st.q if fresh else None
                t0 = clk()
                rec.sample(st)
                self.record_time += clk() - t0
                self.system.fresh_q = None

            track = it.track
            track_out = (track.wout, track.sout, track.hout, track.tout)

            def record_history(hist, j, fresh, extra):
                # sample j of a run_samples call: its state from the history, its track outputs (when fresh)
                # copied where the recorder reads them
                ht, hq, hv, hacc, hmem = hist[:5]
                if fresh:
                    for dst, src in zip(track_out, hist[5:]):
                        dst[...] = src[j]
                if "driver" in extra:
                    extra = dict(extra)
                    extra["driver"] = hmem[j, : extra["driver"].shape[0]].copy()
                record(State(float(ht[j]), hq[j], hv[j], it.nan_lam, hacc[j], extra), fresh)

            while done < n_steps:
                left = n_steps - done
                if self.steps % every == 0 and left >= 2 * every:
                    # several samples per compiled call, recorded from its history afterwards
                    extra = self.state.extra
                    code, n, kd, new_state, hist = it.run_samples(self.state, left // every, every, lim,
                                                                 pending is not None)
                    if pending is not None:
                        record(pending, kd > 0 or code == 2)
                        pending = None
                    for j in range(n - 1):
                        record_history(hist, j, True, extra)
                    if kd:
                        self.state = new_state
                        self.steps += kd
                        done += kd
                    if code == 0:
                        pending = new_state  # the last sample: its outputs come with the next call's first step
                        continue
                    if n:
                        # refused after n samples: the last one's outputs exist if a step was taken after it
                        record_history(hist, n - 1, kd > n * every or code == 2, extra)
                else:
                    k = min(left, every - self.steps % every)
                    due = (self.steps + k) % every == 0
                    code, kd, new_state = it.run_chunk(self.state, k, lim, False, pending is not None)
                    if pending is not None:
                        # the first step evaluated the track at the pending state unless the slice buffer
                        # overflowed
                        record(pending, kd > 0 or code == 2)
                        pending = None
                    if kd:
                        self.state = new_state
                        self.steps += kd
                        done += kd
                    if code == 0:
                        if due:
                            pending = new_state
                        continue
                # the next step was refused: redo it on the Python path (grows the buffer or raises)
                try:
                    new_state = it.step(self.state)
                    if mon is not None:
                        mon.check(self.state, new_state, self.h)
                    if (self.steps + 1) % every == 0:
                        record(new_state, False)
                except StepFailed as err:
                    status, error = "diverged", str(err)
                    self.last_good_state = self.state.copy()
                    break
                it._chunk = None  # the Python step may have grown buffers
                self.state = new_state
                self.steps += 1
                done += 1
            if pending is not None:  # the last sample: evaluate the track at it
                code, _, _ = it.run_chunk(pending, 0, lim, True)
                if code != 0:
                    it._grow()
                record(pending, code == 0)
        except BaseException as err:  # a crash or Ctrl-C: an output folder stays marked incomplete
            rec.abort(err)
            raise
        self.wall_time += clk() - start
        return self._finish(status, error, out)
