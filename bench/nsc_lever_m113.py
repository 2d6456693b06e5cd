"""The lever on the M113: contact-only APGD through the factorisation against PSOR over all unknowns (issue #29).

``bench/nsc_lever.py`` compares the two on chains and beams. Here the same comparison runs on one step of
the NSC M113 in cruise (``m113-flat-nsc``'s vehicle, 0.1 s settle, Anitescu friction, h = 1e-3):

- the lever (trackdyn's ``nsc-euler``): joints exact through the sparse factorisation, APGD on the contact
  unknowns only, warm-started, to the natural-map residual 1e-5 m/s;
- all unknowns (Chrono's NSC): block PSOR on ``W = A M⁻¹ Aᵀ``, ``A = [J; D]``, over the joint impulses and the
  contact impulses together, the forces explicit (``v = v + h M⁻¹ f + M⁻¹ Aᵀ x``), from a cold start and from
  the lever's contact impulses with zero joint impulses.

After every chunk of sweeps it reports the joints' velocity violation ``max |J v + b_J|`` and the contacts'
natural-map residual (m/s, the lever's criterion): both are zero at the all-unknowns solution. The lever
leaves the joints exact (the factorisation's round-off) and the contacts at 1e-5 m/s. The two problems
differ in the forces (implicit stiffness and damping in the lever's matrix, explicit in Chrono's), so their
velocities are compared only through these two measures. CPU times by ``time.process_time``.

Usage: python bench/nsc_lever_m113.py [--sweeps 3000] [--chunk 100]; prints one JSON object.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import time

import numpy as np

import trackdyn.integrators.nsc as INS
from trackdyn.contact import _nsc_kernels as NK
from trackdyn.testing import benchmarks_vehicle as BV

_spec = importlib.util.spec_from_file_location("nsc_lever", pathlib.Path(__file__).with_name("nsc_lever.py"))
_lever = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_lever)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweeps", type=int, default=3000)
    ap.add_argument("--chunk", type=int, default=100)
    ap.add_argument("--settle", type=float, default=0.1)
    a = ap.parse_args(argv)
    opts = {"contact.method": "nsc", "contact_solver": "apgd", "contact_tolerance": 1e-5, "friction": "anitescu",
            "contact_max_iterations": 10000}
    prep = BV.settled_cruise(a.settle, 1e-3, output_step=0.01, options=opts)
    sim, it = prep.sim, prep.sim.integrator
    s, cs, h = sim.system, it.contact, sim.h
    for _ in range(3):  # warm the kernels and the warm start
        sim.state = it.step(sim.state)
    state0 = sim.state
    cap = {}
    orig = INS.solve_ccp

    def spy(method, m, mu, eta, r, gamma, u, **kw):
        cap.update(m=m, mu=mu.copy(), eta=eta.copy(), r=r.copy(), kind=kw["kind"].copy(), warm=gamma.copy())
        t = time.process_time()
        info = orig(method, m, mu, eta, r, gamma, u, **kw)
        cap.update(cpu=time.process_time() - t, info=info, gamma=gamma.copy())
        return info

    INS.solve_ccp = spy
    try:
        t = time.process_time()
        it.step(state0)
        step_cpu = time.process_time() - t
    finally:
        INS.solve_ccp = orig
    m, mu, eta, r, kind = cap["m"], cap["mu"], cap["eta"], cap["r"], cap["kind"]
    nd = 6 * s.nb
    v_free = it.x[:nd] - it.x_c[:nd]
    # all unknowns, at the step's start
    t = time.process_time()
    Jd, Dd, _, W, V, v_unc, b_joint, r_all = _lever.all_unknowns(s, cs, m, state0, h, it.vmax, r, v_free)
    form_cpu = time.process_time() - t
    b_contact = r - Dd @ v_free
    never = np.full(nd, 1e300)  # the sweeps' own stopping test never fires: chunks of fixed length

    def measures(x):
        v = v_unc + V @ x
        joint = float(np.abs(Jd @ v + b_joint).max())
        g = x[s.nc:]
        res, _ = NK.ccp_measures(m, kind, mu, eta, g, Dd @ v + b_contact)
        return joint, float(res)

    out = {"bodies": s.nb, "joint_rows": s.nc, "contacts": m, "load_before": round(os.getloadavg()[0], 2),
           "lever": {"iterations": cap["info"].iterations, "products": cap["info"].products,
                     "residual_mps": cap["info"].residual, "contact_solve_cpu_s": cap["cpu"], "step_cpu_s": step_cpu},
           "all_unknowns": {"unknowns": s.nc + 3 * m, "form_W_cpu_s": form_cpu}}
    for start in ("cold", "lever_contacts"):
        x = np.zeros(s.nc + 3 * m)
        if start == "lever_contacts":
            x[s.nc:] = cap["gamma"]
        rows = [(0, *measures(x), 0.0)]
        done, cpu = 0, 0.0
        while done < a.sweeps:
            t = time.process_time()
            _lever._psor_all(W, r_all, s.nc, mu, x, never, V, 0.0, a.chunk, a.chunk)
            cpu += time.process_time() - t
            done += a.chunk
            rows.append((done, *measures(x), cpu))
        out["all_unknowns"][start] = [{"sweeps": n, "joint_violation": j, "contact_residual_mps": c, "cpu_s": round(tc, 3)}
                                      for n, j, c, tc in rows]
        print(json.dumps({start: out["all_unknowns"][start][-1]}), flush=True)
    out["load_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
