"""The NSC M113 benchmark (issue #29): ``m113-flat-nsc``.

The M113 of ``m113-flat`` (cruise at 4.2 m/s, PID speed and heading, flat
rigid ground) with the links fidelity's ``contact.method = "nsc"``: rigid
contact with Coulomb friction stepped by ``nsc-euler`` (docs/contact-nsc.md).
After ``settle`` s (the drop and the PID transient) it runs ``t_end`` s and
reports the mean wall time per step and per simulated second, the per-step
split into contact detection, assembly (forces, constraints, matrix and
right-hand side), factorisation, the step's solve and the contact solve (frames,
the solver's iterations through the factorisation, the impulses' solve), the
mean contact iterations and products with the Delassus operator per step, the
Coulomb fixed-point rounds per step, how many steps ended with the contact
solve above the stated tolerance (``contact_unconverged``: zero means the
natural-map residual was within ``contact_tolerance`` at every step), and the chassis's ground speed
against the PID's 4.2 m/s (mean, range, largest error over the recorded samples).
Importing this module registers the benchmark. Timings are never asserted in
tests.
"""

from __future__ import annotations

import time

import numpy as np

from .benchmarks import bench, machine_info, timed_run
from . import benchmarks_vehicle as BV  # a module, not its names: benchmarks_vehicle imports benchmarks, which imports this

__all__ = ["m113_flat_nsc"]


@bench("m113-flat-nsc")
def m113_flat_nsc(t_end: float = 2.0, step: float = 1e-3, settle: float = 0.5, contact_solver: str = "newton",
                  contact_tolerance: float = 1e-5, friction: str = "coulomb", warm_start: bool = True,
                  contact_max_iterations: int = 5000, output_step: float = 0.01, results: list | None = None,
                  contact_compliance: float | None = None) -> dict:
    """Cruise at 4.2 m/s on flat ground under NSC: ``t_end`` s after ``settle`` s, step ``step``.

    ``contact_tolerance`` (m/s) is the contact solver's stopping residual (natural map, docs/contact-nsc.md),
    ``contact_solver`` one of ``"newton"`` (the vehicle's default), ``"apgd"``, ``"bb"``, ``"psor"``, ``friction`` ``"coulomb"`` or ``"anitescu"``;
    ``contact_max_iterations`` the solver's cap per solve (5000: with 1000, 4 of 20 Anitescu steps of APGD
    stopped above 1e-5 m/s, bench/README.md); ``contact_compliance`` (m/N) the contacts' compliance (``None``:
    the links fidelity's 1e-7 m/N; 0: rigid).
    """
    options = {"contact.method": "nsc", "contact_solver": contact_solver, "contact_tolerance": contact_tolerance,
               "friction": friction, "warm_start": warm_start, "contact_max_iterations": contact_max_iterations}
    if contact_compliance is not None:
        options["contact_compliance"] = contact_compliance
    t0 = time.perf_counter()
    prep = BV.settled_cruise(settle, step, output_step=output_step, options=options)
    settle_wall = time.perf_counter() - t0
    it = prep.sim.integrator
    c0 = dict(it.counters)
    load0 = BV._load()
    runs = [] if results is None else results
    r, _ = timed_run(prep.sim, t_end, runs)
    load1 = BV._load()
    steps = r["steps"]
    sp = r["split_ms"]
    split = {
        "contact_detection": sp.get("contact_detection", 0.0),
        "assembly": sp.get("forces", 0.0) + sp.get("contact", 0.0) + sp.get("constraints", 0.0)
        + sp.get("assembly", 0.0),
        "factorization": sp.get("factorization", 0.0),
        "solve": sp.get("solve", 0.0),
        "contact_solve": sp.get("contact_solve", 0.0),
        "update": sp.get("update", 0.0),
        "recording": sp.get("recording", 0.0),
        "other": sp.get("other", 0.0),
    }
    s = prep.sim.system
    # the chassis's ground speed at every recorded sample of the measured run (the PID's target: BV.SPEED)
    speed = np.hypot(runs[-1]["chassis.vel.x"], runs[-1]["chassis.vel.y"])
    out = {"benchmark": "m113-flat-nsc", "integrator": it.name, "contact_solver": contact_solver,
           "contact_tolerance_mps": contact_tolerance, "contact_max_iterations": contact_max_iterations,
           "friction": friction, "warm_start": bool(warm_start), "contact_compliance_m_per_N": it.compliance,
           "bodies": s.nb, "constraint_rows": s.nc, "settle_s": settle, "settle_wall_s": settle_wall,
           "machine": machine_info(), "load_before": load0, "load_after": load1, **r,
           "split_named_ms": split,
           "contact_iterations_per_step": (it.counters["contact_iterations"] - c0["contact_iterations"]) / steps,
           "contact_products_per_step": (it.counters["contact_products"] - c0["contact_products"]) / steps,
           "friction_iterations_per_step": (it.counters["friction_iterations"] - c0["friction_iterations"]) / steps,
           "contact_unconverged": it.counters["contact_unconverged"] - c0["contact_unconverged"],
           "contacts_at_end": int(it.last["contacts"]),
           "mean_speed_mps": float(np.mean(speed)), "speed_range_mps": [float(speed.min()), float(speed.max())],
           "max_speed_error_mps": float(np.max(np.abs(speed - BV.SPEED)))}
    return out
