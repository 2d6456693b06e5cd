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
  torque-limited, stalled, fell in) and :data:`LIMITED_BY`, what limited it
  (geometry, track slip, torque-limited);
- :func:`mechanism_summary` / :func:`mechanism_series`: the mechanism of a
  trial (per-track slip ratio, sprocket torque against the torque map's
  limit, hull contact force and where it acts, road-wheel loads, pitch);
  :func:`peak_source`: the impact that makes a half-round's peak.

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
           "classify_failure", "FAILURE_MODES", "LIMITED_BY", "MECHANISM_KEYS", "slip_ratio", "mechanism_summary",
           "mechanism_series", "peak_source", "moving_average", "G"]

#: Step obstacle material of korner-2024 §4.2.2 (TOP 2-2-611 replaceable timbers): E 10 GPa, μ 0.8.
TIMBER = Material("timber", young=1e10, poisson=0.3, restitution=0.1, friction=0.8)

#: Series an event keeps (an M113 has ~5000 series; these ~400 are what events and figures use).
EVENT_RECORD = ("chassis.*", "driver.*", "*.roadwheel[*].pos.*", "*.idler.pos.*", "*.sprocket.speed",
                "*.sprocket.torque", "*.tensioner.*", "*.shoe[*].tension", "contact.count", "contact.penetration",
                "*.wheel[*].pos.*", "*.wheel[*].tyre.force.z", "*.wheel[*].torque", "*.wheel[*].speed")

FAILURE_MODES = ("nose-in", "high-centred", "track slip", "torque-limited", "stalled", "fell in")

#: What limited a failed trial, by failure mode: the hull's or the gap's geometry, the track-ground
#: friction (the tracks slip), the torque map (saturated, the sprockets stall), or not determined.
LIMITED_BY = {"nose-in": "geometry", "high-centred": "geometry", "fell in": "geometry",
              "track slip": "track slip", "torque-limited": "torque-limited", "stalled": "undetermined"}

#: Monitor samples of the mechanism (per track: ``left_*``, ``right_*``).
MECHANISM_KEYS = tuple(f"{side}_{k}" for side in ("left", "right")
                       for k in ("track_v", "ground_v", "slip", "torque", "torque_limit")) + (
    "wheel_loads", "wheel_load_sum", "throttle")

#: Thresholds of :func:`classify_failure` (fractions, m/s).
HULL_LOAD_FRACTION = 0.05   # hull contact force above this fraction of the chassis weight: geometry
SLIP_LIMIT = 0.5            # mean slip ratio above this: the tracks slip (friction-limited)
TRACK_STALL_SPEED = 0.1     # track speed below this (m/s): the sprockets stall
TORQUE_SATURATION = 0.95    # sprocket torque at least this fraction of the map's limit: saturated


def slip_ratio(track_v: float, ground_v: float, floor: float = 0.1) -> float:
    """Longitudinal slip of a track: ``(v_track - v_ground) / max(|v_track|, |v_ground|, floor)``.

    ``v_track`` is the sprocket's pitch-radius speed relative to the hull
    (m/s), ``v_ground`` the hull's forward speed over the ground at the track.
    1: the track runs, the vehicle stands (full slip); 0: rolling without
    slip; negative: the track is slower than the ground (braking skid).
    ``floor`` (m/s) keeps a standing vehicle with standing tracks at 0.
    """
    return float((track_v - ground_v) / max(abs(track_v), abs(ground_v), floor))


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
        # a wheeled vehicle's sides have no sprocket (its drive figures per track are then absent)
        self.sprockets = np.array([names[s.sprocket] for s in sides if s.sprocket is not None], dtype=np.int64)
        sprocket = getattr(prep.spec, "sprocket", None)
        self.r_sprocket = sprocket.assembly_radius if sprocket is not None else float("nan")
        self.com_v = np.asarray(prep.spec.chassis.com, float)
        marker = [m for m in sim.model.markers if m[0] == "driver"]
        self.s_driver = np.asarray(marker[0][2], float) if marker else None
        self.keep_az = bool(driver_acc) and self.s_driver is not None
        n_max = int(math.ceil(prep.scenario.t_end / sim.h)) + 2
        self.az = np.full(n_max if self.keep_az else 0, np.nan)
        self.az_t = np.full(n_max if self.keep_az else 0, np.nan)
        self.n_az = 0
        self.samples = {k: [] for k in ("t", "x", "z", "pitch", "roll", "v", "wheel_x_max", "wheel_x_min",
                                        "idler_x_min", "track_v", "hull_fn", "hull_x_v", "hull_z")
                        + MECHANISM_KEYS}
        self.reason = None
        self.k = 0
        self.contact = prep.contact
        # force providers whose contacts load bodies outside the contact system (the ancf chain's on the wheels)
        self.load_providers = [p for p in getattr(sim.system, "providers", ()) if hasattr(p, "contact_loads")]
        # mechanism of a limit (docs/events.md, "Failure modes and what limited the trial"): per track, its
        # lateral position and the drivetrain's slot of its sprocket; the road wheels whose contacts load them
        self.side_names = [s.name for s in sides]
        self.side_y = np.array([s.y for s in sides], float)
        dt = getattr(prep, "drivetrain", None)
        self.drivetrain = dt if dt is not None and hasattr(dt, "out") and hasattr(dt, "map_w") else None
        self.dt_slot = (np.array([int(np.nonzero(dt.sprockets == b)[0][0]) if np.any(dt.sprockets == b) else -1
                                  for b in self.sprockets], dtype=np.int64) if self.drivetrain is not None
                        else np.full(len(self.sprockets), -1, dtype=np.int64))
        self.wheel_names = [w for s in sides for w in s.wheels]
        self._wheel_order = np.argsort(self.wheels)
        self._wheel_sorted = self.wheels[self._wheel_order]
        # per-step impact record (half-round): vertical acceleration of every road wheel and idler, and the
        # hull contact force, so the event can say which impact made the driver-seat peak
        self.impact_bodies = np.concatenate([self.wheels, self.idlers]) if self.keep_az else np.zeros(0, np.int64)
        self.impact_names = ([n for n in self.wheel_names]
                             + [s.idler for s in sides if s.idler in names]) if self.keep_az else []
        self.impact_az = np.full((n_max if self.keep_az else 0, len(self.impact_bodies)), np.nan)
        self.impact_hull = np.full(n_max if self.keep_az else 0, np.nan)
        # and each torsion arm's angle below the horizontal (hull frame; the torsion bar's θ, against its jounce
        # stop): does a wheel's peak come from its bar's stop?
        arms = [a for s in sides for a in s.arms]
        sus = getattr(prep.spec, "suspension", None)  # a wheeled vehicle's arms have no torsion bar and no stop
        torsion = getattr(sus, "torsion", None)
        self.arm_bodies = (np.array([names[a] for a in arms], dtype=np.int64)
                           if self.keep_az and len(arms) == len(self.wheels) and torsion is not None
                           else np.zeros(0, np.int64))
        self.arm_trailing = bool(sus.trailing) if sus is not None else True
        self.jounce_limit = float(torsion.jounce_limit) if torsion is not None else float("nan")
        self.impact_theta = np.full((n_max if len(self.arm_bodies) else 0, len(self.arm_bodies)), np.nan)

    def _arm_angles(self, st) -> np.ndarray:
        """Each torsion arm's angle below the horizontal of the hull (rad), pivot to wheel centre."""
        R = quat_to_matrix(st.q[self.c, 3:])
        # the arm's centre of mass is midway between pivot and wheel centre: wheel - pivot = 2 (wheel - arm)
        d = 2.0 * (st.q[self.wheels, :3] - st.q[self.arm_bodies, :3]) @ R  # hull frame
        dx = -d[:, 0] if self.arm_trailing else d[:, 0]
        return np.arctan2(-d[:, 2], dx)

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
        ct = self._contacts()
        fn, xv, zw = 0.0, float("nan"), float("nan")
        loads = np.zeros(len(self.wheels))
        if ct is not None:
            fn, p = self._hull_force(ct)
            if fn > 0.0:
                pv = R.T @ (p - st.q[c, :3]) + self.com_v
                xv, zw = float(pv[0]), float(p[2])
            loads = self._wheel_loads(ct, R[:, 2])
        if self.load_providers:
            loads = loads + self._provider_wheel_loads(R[:, 2])
        S["hull_fn"].append(fn)
        S["hull_x_v"].append(xv)
        S["hull_z"].append(zw)
        self._sample_mechanism(st, R, loads)

    # -- mechanism of a limit
    def _contacts(self):
        if self.contact is None or not hasattr(self.contact, "contacts"):
            return None
        try:
            ct = self.contact.contacts()
        except ValueError:
            return None
        # NSC lists its contacts' forces once a step has staged its impulses
        return ct if len(ct["body_a"]) and "normal_force" in ct else None

    def _hull_force_now(self) -> float:
        """The hull's total contact force with the terrain at the last evaluation (N), without copying the
        contact arrays when the contact system lends its buffers (every step of a half-round)."""
        if self.contact is not None and hasattr(self.contact, "records"):
            try:
                rec, out, n = self.contact.records()
            except ValueError:  # nothing evaluated yet, or no records (NSC): contacts() below
                rec = None
            if rec is not None:
                b, fn, c = rec.body[:n], out.fn[:n], self.c
                hull = (((b[:, 0] == c) & (b[:, 1] < 0)) | ((b[:, 1] == c) & (b[:, 0] < 0))) & (fn > 0)
                return float(fn[hull].sum())
        ct = self._contacts()
        return self._hull_force(ct)[0] if ct is not None else 0.0

    def _hull_force(self, ct):
        """Total normal force (N) of the chassis's contacts with the terrain and its centre of force (world)."""
        c = self.c
        hull = ((ct["body_a"] == c) & (ct["body_b"] < 0)) | ((ct["body_b"] == c) & (ct["body_a"] < 0))
        if not hull.any():
            return 0.0, None
        f = ct["normal_force"][hull]
        fn = float(f.sum())
        return fn, (ct["point"][hull] * f[:, None]).sum(axis=0) / max(fn, 1e-12)

    def _wheel_loads(self, ct, up):
        """Load of each road wheel (N, ``self.wheels`` order): its net contact force along the hull's z axis ``up``.

        Every contact of the wheel (the bottom strand's shoes it rolls on pushes it up; the upper strand
        resting on it pushes it down; the guide horns push sideways and do not count) projected on the
        hull's vertical: what the wheel carries towards its arm.
        """
        n = len(self.wheels)
        if n == 0:
            return np.zeros(0)
        # the normal force pushes body_b along the normal and body_a against it; a contact set without normals
        # (the massless track's track-terrain forces on the wheels) is taken as pushing along the hull's vertical
        nrm = ct.get("normal")
        fz = ct["normal_force"] * (nrm @ up) if nrm is not None else ct["normal_force"]
        out = np.zeros(n)
        for side, sign in (("body_a", -1.0), ("body_b", 1.0)):
            b = ct[side]
            pos = np.clip(np.searchsorted(self._wheel_sorted, b), 0, n - 1)
            hit = self._wheel_sorted[pos] == b
            np.add.at(out, self._wheel_order[pos[hit]], sign * fz[hit])
        return out

    def _provider_wheel_loads(self, up):
        """The road wheels' loads (N, ``self.wheels`` order) from the force providers' contacts
        (``contact_loads()``: bodies and the world force on each), along the hull's z axis ``up``."""
        n = len(self.wheels)
        out = np.zeros(n)
        if n == 0:
            return out
        for prov in self.load_providers:
            b, F = prov.contact_loads()
            pos = np.clip(np.searchsorted(self._wheel_sorted, b), 0, n - 1)
            hit = self._wheel_sorted[pos] == b
            np.add.at(out, self._wheel_order[pos[hit]], F[hit] @ up)
        return out

    def _sample_mechanism(self, st, R, loads) -> None:
        """Per track: track speed, ground speed, slip ratio, sprocket torque and the map's limit at that speed."""
        from ..powertrain import sprocket_torque

        S = self.samples
        c = self.c
        v = S["v"][-1]
        yaw_rate = float(st.v[c, 5])
        dt = self.drivetrain
        for side in ("left", "right"):
            k = self.side_names.index(side) if side in self.side_names else -1
            if k < 0 or k >= len(self.sprockets):
                for key in ("track_v", "ground_v", "slip", "torque", "torque_limit"):
                    S[f"{side}_{key}"].append(float("nan"))
                continue
            ws = float(st.v[self.sprockets[k], 4] - st.v[c, 4])
            track_v = ws * self.r_sprocket
            # the chassis's forward speed where this track runs (y of the track): v - r_z y
            ground_v = v - yaw_rate * float(self.side_y[k])
            S[f"{side}_track_v"].append(track_v)
            S[f"{side}_ground_v"].append(ground_v)
            S[f"{side}_slip"].append(slip_ratio(track_v, ground_v))
            e = int(self.dt_slot[k])
            if dt is not None and e >= 0:
                S[f"{side}_torque"].append(float(dt.out[e, 0]))
                lim, _ = sprocket_torque(float(dt.out[e, 1]), 1.0, 0.0, 0.0, dt.map_w, dt.map_t, dt.map_scale)
                S[f"{side}_torque_limit"].append(float(lim))
            else:
                S[f"{side}_torque"].append(float("nan"))
                S[f"{side}_torque_limit"].append(float("nan"))
        S["wheel_loads"].append(np.asarray(loads, float).tolist())
        S["wheel_load_sum"].append(float(np.sum(loads)))
        S["throttle"].append(float(dt.inputs[0]) if dt is not None and hasattr(dt, "inputs") else float("nan"))

    def __call__(self, sim) -> bool:
        st = sim.state
        if self.keep_az and self.n_az < len(self.az):
            self.az[self.n_az] = self._driver_az(st)
            self.az_t[self.n_az] = st.t
            if len(self.impact_bodies):
                self.impact_az[self.n_az] = st.acc[self.impact_bodies, 2]
            if len(self.arm_bodies):
                self.impact_theta[self.n_az] = self._arm_angles(st)
            self.impact_hull[self.n_az] = self._hull_force_now()
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
def _col(mon, key):
    """A monitor column as an array, or ``None`` when the monitor has no such samples."""
    v = mon.samples.get(key) if hasattr(mon, "samples") else None
    if v is None or len(v) == 0:
        return None
    return np.asarray(v, float)


def _track_cols(mon, what):
    """``(n_samples, n_tracks)`` of a per-track column (``left_*``, ``right_*``), or ``None``."""
    cols = [c for c in (_col(mon, f"{side}_{what}") for side in ("left", "right")) if c is not None]
    return np.column_stack(cols) if cols else None


def mechanism_summary(mon, mass: float, window: float = 2.0) -> dict:
    """The mechanism figures of a trial over the monitor's last ``window`` seconds (means unless stated).

    Keys: ``window_s``; per track (``left``, ``right``) ``slip`` (slip ratio,
    :func:`slip_ratio`), ``track_speed_mps``, ``ground_speed_mps``,
    ``torque_Nm`` and ``torque_limit_Nm`` (the torque map at that sprocket
    speed, full throttle) and ``torque_fraction`` (their ratio);
    ``hull_force_N`` (mean and ``hull_force_max_N``), ``hull_force_fraction``
    (of the chassis weight), ``hull_x_m`` (vehicle-frame x of the hull's
    centre of force, force-weighted; ``None`` without contact), ``hull_z_m``
    (world z); ``wheel_loads_N`` (each road wheel's normal contact force,
    the monitor's wheel order: left front to rear, then right),
    ``wheel_load_fraction`` (their sum over the chassis weight); ``pitch_deg``
    (mean), ``pitch_max_deg``; ``speed_mps`` (chassis forward speed);
    ``throttle``; ``tracks``: what the tracks did (``slipping``, ``stalled
    at the map's limit``, ``stalled below the map's limit``, ``rolling``) —
    under a geometry failure, whether the tracks slipped or stalled too.
    """
    t = _col(mon, "t")
    if t is None:
        return {"window_s": None}
    w = t >= t[-1] - window
    weight = mass * G

    def mean(key):
        c = _col(mon, key)
        return float(np.nanmean(c[w])) if c is not None and np.isfinite(c[w]).any() else None

    out = {"window_s": [float(t[w][0]), float(t[-1])], "speed_mps": mean("v"), "throttle": mean("throttle")}
    for side in ("left", "right"):
        d = {"slip": mean(f"{side}_slip"), "track_speed_mps": mean(f"{side}_track_v"),
             "ground_speed_mps": mean(f"{side}_ground_v"), "torque_Nm": mean(f"{side}_torque"),
             "torque_limit_Nm": mean(f"{side}_torque_limit")}
        d["torque_fraction"] = (d["torque_Nm"] / d["torque_limit_Nm"]
                                if d["torque_Nm"] is not None and d["torque_limit_Nm"] else None)
        out[side] = d
    fn = _col(mon, "hull_fn")
    if fn is not None:
        f = fn[w]
        out["hull_force_N"] = float(f.mean())
        out["hull_force_max_N"] = float(f.max())
        out["hull_force_fraction"] = float(f.mean() / weight)
        xv, zw = _col(mon, "hull_x_v"), _col(mon, "hull_z")
        ok = f > 0
        out["hull_x_m"] = float(np.sum(xv[w][ok] * f[ok]) / np.sum(f[ok])) if ok.any() and xv is not None else None
        out["hull_z_m"] = float(np.sum(zw[w][ok] * f[ok]) / np.sum(f[ok])) if ok.any() and zw is not None else None
    loads = mon.samples.get("wheel_loads") if hasattr(mon, "samples") else None
    if loads:
        L = np.asarray(loads, float)[w]
        out["wheel_loads_N"] = [float(x) for x in L.mean(axis=0)]
        out["wheel_load_fraction"] = float(L.sum(axis=1).mean() / weight)
    p = _col(mon, "pitch")
    if p is not None:
        out["pitch_deg"] = float(np.degrees(p[w].mean()))
        out["pitch_max_deg"] = float(np.degrees(p[w][np.argmax(np.abs(p[w]))]))
    out["tracks"] = _track_state(out)
    return out


def _track_state(summary) -> str | None:
    """What the tracks did in a summary's window (the thresholds of :func:`classify_failure`):
    ``"slipping"``, ``"stalled at the map's limit"``, ``"stalled below the map's limit"`` or ``"rolling"``."""
    sides = [summary.get(s) or {} for s in ("left", "right")]
    tv = [abs(d["track_speed_mps"]) for d in sides if d.get("track_speed_mps") is not None]
    if not tv:
        return None
    slip = [d["slip"] for d in sides if d.get("slip") is not None]
    frac = [d["torque_fraction"] for d in sides if d.get("torque_fraction") is not None]
    if np.mean(tv) > TRACK_STALL_SPEED:
        return "slipping" if slip and np.mean(slip) > SLIP_LIMIT else "rolling"
    if frac and np.mean(frac) >= TORQUE_SATURATION:
        return "stalled at the map's limit"
    return "stalled below the map's limit"


def mechanism_series(mon, dt: float = 0.05, keep: float | None = None) -> dict:
    """Time series of the mechanism, resampled every ``dt`` s (the last ``keep`` s, or all).

    ``{"t": [...], "pitch_deg", "speed_mps", "hull_force_N", "hull_x_m",
    "left_slip", "right_slip", "left_torque_Nm", "left_torque_limit_Nm", ...,
    "wheel_loads_N": [[per wheel] per sample]}`` — what the mechanism figure
    (:mod:`trackdyn.viz.mechanism`) draws for the last success and the first
    failure of a limit search.
    """
    t = _col(mon, "t")
    if t is None:
        return {"t": []}
    t0 = t[0] if keep is None else max(t[0], t[-1] - keep)
    k = np.unique(np.searchsorted(t, np.arange(t0, t[-1] + 1e-9, dt)).clip(0, len(t) - 1))

    def col(key, scale=1.0, nd=4):
        c = _col(mon, key)
        return None if c is None else [None if not np.isfinite(x) else round(float(x) * scale, nd) for x in c[k]]

    out = {"t": [round(float(x), 4) for x in t[k]], "pitch_deg": col("pitch", 180.0 / math.pi, 3),
           "speed_mps": col("v"), "hull_force_N": col("hull_fn", 1.0, 1), "hull_x_m": col("hull_x_v")}
    for side in ("left", "right"):
        out[f"{side}_slip"] = col(f"{side}_slip")
        out[f"{side}_track_speed_mps"] = col(f"{side}_track_v")
        out[f"{side}_torque_Nm"] = col(f"{side}_torque", 1.0, 1)
        out[f"{side}_torque_limit_Nm"] = col(f"{side}_torque_limit", 1.0, 1)
    loads = mon.samples.get("wheel_loads")
    if loads:
        L = np.asarray(loads, float)[k]
        out["wheel_loads_N"] = np.round(L, 1).tolist()
    names = getattr(mon, "wheel_names", None)
    if names:
        out["wheel_names"] = list(names)
    return out


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
    - ``"track slip"`` (friction-limited): the tracks run (mean track speed
      above 0.1 m/s) and slip: the mean slip ratio of the tracks
      (:func:`slip_ratio`, per track from the sprocket's pitch-radius speed
      and the hull's ground speed) is above 0.5 — without per-track samples,
      the mean track speed is more than twice the chassis's forward speed;
    - ``"torque-limited"``: the sprockets stall (track speed below 0.1 m/s)
      with the drive torque at the torque map's limit for that speed (at
      least 95 %: the map is saturated, the torque cannot lift the vehicle);
    - ``"stalled"``: otherwise (the tracks stand but the torque is below the
      map's limit — the driver does not ask for it — or no torque was
      recorded).

    :data:`LIMITED_BY` maps the mode to what limited the trial (``geometry``,
    ``track slip``, ``torque-limited``); :func:`mechanism_summary` gives the figures.
    """
    t = mon.arr("t")
    if len(t) == 0:
        return "stalled"
    w = t >= t[-1] - window
    if fall_depth is not None and z_start is not None and mon.arr("z")[w].min() < z_start - fall_depth:
        return "fell in"
    fn = mon.arr("hull_fn")[w]
    weight = mass * G
    if fn.mean() > HULL_LOAD_FRACTION * weight:
        xv = mon.arr("hull_x_v")[w]
        ok = fn > 0
        x_mean = float(np.sum(xv[ok] * fn[ok]) / np.sum(fn[ok]))
        nose = extent.hull_front_x - 0.2 * (extent.hull_front_x - extent.hull_rear_x)
        return "nose-in" if x_mean >= nose else "high-centred"
    track_v = _track_cols(mon, "track_v")
    slip = _track_cols(mon, "slip")
    if track_v is not None and slip is not None and np.isfinite(track_v[w]).any() and np.isfinite(slip[w]).any():
        tv = float(np.nanmean(np.abs(track_v[w])))
        if tv > TRACK_STALL_SPEED and float(np.nanmean(slip[w])) > SLIP_LIMIT:
            return "track slip"
    else:
        tv = np.abs(mon.arr("track_v")[w]).mean()
        v = np.abs(mon.arr("v")[w]).mean()
        if tv > TRACK_STALL_SPEED and v < 0.5 * tv:
            return "track slip"
    torque, limit = _track_cols(mon, "torque"), _track_cols(mon, "torque_limit")
    if tv <= TRACK_STALL_SPEED and torque is not None and limit is not None:
        ok = np.isfinite(torque[w]) & np.isfinite(limit[w]) & (limit[w] > 0)
        if ok.any() and float(np.mean(torque[w][ok] / limit[w][ok])) >= TORQUE_SATURATION:
            return "torque-limited"
    return "stalled"


def peak_source(mon: Monitor, t_peak: float, window: float = 0.005) -> dict | None:
    """Which impact makes the driver-seat peak at ``t_peak``: the road wheel, idler or hull hit hardest.

    Within ``window`` s of the peak, the body among the road wheels and
    idlers with the largest vertical acceleration |a_z| (world, per step) is
    the impact; the hull is the source instead when its contact force with
    the terrain in the window exceeds the weight of the chassis. Returns
    ``{"source", "t_s" (time of that body's largest |a_z|), "accel_g",
    "hull_force_N" (largest in the window), "candidates": {name: |a_z| g}}``
    (the three largest), and for a road wheel on a torsion arm
    ``arm_angle_min_deg`` (its arm's smallest angle below the hull's
    horizontal in the window), ``jounce_limit_deg`` and ``on_jounce_stop``
    (the bar was past its jounce limit, Table 3.8); ``None`` without per-step
    records.
    """
    n = getattr(mon, "n_az", 0)  # a monitor without per-step records (or a stand-in) has no impacts to name
    if n == 0 or t_peak is None or not len(getattr(mon, "impact_bodies", ())):
        return None
    t = mon.az_t[:n]
    w = np.abs(t - t_peak) <= window + 1e-12
    if not w.any():
        return None
    A = np.abs(mon.impact_az[:n][w])
    best = np.nanmax(A, axis=0)
    order = np.argsort(-np.nan_to_num(best, nan=-1.0))
    k = int(order[0])
    i = int(np.nanargmax(A[:, k]))
    hull = float(np.nanmax(mon.impact_hull[:n][w])) if np.isfinite(mon.impact_hull[:n][w]).any() else 0.0
    weight = float(mon.prep.spec.chassis.mass) * G
    src = "hull" if hull > weight else mon.impact_names[k]
    out = {"source": src, "t_s": float(t[w][i]) if src != "hull" else
           float(t[w][int(np.nanargmax(mon.impact_hull[:n][w]))]),
           "accel_g": float(best[k] / G), "hull_force_N": hull,
           "candidates": {mon.impact_names[j]: float(best[j] / G) for j in order[:3] if np.isfinite(best[j])}}
    theta = getattr(mon, "impact_theta", np.zeros((0, 0)))
    if src != "hull" and k < theta.shape[1]:
        # the source wheel's torsion arm: its smallest angle in the window against the jounce stop
        th = float(np.nanmin(theta[:n][w][:, k]))
        out["arm_angle_min_deg"] = math.degrees(th)
        out["jounce_limit_deg"] = math.degrees(mon.jounce_limit)
        out["on_jounce_stop"] = bool(th < mon.jounce_limit)
    return out


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
