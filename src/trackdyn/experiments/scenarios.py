"""Built-in vehicle scenarios: ``settle``, ``accelerate``, ``cruise`` (``trackdyn run NAME``).

Each returns a JSON-ready dict of its figures (and the :class:`Result`).

- ``settle`` (han-sander-mao §3.4): the vehicle starts just above flat
  ground (no throttle, no brake) and comes to rest, its track tensioned by the
  procedure of korner-2024 §5.1 (constant push on a spring-less idler, then
  the spring re-anchored at the idler's mean position). Figures: static
  deflection of every road wheel (wheel radius + shoe thickness - wheel
  centre height above the ground), mean (ITT) and per-shoe track tension,
  idler position, the tensioning record, the time the chassis took to settle.
- ``accelerate``: full throttle from rest on flat ground (μ 0.8) for
  ``t_end`` s after a short settle. Figures: speed at the end, distance,
  largest lateral drift, detracking, monotonic speed rise, and the power
  audit of the throttle phase (:mod:`.power`): sprocket work against the
  change of kinetic, potential and elastic energy plus the work dissipated in
  contacts, dampers and bending springs, each from its own law, and the
  residual (the integrator's numerical dissipation).
- ``cruise``: PID speed and heading (thesis §4.1) at ``speed`` m/s for
  ``distance`` m. Figures: mean speed after 5 s, speed-error RMS, lateral drift.
"""

from __future__ import annotations

import numpy as np

from ..driver import PID, FullThrottle, Idle
from ..math.quaternion import quat_to_matrix
from ..spec.scenario import Scenario
from ..sim.run import prepare
from .power import PowerAudit, power_audit

__all__ = ["SCENARIOS", "settle", "accelerate", "cruise", "detracked", "guide_offset", "guide_slot_tolerance",
           "tracking"]

SETTLE_TIME = 1.5


def _chassis_speed(res):
    vx, vy = res["chassis.vel.x"], res["chassis.vel.y"]
    e0, e3 = res["chassis.quat.e0"], res["chassis.quat.e3"]
    yaw = 2 * np.arctan2(e3, e0)
    return vx * np.cos(yaw) + vy * np.sin(yaw)


def _series(res, name: str, what: str) -> np.ndarray:
    """A body's recorded ``pos`` (T, 3) or ``quat`` (T, 4) series side by side."""
    keys = ("x", "y", "z") if what == "pos" else ("e0", "e1", "e2", "e3")
    return np.column_stack([res[f"{name}.{what}.{k}"] for k in keys])


def guide_slot_tolerance(spec) -> float:
    """Lateral offset (m) of a shoe's guide horn from a wheel's mid-plane beyond which it has left the slot.

    The slot is the gap between the two halves of the road wheels and the idler (``suspension.wheel_gap``);
    the horn (``shoes.guide_width`` wide) has ``(wheel_gap - guide_width) / 2`` of free play either side
    (M113: 5.5 mm) and then bears on a wheel half. Once its centre line has passed the inner face of a half,
    ``wheel_gap / 2`` off the mid-plane (M113: 25.5 mm), more of the horn stands on the wheel half than in
    the slot: it has left the slot.
    """
    gap, width = spec.suspension.wheel_gap, spec.shoes.guide_width
    if not gap > width:
        raise ValueError(f"detracking: suspension.wheel_gap = {gap} m leaves no slot for the guide horn "
                         f"(shoes.guide_width = {width} m)")
    return 0.5 * gap


def guide_offset(prep, res, chunk: int = 256) -> float | None:
    """Largest lateral offset (m) of a shoe's guide horn from the mid-plane of the road wheel or idler it is on.

    A shoe is on a wheel while its centre (on its pin line) lies within the wheel's radius plus the shoe's
    thickness (``top + bottom``) of the wheel's centre, measured in the wheel plane. The horn's offset is
    that of its mid-height point along the chassis y axis (the wheels' axles), so the chassis' yaw and roll
    do not count. None when the run recorded no shoe, wheel or chassis poses (a fidelity without shoes, or a
    record selection without them).
    """
    spec = prep.spec
    sides = list(getattr(prep.vehicle, "sides", {}).values())
    bodies = [n for s in sides for n in (*s.shoes, *s.wheels, s.idler)]
    needed = [f"{n}.pos.x" for n in bodies] + [f"{n}.quat.e0" for s in sides for n in s.shoes] + ["chassis.quat.e0"]
    if not any(s.shoes for s in sides) or any(k not in res for k in needed):
        return None
    sh = spec.shoes
    horn = np.array([0.0, 0.0, sh.top + 0.5 * sh.guide_height])  # shoe frame: z towards the wheels
    ey = quat_to_matrix(_series(res, "chassis", "quat"))[:, :, 1]  # (T, 3)
    worst = 0.0
    for side in sides:
        wheels = [*side.wheels, side.idler]
        reach = np.array([spec.suspension.wheel_radius] * len(side.wheels) + [spec.idler.radius]) + sh.top + sh.bottom
        W = np.stack([_series(res, w, "pos") for w in wheels], axis=1)  # (T, nW, 3)
        P = np.stack([_series(res, n, "pos") for n in side.shoes], axis=1)  # (T, nS, 3)
        Q = np.stack([_series(res, n, "quat") for n in side.shoes], axis=1)  # (T, nS, 4)
        for a in range(0, len(ey), chunk):
            b = slice(a, a + chunk)
            e = ey[b][:, None, None, :]
            dP = P[b][:, :, None, :] - W[b][:, None, :, :]  # shoe centre from wheel centre (t, shoe, wheel, xyz)
            along = np.sum(dP * e, axis=-1)
            on = np.linalg.norm(dP - along[..., None] * e, axis=-1) < reach
            if on.any():
                dH = dP + (quat_to_matrix(Q[b]) @ horn)[:, :, None, :]  # the horn's mid-height point instead
                worst = max(worst, float(np.abs(np.sum(dH * e, axis=-1))[on].max()))
    return worst


def detracked(prep, res, tol: float | None = None) -> bool | None:
    """True when a shoe's guide horn left the guide slot of a road wheel or the idler it is on.

    Its offset (:func:`guide_offset`) exceeds ``tol`` (m), by default :func:`guide_slot_tolerance`: half
    the gap between the wheel halves. None when the run recorded no shoe poses (nothing to judge).
    """
    off = guide_offset(prep, res)
    if off is None:
        return None
    return bool(off > (guide_slot_tolerance(prep.spec) if tol is None else tol))


def tracking(prep, res) -> dict:
    """The run's detracking figures: ``detracked``, ``max_guide_offset_m`` and ``guide_slot_tolerance_m``."""
    off = guide_offset(prep, res)
    tol = guide_slot_tolerance(prep.spec) if off is not None else None
    return {"detracked": None if off is None else bool(off > tol), "max_guide_offset_m": off,
            "guide_slot_tolerance_m": tol}


def settle(vehicle="m113", t_end: float | None = None, step: float | None = None, out=None, tension: bool = True,
           hold_time: float = 0.3, driver=None, **kw) -> dict:
    """Settle on flat ground (no throttle, no brake); with ``tension`` (default) by the §5.1 procedure.

    With a spring tensioner and ``tension=True`` the idler is first pushed
    spring-less with the force that holds the spec's target tension until the
    vehicle is at rest, its position averaged, and the spring re-anchored there
    (:class:`~trackdyn.experiments.tensioning.Tensioning`, korner-2024 §5.1);
    the run ends ``hold_time`` s after that (or at ``t_end``). Without it (or
    with a locked tensioner) the vehicle settles for ``t_end`` s (default
    :data:`SETTLE_TIME`). The mean shoe tension is the mean over the
    averaging window (the thesis's ITT), or over the last 0.2 s.
    """
    from .tensioning import Tensioning, window_means

    spec0 = vehicle if not isinstance(vehicle, str) else None
    if (spec0 if spec0 is not None else Scenario(vehicle=vehicle).vehicle_spec()).running_gear == "wheels":
        return _settle_wheeled(vehicle, t_end, step, out, driver, **kw)
    # no throttle and no brake: the sprocket turns freely, so the tension equalises across it (the brakes
    # would lock in whatever tension difference the drop onto the ground left; on flat ground nothing rolls)
    sc = Scenario(vehicle=vehicle, driver=driver if driver is not None else Idle(), t_end=t_end if t_end is not None else SETTLE_TIME, step=step,
                  output_step=0.01, name="settle", **kw)
    spec = sc.vehicle_spec() if spec0 is None else spec0
    prep = prepare(sc)
    # the procedure needs a built tensioner (a fidelity without shoes, such as massless, has none)
    use_ten = (bool(tension) and spec.idler.tensioner.mode == "spring"
               and any(s.tensioner for s in getattr(prep.vehicle, "sides", {}).values()))
    if use_ten and t_end is None:
        sc = sc.replace(t_end=4.0)  # the procedure ends the run; this is only the upper bound
    ten = Tensioning(prep) if use_ten else None

    def stop(sim):
        if ten is None:
            return False
        ten(sim)
        return ten.phase == "locked" and sim.state.t >= ten.t_lock + hold_time - 1e-9

    res = prep.sim.run(sc.t_end, callback=stop if ten is not None else None, out=out)
    spec = prep.spec
    sus, sh = spec.suspension, spec.shoes
    defl = {}
    for side in prep.vehicle.sides.values():
        for k, w in enumerate(side.wheels):
            defl[w] = float(sus.wheel_radius + sh.top + sh.bottom - res[w + ".pos.z"][-1])
    tensions = {}
    for side in prep.vehicle.sides.values():
        tensions[side.name] = [float(res[f"{side.name}.shoe[{k}].tension"][-1]) for k in range(len(side.shoes))]
    if ten is not None and ten.phase == "locked":
        w = window_means(res, ten.t_free_end, ten.t_lock, spec.chassis.com)
        mean_tension = {s: float(v) for s, v in w["itt_side_N"].items()}
    else:
        w = window_means(res, res.t[-1] - 0.2, res.t[-1], spec.chassis.com)
        mean_tension = {s: float(v) for s, v in w["itt_side_N"].items()}
    z = res["chassis.pos.z"]
    settled = np.nonzero(np.abs(z - z[-1]) > 1e-3)[0]
    t_settle = float(res.t[settled[-1] + 1]) if len(settled) else 0.0
    c = prep.contact.contacts()
    names = prep.sim.system.body_names
    wheel_pen = [float(p) for a, b, p in zip(c["body_a"], c["body_b"], c["penetration"])
                 if (a >= 0 and "roadwheel" in names[a]) or (b >= 0 and "roadwheel" in names[b])]
    status = res.status
    if status == "stopped":  # the procedure ended the run as planned
        status = "complete"
    return {
        "scenario": "settle", "vehicle": spec.name, "status": status,
        "static_deflection_m": defl,
        "mean_deflection_m": float(np.mean(list(defl.values()))),
        "mean_shoe_tension_N": mean_tension,
        "shoe_tension_N": tensions,
        "tensioning": ten.info() if ten is not None else None,
        "idler_x_m": {s: float(res[f"{s}.idler.pos.x"][-1] - res["chassis.pos.x"][-1]) for s in ("left", "right")},
        "max_wheel_shoe_penetration_m": max(wheel_pen) if wheel_pen else 0.0,
        "settle_time_s": t_settle,
        "sim_time_s": prep.sim.state.t, "wall_time_s": prep.sim.wall_time, "steps": prep.sim.steps,
        "step_size_s": prep.sim.h, "wall_per_sim": prep.sim.wall_time / max(prep.sim.state.t, 1e-12),
    }, res


def _settle_wheeled(vehicle, t_end, step, out, driver, **kw) -> tuple:
    """``settle`` of a wheeled vehicle: free to roll (no brake: a braked wheel on a trailing arm holds its arm by
    the tyre's friction), for ``t_end`` s (default 3 s). Figures: every tyre's load and deflection, the
    deflection's difference from load / stiffness (the static tyre law) and the loads' sum against the weight."""
    sc = Scenario(vehicle=vehicle, driver=driver if driver is not None else Idle(),
                  t_end=t_end if t_end is not None else 3.0, step=step, output_step=0.01, name="settle", **kw)
    prep = prepare(sc)
    res = prep.sim.run(sc.t_end, out=out)
    spec, tyres = prep.spec, prep.contact
    g = -float(prep.sim.system.gravity[2]) if hasattr(prep.sim.system, "gravity") else 9.81
    weight = float(np.sum(prep.sim.system.mass)) * g
    loads = {n: float(res[f"{n}.tyre.force.z"][-1]) for n in tyres.names}
    defl = {n: float(res[f"{n}.tyre.deflection"][-1]) for n in tyres.names}
    z = res["chassis.pos.z"]
    moving = np.nonzero(np.abs(z - z[-1]) > 1e-3)[0]
    return {
        "scenario": "settle", "vehicle": spec.name, "status": res.status, "running_gear": "wheels",
        "tyre_load_N": loads, "tyre_deflection_m": defl,
        "mean_deflection_m": float(np.mean(list(defl.values()))),
        "max_deflection_error_m": float(max(abs(defl[n] - loads[n] / spec.tyre.stiffness) for n in loads)),
        "load_sum_N": float(sum(loads.values())), "weight_N": weight,
        "load_sum_error": float(sum(loads.values()) / weight - 1.0),
        "settle_time_s": float(res.t[moving[-1] + 1]) if len(moving) else 0.0,
        "sim_time_s": prep.sim.state.t, "wall_time_s": prep.sim.wall_time, "steps": prep.sim.steps,
        "step_size_s": prep.sim.h, "wall_per_sim": prep.sim.wall_time / max(prep.sim.state.t, 1e-12),
    }, res


def accelerate(vehicle="m113", t_end: float = 20.0, step: float | None = None, out=None, settle_time: float = 1.0,
               audit_power: bool = True, **kw) -> dict:
    """Full throttle for ``t_end`` s after ``settle_time`` s with the brakes on.

    With ``audit_power`` (default) the throttle phase's energy balance is
    taken every step (:class:`~trackdyn.experiments.power.PowerAudit`) and
    returned as ``power_audit`` (:meth:`PowerBalance.to_dict`, J); a run it
    cannot audit (the massless fidelity, another integrator) returns None and
    the reason in ``power_audit_unavailable``.
    """
    sc = Scenario(vehicle=vehicle, driver=FullThrottle(delay=settle_time), t_end=t_end + settle_time, step=step,
                  output_step=0.01, name="accelerate", **kw)
    prep = prepare(sc)
    refusal = PowerAudit.unsupported(prep.sim, prep.contact, prep.drivetrain) if audit_power else "not asked"
    audit = power_audit(prep, start=settle_time) if refusal is None else None
    res = prep.sim.run(sc.t_end, out=out)
    v = _chassis_speed(res)
    t = res.t
    after = t >= settle_time + 1.0
    # monotonic rise after the first second: no drop larger than 0.05 m/s over a 0.5 s window
    vs = v[after]
    win = max(1, int(round(0.5 / 0.01)))
    drops = [vs[i] - vs[i + win] for i in range(len(vs) - win)]
    monotonic = bool(len(drops) == 0 or max(drops) < 0.05)
    x = res["chassis.pos.x"]
    y = res["chassis.pos.y"]
    # energy balance of the throttle phase, every term from its own law (a run that diverged has none)
    power = audit.balance().to_dict() if audit is not None and res.status == "complete" else None
    if power is None:
        refusal = refusal or f"run {res.status}"
    return {
        "scenario": "accelerate", "vehicle": prep.spec.name, "status": res.status,
        "final_speed_mps": float(v[-1]), "distance_m": float(x[-1] - x[0]),
        "max_lateral_drift_m": float(np.max(np.abs(y - y[0]))),
        **tracking(prep, res), "speed_monotonic": monotonic,
        "power_audit": power, **({"power_audit_unavailable": refusal} if power is None else {}),
        "finite": bool(np.all(np.isfinite(res.values))),
        "sim_time_s": prep.sim.state.t, "wall_time_s": prep.sim.wall_time, "steps": prep.sim.steps,
        "step_size_s": prep.sim.h, "wall_per_sim": prep.sim.wall_time / max(prep.sim.state.t, 1e-12),
    }, res


def cruise(vehicle="m113", speed: float = 4.2, distance: float = 100.0, step: float | None = None, out=None,
           settle_time: float = 0.5, **kw) -> dict:
    t_end = settle_time + distance / speed
    sc = Scenario(vehicle=vehicle, driver=PID(speed=speed, y=0.0, delay=0.0), t_end=t_end, step=step,
                  output_step=0.01, speed=speed, name="cruise", **kw)
    prep = prepare(sc)
    res = prep.sim.run(sc.t_end, out=out)
    v = _chassis_speed(res)
    after = res.t >= 5.0
    y = res["chassis.pos.y"]
    return {
        "scenario": "cruise", "vehicle": prep.spec.name, "status": res.status, "target_speed_mps": speed,
        "mean_speed_after_5s_mps": float(np.mean(v[after])) if after.any() else float("nan"),
        "speed_error_rms_mps": float(np.sqrt(np.mean((v[after] - speed) ** 2))) if after.any() else float("nan"),
        "max_speed_error_after_5s_mps": float(np.max(np.abs(v[after] - speed))) if after.any() else float("nan"),
        "lateral_drift_m": float(np.max(np.abs(y - y[0]))), "distance_m": float(res["chassis.pos.x"][-1]
                                                                                - res["chassis.pos.x"][0]),
        **tracking(prep, res),
        "sim_time_s": prep.sim.state.t, "wall_time_s": prep.sim.wall_time, "steps": prep.sim.steps,
        "step_size_s": prep.sim.h, "wall_per_sim": prep.sim.wall_time / max(prep.sim.state.t, 1e-12),
    }, res


SCENARIOS = {"settle": settle, "accelerate": accelerate, "cruise": cruise}
