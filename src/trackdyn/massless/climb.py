"""The stairs scene: a vehicle drives at a flight of stairs; did it climb, and if not, why.

:func:`stairs_scene` is the terrain (flat approach, ``n`` steps of ``riser``
and ``tread``, the landing at the top); :func:`climb_stairs` runs a vehicle
(default the ``robot``, massless fidelity) at it under a PID speed driver,
stops when the outcome is decided and classifies it with :func:`classify`:

- ``"climbed"``: the hull rose by the flight's height and the whole track
  passed the last nosing;
- ``"overturned"``: pitch or roll beyond 75° (the vehicle tipped over,
  typically backwards off a riser it could not take) — an outcome the
  mobility events of issue #7 do not name, reported as such;
- otherwise the failure classes of the events issue, by the same rules
  (:func:`trackdyn.experiments.trials.classify_failure`), from the last
  ``window`` seconds: ``"nose-in"`` (the hull carries more than 5 % of the
  weight on its front fifth), ``"high-centred"`` (the hull carries it further
  back), ``"track slip"`` (the tracks run at more than twice the hull's
  forward speed, above 0.1 m/s), ``"stalled"`` (neither: the drive cannot
  lift the vehicle).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["stairs_scene", "climb_stairs", "classify", "OUTCOMES"]

G = 9.81
OUTCOMES = ("climbed", "overturned", "nose-in", "high-centred", "track slip", "stalled")


def stairs_scene(riser: float = 0.17, tread: float = 0.28, n: int = 5, x: float = 1.2, material=None):
    """Flat ground with a flight of ``n`` stairs whose first riser stands at ``x`` (m)."""
    from ..terrain import Flat, Stairs

    return Flat(material=material) + Stairs(riser=riser, tread=tread, n=n, x=x, material=material)


def _pitch_roll(res):
    e0, e1, e2, e3 = (res[f"chassis.quat.e{k}"] for k in range(4))
    # R[2, 0] = 2 (e1 e3 - e0 e2), R[0, 0] = 1 - 2 (e2² + e3²), R[2, 1] = 2 (e2 e3 + e0 e1), R[2, 2] = 1 - 2 (e1² + e2²)
    pitch = np.arctan2(2 * (e1 * e3 - e0 * e2), 1 - 2 * (e2 * e2 + e3 * e3))  # nose up positive
    roll = np.arctan2(2 * (e2 * e3 + e0 * e1), 1 - 2 * (e1 * e1 + e2 * e2))
    return pitch, roll


def classify(res, spec, rise: float, last_nosing_x: float, rear_offset: float, hull_front_x: float,
             hull_rear_x: float, mass: float, window: float = 2.0, z0: float | None = None) -> str:
    """Outcome of a stairs run from its recorded series (see the module docstring).

    Parameters
    ----------
    res : Result
        Needs ``chassis.pos.*``, ``chassis.quat.*``, ``chassis.vel.*``,
        ``left/right.track.speed``, ``hull.contact.force.*``, ``hull.contact.x``.
    rise : float
        Height of the flight, m.
    last_nosing_x : float
        World x of the last riser, m.
    rear_offset : float
        Vehicle-frame x of the rear of the track minus the chassis centre of mass, m.
    hull_front_x, hull_rear_x : float
        Vehicle-frame extent of the hull, m.
    """
    t = res.t
    z = res["chassis.pos.z"]
    x = res["chassis.pos.x"]
    z0 = float(z[0]) if z0 is None else z0
    pitch, roll = _pitch_roll(res)
    if np.nanmax(np.abs(pitch)) > math.radians(75.0) or np.nanmax(np.abs(roll)) > math.radians(75.0):
        return "overturned"
    # the rear of the track (along the hull's x axis from the centre of mass) beyond the last nosing
    rear_x = x + rear_offset * np.cos(pitch)
    if z[-1] - z0 > rise - 0.05 * max(rise, 0.1) and rear_x[-1] > last_nosing_x:
        return "climbed"
    w = t >= t[-1] - window
    fz = res["hull.contact.force.z"][w]
    weight = mass * G
    if np.mean(np.abs(fz)) > 0.05 * weight:
        hx = res["hull.contact.x"][w]
        ok = np.abs(fz) > 0
        xm = float(np.sum(hx[ok] * np.abs(fz[ok])) / np.sum(np.abs(fz[ok])))
        nose = hull_front_x - 0.2 * (hull_front_x - hull_rear_x)
        return "nose-in" if xm >= nose else "high-centred"
    vfwd = np.hypot(res["chassis.vel.x"], res["chassis.vel.y"])[w]
    tv = 0.5 * (np.abs(res["left.track.speed"][w]) + np.abs(res["right.track.speed"][w]))
    if tv.mean() > 0.1 and vfwd.mean() < 0.5 * tv.mean():
        return "track slip"
    return "stalled"


def climb_stairs(vehicle="robot", riser: float = 0.17, tread: float = 0.28, n: int = 5, speed: float = 0.5,
                 approach: float = 0.4, t_max: float | None = None, stall_time: float = 4.0, step: float = 2e-3,
                 output_step: float = 0.02, fidelity: str = "massless", options: dict | None = None, out=None):
    """Drive ``vehicle`` at a flight of stairs with a PID speed driver; returns ``(summary, result)``.

    The vehicle starts with its front ``approach`` m before the first riser.
    The run stops when the vehicle has climbed (and rolled 0.3 m onto the
    landing), when it has made no progress (2 cm in x or z) for ``stall_time``
    s, when it overturned, or at ``t_max`` (default: twice the time the
    flight takes at ``speed``, plus 5 s). ``summary["outcome"]`` is one of
    :data:`OUTCOMES`.
    """
    from ..assembly.builder import vehicle_geometry
    from ..driver import PID
    from ..sim.run import prepare
    from ..spec.io import get
    from ..spec.scenario import Scenario

    spec = get(vehicle) if isinstance(vehicle, str) else vehicle
    geo = vehicle_geometry(spec)
    pins = np.concatenate([t.pins for t in geo.tracks.values()])
    front_v = float(pins[:, 0].max() + spec.shoes.bottom)
    rear_v = float(pins[:, 0].min() - spec.shoes.bottom)
    x_riser = 1.0 + front_v + approach  # start_x = 1 m: the vehicle frame's origin
    terrain = stairs_scene(riser, tread, n, x=x_riser)
    last_nosing = x_riser + (n - 1) * tread
    run_len = (last_nosing - x_riser) + (front_v - rear_v) + approach + 0.3
    if t_max is None:
        t_max = 2.0 * run_len / speed + 5.0
    sc = Scenario(vehicle=spec, terrain=terrain, driver=PID(speed=speed, y=0.0), t_end=t_max, fidelity=fidelity,
                  step=step, output_step=output_step, start_x=1.0, name="stairs", options=dict(options or {}))
    prep = prepare(sc)
    sim = prep.sim
    com_v = np.asarray(getattr(prep.vehicle, "com", spec.chassis.com), float)
    C = sim.system.body_names.index("chassis")
    rise = n * riser
    state = {"best": -np.inf, "t_best": 0.0, "z0": None, "outcome": None}
    every = max(1, int(round(0.05 / sim.h)))

    def stop(s):
        if s.steps % every:
            return False
        q = s.state.q[C]
        if state["z0"] is None:
            state["z0"] = float(q[2])
        prog = float(q[0]) + float(q[2])
        if prog > state["best"] + 0.02:
            state["best"], state["t_best"] = prog, s.state.t
        e0, e1, e2, e3 = q[3:]
        r20 = 2 * (e1 * e3 - e0 * e2)
        r21 = 2 * (e2 * e3 + e0 * e1)
        if abs(r20) > math.sin(math.radians(75.0)) or abs(r21) > math.sin(math.radians(75.0)):
            return True
        rear_x = float(q[0]) + (rear_v - com_v[0]) * math.sqrt(max(0.0, 1 - r20 * r20))
        if q[2] - state["z0"] > rise - 0.05 * max(rise, 0.1) and rear_x > last_nosing + 0.3:
            return True
        return s.state.t - state["t_best"] > stall_time

    res = sim.run(t_max, callback=stop, out=out)
    hull = [(np.asarray(c) - h, np.asarray(c) + h) for c, h in
            ((np.asarray(b.center), 0.5 * np.asarray(b.size)) for b in spec.chassis.hull)]
    hull_front = max(b[1][0] for b in hull) if hull else front_v
    hull_rear = min(b[0][0] for b in hull) if hull else rear_v
    mass = float(np.sum(sim.system.mass))
    outcome = classify(res, spec, rise, last_nosing, rear_v - com_v[0], hull_front, hull_rear, mass,
                       z0=state["z0"]) if res.status == "complete" or res.status == "stopped" else res.status
    pitch, _ = _pitch_roll(res)
    z = res["chassis.pos.z"]
    summary = {
        "scene": "stairs", "vehicle": spec.name, "fidelity": fidelity, "riser_m": riser, "tread_m": tread, "steps": n,
        "speed_mps": speed, "outcome": outcome, "status": res.status,
        "rise_m": float(z.max() - z[0]), "max_pitch_deg": float(np.degrees(np.nanmax(pitch))),
        "time_s": float(res.t[-1]), "sim_time_s": sim.state.t, "wall_time_s": sim.wall_time,
        "wall_per_sim": sim.wall_time / max(sim.state.t, 1e-12), "step_size_s": sim.h,
    }
    return summary, res
