"""Divergence monitor: stop a run that has gone wrong, with a diagnostic, before it returns nonsense.

Checked after every accepted step (cheap: a few array reductions):

- non-finite values anywhere in the state (the integrator already refuses a
  non-finite step; this also catches non-finite multipliers and history);
- a joint violated beyond ``max_violation`` (m, or rad for angular rows) —
  the worst joint is named;
- a body faster than ``max_speed`` (m/s) or spinning faster than
  ``max_spin`` (rad/s) — the worst body is named;
- a jump of kinetic energy that no force explains: more than
  ``max_energy_jump`` times the work that the step's applied forces could do
  (``h |f·v|`` summed) plus 1 J — the body that gained the most is named.

A failed check raises :class:`~trackdyn.errors.StepFailed` with the time,
the reason and the culprit; :class:`~trackdyn.sim.simulation.Simulation`
then stops, keeps the partial results with ``status: "diverged"`` and keeps
the last good state (written as ``last_good_state.npz`` in the results folder
when there is one).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..errors import StepFailed

__all__ = ["DivergenceMonitor", "RealtimeMonitor"]


@nb.njit(cache=True, _nrt=False)
def _screen(q, v_old, v_new, lam, phi, f, m, J, max_violation, max_speed, max_spin, max_energy_jump, h):
    """True when any check of :meth:`DivergenceMonitor.check` could fail (one pass, no allocation).

    The fast path of the monitor: the same quantities as the detailed check,
    reduced to a yes/no; the detailed (NumPy) check then names the culprit.
    """
    for x in q.flat:
        if not np.isfinite(x):
            return True
    for x in lam.flat:
        if not np.isfinite(x):
            return True
    for x in phi.flat:
        if abs(x) > max_violation:
            return True
    dE = 0.0
    work = 0.0
    ke_old = 0.0
    for b in range(v_new.shape[0]):
        sp = 0.0
        sw = 0.0
        wf_old = 0.0
        wf_new = 0.0
        for k in range(3):
            if not (np.isfinite(v_new[b, k]) and np.isfinite(v_new[b, 3 + k])):
                return True
            sp += v_new[b, k] * v_new[b, k]
            sw += v_new[b, 3 + k] * v_new[b, 3 + k]
        if sp > max_speed * max_speed or sw > max_spin * max_spin:
            return True
        for k in range(6):
            wf_old += f[b, k] * v_old[b, k]
            wf_new += f[b, k] * v_new[b, k]
        work += h * (abs(wf_old) + abs(wf_new))
        ko = 0.0
        kn = 0.0
        for k in range(3):
            ko += v_old[b, k] * v_old[b, k]
            kn += v_new[b, k] * v_new[b, k]
        ro = 0.0
        rn = 0.0
        for i in range(3):
            for j in range(3):
                ro += v_old[b, 3 + i] * J[b, i, j] * v_old[b, 3 + j]
                rn += v_new[b, 3 + i] * J[b, i, j] * v_new[b, 3 + j]
        eo = 0.5 * m[b] * ko + 0.5 * ro
        dE += 0.5 * m[b] * kn + 0.5 * rn - eo
        ke_old += eo
    return dE > max_energy_jump * work + 1.0 and dE > 0.1 * ke_old


class DivergenceMonitor:
    """Checks of a simulation after each step (see the module docstring)."""

    def __init__(self, system, max_violation: float = 0.05, max_speed: float = 200.0, max_spin: float = 2000.0,
                 max_energy_jump: float = 10.0):
        self.system = system
        self.max_violation = float(max_violation)
        self.max_speed = float(max_speed)
        self.max_spin = float(max_spin)
        self.max_energy_jump = float(max_energy_jump)
        s = system
        self._m = s.mass
        self._J = s.inertia
        self.last_good = None

    def kinetic(self, v) -> np.ndarray:
        """Kinetic energy of each body, J."""
        w = v[:, 3:]
        return 0.5 * self._m * np.sum(v[:, :3] ** 2, axis=1) + 0.5 * np.einsum("bi,bij,bj->b", w, self._J, w)

    def check(self, old, new, h: float) -> None:
        """Raise StepFailed when the step ``old -> new`` diverged; else remember ``new`` as good."""
        s = self.system
        phi = s.phi if s.nc and len(s.phi) else np.zeros(0)
        if not _screen(new.q, old.v, new.v, new.lam, phi, s.f, self._m, self._J, self.max_violation,
                       self.max_speed, self.max_spin, self.max_energy_jump, float(h)):
            self.last_good = new
            return
        t = new.t
        self._check_motion(new)
        if not np.all(np.isfinite(new.lam)):
            bad = np.argwhere(~np.isfinite(new.lam))[0]
            raise StepFailed(f"t = {t:.6g} s: non-finite lam ({self._joint_of_row(int(bad[0]))})")
        if s.nc and len(s.phi):
            k = int(np.argmax(np.abs(s.phi)))
            if abs(s.phi[k]) > self.max_violation:
                raise StepFailed(f"t = {t:.6g} s: joint {self._joint_of_row(k)} violated by {abs(s.phi[k]):.3g} "
                                 f"(limit {self.max_violation})")
        dE = self.kinetic(new.v) - self.kinetic(old.v)
        work = h * np.abs(np.sum(s.f * new.v, axis=1)) + h * np.abs(np.sum(s.f * old.v, axis=1))
        # constraint forces move energy between bodies: compare totals, name the largest gainer
        self._check_energy(t, dE.sum(), work.sum(), self.kinetic(old.v).sum(), old, new)
        self.last_good = new

    def _check_motion(self, new) -> None:
        """Non-finite positions or velocities, runaway speed or spin: StepFailed naming the body."""
        s = self.system
        t = new.t
        for name in ("q", "v"):
            arr = getattr(new, name)
            if not np.all(np.isfinite(arr)):
                bad = np.argwhere(~np.isfinite(arr))[0]
                raise StepFailed(f"t = {t:.6g} s: non-finite {name} ({s.body_names[bad[0]]})")
        speed = np.linalg.norm(new.v[:, :3], axis=1)
        spin = np.linalg.norm(new.v[:, 3:], axis=1)
        b = int(np.argmax(speed))
        if speed[b] > self.max_speed:
            raise StepFailed(f"t = {t:.6g} s: body {s.body_names[b]} at {speed[b]:.3g} m/s (limit {self.max_speed})")
        b = int(np.argmax(spin))
        if spin[b] > self.max_spin:
            raise StepFailed(f"t = {t:.6g} s: body {s.body_names[b]} spinning at {spin[b]:.3g} rad/s "
                             f"(limit {self.max_spin})")

    def _check_energy(self, t, dE: float, work: float, ke_old: float, old, new) -> None:
        """StepFailed when kinetic energy grew by ``dE`` more than ``max_energy_jump`` × the forces' ``work``."""
        if dE > self.max_energy_jump * work + 1.0 and dE > 0.1 * ke_old:
            b = int(np.argmax(self.kinetic(new.v) - self.kinetic(old.v)))
            raise StepFailed(f"t = {t:.6g} s: kinetic energy jumped by {dE:.3g} J in one step, more than "
                             f"the applied forces can do ({work:.3g} J); largest gain: body "
                             f"{self.system.body_names[b]}")

    def _joint_of_row(self, r: int) -> str:
        s = self.system
        try:
            return s.joint_names[int(s.row_joint[r])]
        except (IndexError, ValueError):
            return f"row {r}"


class RealtimeMonitor(DivergenceMonitor):
    """Divergence checks of a run of a minimal-coordinate stepper (:class:`~trackdyn.integrators.realtime.RealtimeStepper`).

    Same thresholds as :class:`DivergenceMonitor`; multipliers (NaN: not
    computed) and joint violations (zero by construction) are not checked.
    The energy jump is measured in the minimal rates with the step's mass
    matrix against the work of the step's generalized applied forces
    (``h |Q·u|`` before and after); the stepper exposes ``u``, ``unew``,
    ``M`` and ``Q`` of its last step.
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
