"""Cross-fidelity conformance: the same scenarios on every registered fidelity, compared with ``links``.

Brax-style agreement of a cheaper formulation with the reference one
(STYLE.md): :func:`run_conformance` runs the :data:`CONFORMANCE_SCENARIOS`
through :func:`trackdyn.sim.run.prepare` (so any registered fidelity runs,
with nothing but its registration) and measures the chassis figures of
:func:`chassis_metrics`; :func:`compare` holds a fidelity's figures against
the reference's with the tolerances the fidelity declares in
``FormulationInfo.conformance`` (``(scenario, metric, tolerance, reason)``:
the reason says what in the physics makes the two differ by that much).

Scenarios (on the M113, or on the vehicle a fidelity declares in
``FormulationInfo.conformance_vehicle``; a fidelity runs the scenarios its
tolerance rows name):

- ``settle``: dropped 5 mm onto flat ground, brakes on, 3 s; the height of
  the vehicle frame's origin (the sprocket axis) above the ground and the
  pitch at the end, and the mean forward speed over the last second;
- ``bump``: a rolling start at 4 m/s under the PID driver over a 10 cm, 1 m
  cosine bump whose start is 2 m ahead of the track's front; the largest
  rise of the chassis centre of mass over its start height, the largest
  pitch either way, and the mean forward speed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..assembly.extent import vehicle_extent
from ..driver import PID, Brake
from ..formulations.contract import formulation_names, get_formulation
from ..math.quaternion import body_pitch, quat_to_matrix
from ..sim.run import prepare
from ..spec.io import get
from ..spec.scenario import Scenario
from ..terrain import Bump, Flat

__all__ = ["CONFORMANCE_SCENARIOS", "REFERENCE", "conformance_scenario", "chassis_metrics", "run_conformance",
           "conformance_plan", "conformance_plans",
           "conformance_report",
           "compare", "Check"]

REFERENCE = "links"
CONFORMANCE_SCENARIOS = ("settle", "bump")
BUMP_HEIGHT = 0.10
BUMP_LENGTH = 1.0
BUMP_SPEED = 4.0


def conformance_scenario(name: str, fidelity: str, vehicle="m113", step: float | None = None) -> Scenario:
    """The scenario ``name`` of :data:`CONFORMANCE_SCENARIOS` at ``fidelity`` (its own default step)."""
    spec = get(vehicle) if isinstance(vehicle, str) else vehicle
    rec = ("chassis.*",)
    if name == "settle":
        return Scenario(vehicle=spec, fidelity=fidelity, terrain=Flat(), driver=Brake(), t_end=3.0, step=step,
                        output_step=0.01, name="conformance-settle", record=rec)
    if name == "bump":
        ext = vehicle_extent(spec)
        front_x, rear_x = ext.front_x, ext.rear_x
        x0 = front_x + 2.0
        t_end = (x0 + BUMP_LENGTH - rear_x + 1.0) / BUMP_SPEED  # until the rear has rolled 1 m past it
        return Scenario(vehicle=spec, fidelity=fidelity, terrain=Flat() + Bump(height=BUMP_HEIGHT, length=BUMP_LENGTH,
                                                                               x=x0),
                        driver=PID(speed=BUMP_SPEED, y=0.0), speed=BUMP_SPEED, t_end=round(t_end, 2), step=step,
                        output_step=0.01, name="conformance-bump", record=rec)
    raise ValueError(f"conformance scenario {name!r}: choose one of {CONFORMANCE_SCENARIOS}")


def chassis_metrics(name: str, res, com_v) -> dict:
    """The figures of scenario ``name`` from a run's ``chassis.*`` series (m, degrees, m/s).

    Heights are those of the vehicle frame's origin (the sprocket axis) above
    the flat ground (z = 0), not of the chassis body's centre of mass: a
    fidelity may lump other masses into the chassis body (the massless model
    carries its tracks there), which moves the centre of mass but not the
    vehicle frame. ``com_v``: the chassis body's centre of mass in the vehicle frame.
    """
    R = quat_to_matrix(np.stack([res[f"chassis.quat.e{k}"] for k in range(4)], axis=-1))
    z = res["chassis.pos.z"] - R[:, 2, :] @ np.asarray(com_v, float)
    pitch = np.degrees(body_pitch(R))
    vx = res["chassis.vel.x"]
    if name == "settle":
        # the mean over the last second: drift, not the fore-aft rocking after the drop (about 1 s period on the
        # link M113, decaying over 3-4 s)
        last = res.t >= res.t[-1] - 1.0
        return {"height_m": float(z[-1]), "pitch_deg": float(pitch[-1]), "speed_mps": float(vx[last].mean())}
    return {"rise_m": float(z.max() - z[0]), "pitch_max_deg": float(np.abs(pitch).max()),
            "speed_mean_mps": float(vx.mean())}


def conformance_plan(fidelity: str) -> tuple[str, tuple]:
    """``(vehicle, scenarios)`` of a fidelity's conformance: its declared vehicle
    (``FormulationInfo.conformance_vehicle``) and the scenarios its tolerance rows name (every one for the
    reference)."""
    info = get_formulation(fidelity).info
    if fidelity == REFERENCE or not info.conformance:
        return info.conformance_vehicle, CONFORMANCE_SCENARIOS
    named = {row[0] for row in info.conformance}
    return info.conformance_vehicle, tuple(s for s in CONFORMANCE_SCENARIOS if s in named)


def conformance_plans(fidelity: str) -> list:
    """``[(vehicle, scenarios, rows)]``: the fidelity's conformance on its declared vehicle
    (:func:`conformance_plan`, ``FormulationInfo.conformance``), then on each of its further vehicles
    (``FormulationInfo.extra_conformance``), with the scenarios each vehicle's rows name."""
    info = get_formulation(fidelity).info
    vehicle, scenarios = conformance_plan(fidelity)
    plans = [(vehicle, scenarios, tuple(info.conformance))]
    for v, rows in info.extra_conformance:
        named = {row[0] for row in rows}
        plans.append((v, tuple(s for s in CONFORMANCE_SCENARIOS if s in named), tuple(rows)))
    return plans


def run_conformance(fidelity: str, vehicle=None, scenarios=None) -> dict:
    """``{scenario: {metric: value, "status": ..., "wall_time_s": ...}}`` of ``fidelity`` (by default on its
    :func:`conformance_plan`)."""
    plan_vehicle, plan_scenarios = conformance_plan(fidelity)
    vehicle = plan_vehicle if vehicle is None else vehicle
    scenarios = plan_scenarios if scenarios is None else scenarios
    out = {}
    for name in scenarios:
        sc = conformance_scenario(name, fidelity, vehicle)
        prep = prepare(sc)
        res = prep.sim.run(sc.t_end)
        com_v = getattr(prep.vehicle, "com", prep.spec.chassis.com)
        m = chassis_metrics(name, res, com_v) if res.status == "complete" else {}
        out[name] = m | {"status": res.status, "wall_time_s": prep.sim.wall_time, "step_s": prep.sim.h}
    return out


@dataclass(frozen=True)
class Check:
    """One figure of one scenario against the reference."""

    scenario: str
    metric: str
    reference: float
    value: float
    tolerance: float
    reason: str

    @property
    def difference(self) -> float:
        return self.value - self.reference

    @property
    def ok(self) -> bool:
        return math.isfinite(self.value) and abs(self.difference) <= self.tolerance


def compare(fidelity: str, measured: dict, reference: dict, rows=None) -> list:
    """The :class:`Check` of every tolerance ``fidelity`` declares (``FormulationInfo.conformance``, or the
    ``rows`` given: those of a further vehicle, :func:`conformance_plans`)."""
    checks = []
    for scenario, metric, tol, reason in (get_formulation(fidelity).info.conformance if rows is None else rows):
        ref = reference.get(scenario, {}).get(metric, float("nan"))
        val = measured.get(scenario, {}).get(metric, float("nan"))
        checks.append(Check(scenario, metric, float(ref), float(val), float(tol), reason))
    return checks


def conformance_report(fidelities=None) -> dict:
    """Every registered fidelity (or those named) against the reference on the fidelity's conformance vehicle
    (:func:`conformance_plan`): the figures, the checks, the verdict."""
    names = [n for n in (fidelities or formulation_names()) if n != REFERENCE]
    refs: dict = {}
    out = {"reference": {}, "fidelities": {}}
    for name in names:
        for k, (vehicle, scenarios, rows) in enumerate(conformance_plans(name)):
            if vehicle not in refs:
                refs[vehicle] = run_conformance(REFERENCE, vehicle)
                out["reference"][vehicle] = {REFERENCE: refs[vehicle]}
            ref = refs[vehicle]
            got = run_conformance(name, vehicle, scenarios)
            checks = compare(name, got, ref, rows)
            out["fidelities"][name if k == 0 else f"{name}@{vehicle}"] = {
                "vehicle": vehicle, "figures": got, "conforms": all(c.ok for c in checks),
                "checks": [{"scenario": c.scenario, "metric": c.metric, "reference": c.reference, "value": c.value,
                            "difference": c.difference, "tolerance": c.tolerance, "ok": c.ok, "reason": c.reason}
                           for c in checks]}
    return out


if __name__ == "__main__":  # python -m trackdyn.testing.conformance [FIDELITY ...]: the figures of docs/massless.md
    import json
    import sys
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the closed track loops' redundant pin rows
        print(json.dumps(conformance_report(sys.argv[1:] or None), indent=1))
