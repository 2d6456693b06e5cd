"""One trial of a mobility event: build the run, watch it step by step, stop it early, classify the outcome.

Every event (:mod:`trackdyn.experiments.events`) is a sequence of trials —
one simulation of a vehicle against one obstacle — and this module holds what
they share:

- :class:`~trackdyn.assembly.extent.VehicleExtent` (re-exported here): where
  the vehicle's front, rear, wheels and hull are in its own frame, so an event
  can place the vehicle just in front of an obstacle;
- :class:`Monitor`: a ``Simulation.run`` callback that samples the chassis,
  the road wheels, the sprockets and the hull contacts every ``every``
  seconds and (optionally) the driver-seat vertical acceleration at every
  step, and asks the event's stop rule whether the trial is decided;
- :func:`run_trial`: prepare a :class:`~trackdyn.spec.scenario.Scenario`,
  apply the §5.1 tensioning procedure when asked, run with the monitor, and
  write the trial's results folder (``timeseries.parquet``,
  ``metadata.json``, ``summary.json``, and ``driver_acc.parquet`` with the
  per-step acceleration when it was kept);
- :func:`classify_failure`: the failure mode of a failed trial from the
  last seconds of the monitor's samples (nose-in, high-centred, track slip,
  stalled, fell in).

Frames: world x forward along the obstacle course, z up; "vehicle frame" is
the spec's (origin on the left sprocket axis at the centreline).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..assembly.extent import VehicleExtent, vehicle_extent
from ..materials import Material
from ..conventions import G0 as G
from ..math.quaternion import quat_to_matrix
from ..sim.run import prepare, run_metadata
from .tensioning import Tensioning

__all__ = ["TIMBER", "EVENT_RECORD", "VehicleExtent", "vehicle_extent", "Monitor", "TrialRun", "run_trial",
           "classify_failure", "FAILURE_MODES", "moving_average", "G"]

#: Step obstacle material of korner-2024 §4.2.2 (TOP 2-2-611 replaceable timbers): E 10 GPa, μ 0.8.
TIMBER = Material("timber", young=1e10, poisson=0.3, restitution=0.1, friction=0.8)

#: Series an event keeps (an M113 has ~5000 series; these ~400 are what events and figures use).
EVENT_RECORD = ("chassis.*", "driver.*", "*.roadwheel[*].pos.*", "*.idler.pos.*", "*.sprocket.speed",
                "*.sprocket.torque", "*.tensioner.*", "*.shoe[*].tension", "contact.count", "contact.penetration")

FAILURE_MODES = ("nose-in", "high-centred", "track slip", "stalled", "fell in")


# ---------------------------------------------------------------------------------------------- geometry
# ---------------------------------------------------------------------------------------------- monitor
class Monitor:
    """A ``Simulation.run`` callback: samples the vehicle and stops the run when the stop rule decides.

    Every ``every`` seconds it appends to :attr:`samples` (plain lists):
    ``t``, chassis centre of mass ``x``, ``z``, ``pitch`` (rad, nose up
    positive), ``roll``, forward speed ``v``, the largest and smallest road-wheel centre
    x (``wheel_x_max``, ``wheel_x_min``), the rearmost idler x, the mean
    sprocket track speed ``track_v`` (sprocket speed relative to the chassis
    times the pin-circle radius, m/s) and the hull's contact force and
    position (``hull_fn`` N, ``hull_x_v`` vehicle-frame x of its centre of
    force, NaN without contact).

    With ``driver_acc=True`` it also keeps the vertical acceleration of the
    driver's seat marker (thesis Table 3.1) at every step in :attr:`az`
    (m/s², world z, gravity excluded: the point's kinematic acceleration
    ``r̈ + α × s + ω × (ω × s)``, as the recorded ``driver.acc.z``).

    ``stop(monitor) -> str or None``: called after every sample; a string
    ends the run and is kept as :attr:`reason`.
    """

    def __init__(self, prep, stop=None, every: float = 0.01, driver_acc: bool = False, hook=None):
        sim = prep.sim
        names = {n: k for k, n in enumerate(sim.system.body_names)}
        self.prep = prep
        self.stop_rule = stop
        self.hook = hook
        self.h = sim.h
        self.every_n = max(1, int(round(every / sim.h)))
        self.c = names["chassis"]
        sides = getattr(prep.vehicle, "sides", {}).values()  # a fidelity without running gear has none
        self.wheels = np.array([names[w] for s in sides for w in s.wheels], dtype=np.int64)
        self.idlers = np.array([names[s.idler] for s in sides if s.idler in names], dtype=np.int64)
        self.sprockets = np.array([names[s.sprocket] for s in sides], dtype=np.int64)
        self.r_sprocket = prep.spec.sprocket.assembly_radius
        self.com_v = np.asarray(prep.spec.chassis.com, float)
        marker = [m for m in sim.model.markers if m[0] == "driver"]
        self.s_driver = np.asarray(marker[0][2], float) if marker else None
        self.keep_az = bool(driver_acc) and self.s_driver is not None
        n_max = int(math.ceil(prep.scenario.t_end / sim.h)) + 2
        self.az = np.full(n_max if self.keep_az else 0, np.nan)
        self.az_t = np.full(n_max if self.keep_az else 0, np.nan)
        self.n_az = 0
        self.samples = {k: [] for k in ("t", "x", "z", "pitch", "roll", "v", "wheel_x_max", "wheel_x_min",
                                        "idler_x_min", "track_v", "hull_fn", "hull_x_v", "hull_z")}
        self.reason = None
        self.k = 0
        self.contact = prep.contact

    def _driver_az(self, st) -> float:
        c = self.c
        R = quat_to_matrix(st.q[c, 3:])
        s = R @ self.s_driver
        w = R @ st.v[c, 3:]
        al = R @ st.acc[c, 3:]
        # z of r̈ + α × s + ω × (ω × s)
        ws = np.cross(w, s)
        return float(st.acc[c, 2] + (al[0] * s[1] - al[1] * s[0]) + (w[0] * ws[1] - w[1] * ws[0]))

    def sample(self, st) -> None:
        c = self.c
        R = quat_to_matrix(st.q[c, 3:])
        S = self.samples
        S["t"].append(float(st.t))
        S["x"].append(float(st.q[c, 0]))
        S["z"].append(float(st.q[c, 2]))
        S["pitch"].append(float(math.atan2(R[2, 0], R[0, 0])))
        S["roll"].append(float(math.atan2(R[2, 1], R[2, 2])))
        S["v"].append(float(st.v[c, :3] @ R[:, 0]))
        wx = st.q[self.wheels, 0] if len(self.wheels) else np.full(1, float(st.q[c, 0]))  # no wheels: the chassis
        S["wheel_x_max"].append(float(wx.max()))
        S["wheel_x_min"].append(float(wx.min()))
        S["idler_x_min"].append(float(st.q[self.idlers, 0].min()) if len(self.idlers) else float("nan"))
        rel = st.v[self.sprockets, 4] - st.v[c, 4]
        S["track_v"].append(float(np.mean(rel)) * self.r_sprocket if len(rel) else 0.0)
        fn, xv, zw = 0.0, float("nan"), float("nan")
        if self.contact is not None and hasattr(self.contact, "contacts"):
            try:
                ct = self.contact.contacts()
            except ValueError:
                ct = None
            if ct is not None and len(ct["body_a"]):
                hull = ((ct["body_a"] == c) & (ct["body_b"] < 0)) | ((ct["body_b"] == c) & (ct["body_a"] < 0))
                if hull.any():
                    f = ct["normal_force"][hull]
                    fn = float(f.sum())
                    p = (ct["point"][hull] * f[:, None]).sum(axis=0) / max(fn, 1e-12)
                    pv = R.T @ (p - st.q[c, :3]) + self.com_v
                    xv, zw = float(pv[0]), float(p[2])
        S["hull_fn"].append(fn)
        S["hull_x_v"].append(xv)
        S["hull_z"].append(zw)

    def __call__(self, sim) -> bool:
        st = sim.state
        if self.keep_az and self.n_az < len(self.az):
            self.az[self.n_az] = self._driver_az(st)
            self.az_t[self.n_az] = st.t
            self.n_az += 1
        self.k += 1
        stop = False
        if self.hook is not None:
            stop = bool(self.hook(sim)) or stop
        if self.k % self.every_n == 0:
            self.sample(st)
            S = self.samples
            if not (math.isfinite(S["x"][-1]) and math.isfinite(S["z"][-1]) and abs(S["v"][-1]) < 100.0
                    and abs(S["z"][-1] - S["z"][0]) < 50.0):
                # a blown-up state that the integrator did not flag (finite but absurd): stop now
                self.reason = "diverged"
                return True
            if self.stop_rule is not None and self.reason is None:
                r = self.stop_rule(self)
                if r:
                    self.reason = r
                    stop = True
        return stop

    # -- helpers for stop rules and figures
    def arr(self, key) -> np.ndarray:
        return np.asarray(self.samples[key], float)

    @property
    def t(self) -> float:
        return self.samples["t"][-1] if self.samples["t"] else 0.0

    def driver_acc(self):
        """``(t, a_z)`` at every step (s, m/s²)."""
        return self.az_t[: self.n_az].copy(), self.az[: self.n_az].copy()

    def progressed(self, since: float, dist: float = 0.02) -> bool:
        """True when the chassis reached a new largest x or z (by more than ``dist`` m) after time ``since``."""
        t = self.arr("t")
        if len(t) == 0 or t[-1] < since:
            return True
        before = t < since
        if not before.any():
            return True
        after = ~before
        x, z = self.arr("x"), self.arr("z")
        return bool(x[after].max() > x[before].max() + dist or z[after].max() > z[before].max() + dist)


def moving_average(y, n: int) -> np.ndarray:
    """Centred moving average over ``n`` samples (``n`` ≤ 1: a copy); ends use the samples available."""
    y = np.asarray(y, float)
    n = int(n)
    if n <= 1 or len(y) == 0:
        return y.copy()
    k = np.ones(n)
    num = np.convolve(y, k, mode="same")
    den = np.convolve(np.ones_like(y), k, mode="same")
    return num / den


# ---------------------------------------------------------------------------------------------- failure modes
def classify_failure(mon: Monitor, extent: VehicleExtent, mass: float, window: float = 2.0,
                     fall_depth: float | None = None, z_start: float | None = None) -> str:
    """Failure mode of a failed trial from the monitor's last ``window`` seconds.

    In this order:

    - ``"fell in"`` (when ``fall_depth`` is given): the chassis centre of mass
      dropped more than ``fall_depth`` m below ``z_start`` (into a gap or ditch);
    - ``"nose-in"``: the hull touches the obstacle with its front (the hull
      contact's centre of force in the foremost fifth of the hull) carrying
      more than 5 % of the vehicle's weight on average;
    - ``"high-centred"``: the hull rests on the obstacle further back (the
      belly on an edge), more than 5 % of the weight;
    - ``"track slip"``: the tracks run (mean track speed above 0.1 m/s) at
      more than twice the chassis's forward speed;
    - ``"stalled"``: otherwise — the sprockets do not turn (the torque cannot
      lift the vehicle) or the vehicle is wedged.
    """
    t = mon.arr("t")
    if len(t) == 0:
        return "stalled"
    w = t >= t[-1] - window
    if fall_depth is not None and z_start is not None and mon.arr("z")[w].min() < z_start - fall_depth:
        return "fell in"
    fn = mon.arr("hull_fn")[w]
    weight = mass * G
    if fn.mean() > 0.05 * weight:
        xv = mon.arr("hull_x_v")[w]
        ok = fn > 0
        x_mean = float(np.sum(xv[ok] * fn[ok]) / np.sum(fn[ok]))
        nose = extent.hull_front_x - 0.2 * (extent.hull_front_x - extent.hull_rear_x)
        return "nose-in" if x_mean >= nose else "high-centred"
    tv = np.abs(mon.arr("track_v")[w]).mean()
    v = np.abs(mon.arr("v")[w]).mean()
    if tv > 0.1 and v < 0.5 * tv:
        return "track slip"
    return "stalled"


# ---------------------------------------------------------------------------------------------- running
@dataclass
class TrialRun:
    """What :func:`run_trial` returns: the prepared run, its result, the monitor and timings."""

    prep: object
    result: object
    monitor: Monitor
    reason: str | None
    wall_time_s: float
    build_time_s: float
    tensioning: dict | None = None
    summary: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        return self.result.status


def run_trial(scenario, stop=None, out=None, driver_acc: bool = False, tension: dict | None = None,
              summarize=None, every: float = 0.01) -> TrialRun:
    """Run one trial of an event.

    Parameters
    ----------
    scenario : Scenario
        The run (its ``record`` defaults to :data:`EVENT_RECORD`).
    stop : callable, optional
        ``stop(monitor) -> str or None`` (see :class:`Monitor`).
    out : path, optional
        Results folder of the trial; written atomically after the run with
        ``summary.json`` from ``summarize(trial_run) -> dict``.
    driver_acc : bool
        Keep the driver-seat vertical acceleration at every step
        (``driver_acc.parquet`` in ``out``).
    tension : dict, optional
        Options of the §5.1 tensioning procedure
        (:class:`~trackdyn.experiments.tensioning.Tensioning`); ``None``: the
        builder's tensioner as assembled.
    """
    sc = scenario if scenario.record is not None else scenario.replace(record=EVENT_RECORD)
    t0 = time.perf_counter()
    import warnings

    with warnings.catch_warnings():
        # a removed redundant pin row is expected for closed track loops; the run's metadata keeps it
        warnings.simplefilter("ignore")
        prep = prepare(sc)
    build = time.perf_counter() - t0
    ten = None
    hook = None
    if tension is not None:
        ten = Tensioning(prep, **tension)
        hook = ten
    mon = Monitor(prep, stop=stop, every=every, driver_acc=driver_acc, hook=hook)
    prep.sim.recorder.extra_metadata.update(run_metadata(prep, sc, build))
    t1 = time.perf_counter()
    res = prep.sim.run(sc.t_end, callback=mon)
    wall = time.perf_counter() - t1
    run = TrialRun(prep, res, mon, mon.reason, wall, build, ten.info() if ten is not None else None)
    run.summary = summarize(run) if summarize is not None else {}
    if out is not None:
        write_trial(run, out)
    return run


def write_trial(run: TrialRun, out) -> Path:
    """Write a trial's results folder: the per-step driver acceleration first, ``metadata.json`` last."""
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    if run.monitor.keep_az:
        import pyarrow as pa
        import pyarrow.parquet as pq

        t, az = run.monitor.driver_acc()
        tmp = d / f".driver_acc.parquet.tmp-{os.getpid()}"
        pq.write_table(pa.table({"t": t, "driver.acc.z": az}), tmp, compression="zstd")
        os.replace(tmp, d / "driver_acc.parquet")
    res = run.result
    res.summary = run.summary
    res.metadata["event_trial"] = {"stop_reason": run.reason, "tensioning": run.tensioning}
    res.save(d)
    return d
