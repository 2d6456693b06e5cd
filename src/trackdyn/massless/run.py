"""Scenario runs at the ``massless`` fidelity: the branch of :func:`trackdyn.sim.run.prepare` for it.

Options of the massless model come from the scenario's ``options`` under
keys prefixed ``massless.`` (the fields of
:class:`~trackdyn.massless.track.MasslessOptions`, e.g.
``{"massless.planes": 1}``), plus ``massless.formulation``:

- ``"tree"`` (default): the real-time stepper
  (:class:`~trackdyn.massless.stepper.RealtimeStepper`, minimal coordinates);
  the scenario's ``integrator`` and ``solver`` are not used;
- ``"absolute"``: the model in absolute coordinates with the scenario's
  integrator and solver and :class:`~trackdyn.massless.track.MasslessTrack`
  as a force provider (the reference the real-time stepper is tested against).

The remaining options go to the integrator, as for the ``links`` fidelity.

The real-time stepper has no joint multipliers and no joint violation (its
coordinates are minimal), so its runs are watched by
:class:`RealtimeMonitor`: the checks of
:class:`~trackdyn.sim.monitor.DivergenceMonitor` on the state (finite,
speeds, spins) and the energy jump against the work of the generalized
applied forces of the step (``h |Q·u|`` before and after).
"""

from __future__ import annotations

import numpy as np

from ..formulations.absolute import AbsoluteSystem, ForceContext
from ..errors import StepFailed
from ..mbs.markers import MarkerOutputs
from ..sim.monitor import DivergenceMonitor
from ..sim.simulation import Simulation
from . import _outputs
from .builder import build_massless
from .stepper import RealtimeStepper
from .track import MasslessOptions, MasslessTrack

__all__ = ["prepare_massless", "split_options", "FORMULATIONS", "RealtimeMonitor", "TreeSystem",
           "RealtimeSimulation"]

FORMULATIONS = ("tree", "absolute")


def split_options(options: dict):
    """``(MasslessOptions, formulation, integrator options)`` from a scenario's ``options``."""
    mo, rest = {}, {}
    formulation = "tree"
    for k, v in dict(options or {}).items():
        if k == "massless.formulation":
            if v not in FORMULATIONS:
                raise ValueError(f"scenario.options[{k!r}] = {v!r}: choose one of {FORMULATIONS}")
            formulation = v
        elif k.startswith("massless."):
            mo[k[len("massless."):]] = v
        else:
            rest[k] = v
    return MasslessOptions.from_dict(mo), formulation, rest


class RealtimeMonitor(DivergenceMonitor):
    """Divergence checks of a run of :class:`~trackdyn.massless.stepper.RealtimeStepper` (module docstring).

    Same thresholds as :class:`~trackdyn.sim.monitor.DivergenceMonitor`;
    multipliers (NaN: not computed) and joint violations (zero by
    construction) are not checked.
    """

    def __init__(self, system, integrator, **thresholds):
        super().__init__(system, **thresholds)
        self.integrator = integrator

    def check(self, old, new, h: float) -> None:
        self._check_motion(new)
        it = self.integrator
        # kinetic energy in the minimal rates with the step's mass matrix (the spins of wheels, idlers and
        # rollers about their axles keep their relative rate and are left out); it.Q: the step's generalized
        # applied forces, it.u: old rates, it.unew: new rates
        u, un, M = it.u, it.unew, it.M
        ke_old = 0.5 * float(u @ (M @ u))
        dE = 0.5 * float(un @ (M @ un)) - ke_old
        work = h * (abs(float(it.Q @ u)) + abs(float(it.Q @ un)))
        self._check_energy(new.t, dE, work, ke_old, old, new)
        self.last_good = new


class TreeSystem(AbsoluteSystem):
    """The absolute system of a massless model run by the real-time stepper: cheaper outputs for recording.

    :meth:`evaluate_outputs` gives the series of
    :meth:`AbsoluteSystem.evaluate_outputs` (to round-off) with two
    short-cuts: the track's outputs are taken from the compiled evaluation
    :meth:`RealtimeStepper.run_chunk` made at the very same state (``fresh``:
    that state's ``q`` array; otherwise the track is evaluated as usual), and
    the markers are evaluated by a compiled kernel
    (:func:`trackdyn.massless._outputs.markers`). The joint multipliers of
    this stepper are NaN, so the constraint Jacobian the recorder would use
    for joint reactions gives NaN reactions either way; it is still updated.
    """

    fresh_q = None  # q array of the state whose track outputs the stepper evaluated last

    def evaluate_outputs(self, state, elements: bool = True):
        if not elements:
            return super().evaluate_outputs(state, elements=False)
        self.update_kinematics(state.q, state.v)
        for blk in self.blocks:
            blk.evaluate(state.t, self.kin, state.v)
        ctx = None
        for prov in self.providers:
            if isinstance(prov, MasslessTrack) and self.fresh_q is not None and state.q is self.fresh_q:
                prov._hull_point(self.kin)
            elif type(prov) is MarkerOutputs:
                acc = state.acc if state.acc.flags.c_contiguous else np.ascontiguousarray(state.acc)
                _outputs.markers(prov.body, prov.s, self.kin.pos, self.kin.R, self.kin.vel, self.kin.omega_w, acc,
                                 prov.out)
            else:
                if ctx is None:
                    ctx = ForceContext(state.t, 0.0, state, self.kin, np.zeros_like(self.f), np.zeros_like(self.Dv),
                                       None, 0.0, 0.0)
                prov.accumulate(ctx)
        self.update_drivers(state.t)
        self.eval_constraints(want_gamma=False)


class RealtimeSimulation(Simulation):
    """:class:`~trackdyn.sim.simulation.Simulation` of the real-time stepper, several steps per compiled call.

    :meth:`run` advances from one output sample to the next in one call of
    :meth:`RealtimeStepper.run_chunk` (driver, step and divergence checks
    compiled) and records as :meth:`Simulation.run` does; the steps are the
    very same as one at a time. A step the compiled loop refuses (slice
    buffer to grow, a failed check) is redone by the Python path, which
    grows the buffer or stops the run with the monitor's diagnostic. Runs
    with a ``callback`` (called after every step), a driver without a
    compiled form (:meth:`RealtimeStepper.chunk_driver`) or a monitor other
    than :class:`RealtimeMonitor` take :meth:`Simulation.run` unchanged.
    """

    def _fast(self, callback) -> bool:
        it = self.integrator
        mon = self.monitor
        return (callback is None and isinstance(it, RealtimeStepper) and it._chunk_drv is not None
                and (mon is None or type(mon) is RealtimeMonitor) and isinstance(self.system, TreeSystem))

    def run(self, t_end: float, callback=None, out=None):
        if not self._fast(callback):
            return super().run(t_end, callback=callback, out=out)
        import time

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

            while done < n_steps:
                k = min(n_steps - done, every - self.steps % every)
                due = (self.steps + k) % every == 0
                code, kd, new_state = it.run_chunk(self.state, k, lim, False, pending is not None)
                if pending is not None:
                    # the first step evaluated the track at the pending state unless the slice buffer overflowed
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


def prepare_massless(scenario, record=None):
    """Build the massless model, its track provider, drivetrain and simulation for ``scenario``."""
    from ..sim.run import Prepared, vehicle_drivetrain, vehicle_placement

    sc = scenario
    opts, formulation, rest = split_options(sc.options)
    if getattr(sc.driver, "kinematic", False):
        raise ValueError("SprocketSpeed drivers need the kinematic drive of the builder (not yet wired)")
    spec, terrain, geo, z0 = vehicle_placement(sc)
    vm = build_massless(spec, origin=(sc.start_x, 0.0, z0), geometry=geo, speed=sc.speed, planes=opts.planes,
                        track_mass=opts.track_mass)
    track = MasslessTrack(vm, terrain, opts)
    m = vm.model
    idx = {n: k for k, n in enumerate(m.body_names)}
    drivetrain = vehicle_drivetrain(spec, idx, vm.sides, sc.driver)
    system = (TreeSystem if formulation == "tree" else AbsoluteSystem)(m, providers=[track, drivetrain],
                                                                       coupling="diagonal")
    if formulation == "tree":
        if rest:
            raise ValueError(f"scenario.options {sorted(rest)}: the massless real-time stepper takes no integrator "
                             "options (use massless.formulation = 'absolute' for the scenario's integrator)")
        integrator, iopts = RealtimeStepper, {"tree": vm.tree}
    else:
        integrator, iopts = sc.integrator, rest
    sim_cls = RealtimeSimulation if formulation == "tree" else Simulation
    sim = sim_cls(m, integrator=integrator, step=sc.step, output_step=sc.output_step, solver=sc.solver,
                  record=record if record is not None else sc.record, system=system, **iopts)
    if formulation == "tree" and sim.monitor is not None:
        sim.monitor = RealtimeMonitor(system, sim.integrator)
    if sc.speed:
        sim.state = system.project_velocities(sim.state)
    return Prepared(sc, spec, vm, track, drivetrain, sim)
