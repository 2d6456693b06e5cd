"""The ancf fidelity's kernels timed one by one (issue #30; a tool, figures in bench/README.md).

1. ``cable_elastic`` with and without its Jacobian on a ring of 64 elements of 0.15 m (the APC's chain; nodes
   perturbed by 1 mm, seed 1), 5 Gauss points: best CPU time (process time) of 5 rounds of 2 000 calls.
2. The APC on the ancf fidelity after 0.05 s (sprocket ramp 0.02-0.2 s): one track's ``CableForces`` bound step
   call and its parts (elastic force with and without the Jacobian, the θ shift, the scatter, the dashpots, the
   pin springs), mean CPU time (process time) of 2 000 calls each on that state.

    python bench/ancf_kernel_times.py
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from trackdyn.driver import SprocketSpeed
from trackdyn.formulations import _ancf_kernels as AK
from trackdyn.formulations.ancf import CableForces, gauss_legendre
from trackdyn.sim.run import prepare
from trackdyn.spec.scenario import Scenario
from trackdyn.terrain import Flat


def _mean_us(fn, n=2000):
    fn()
    t = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t) / n * 1e6


def ring() -> dict:
    rng = np.random.default_rng(1)
    n, l = 64, 0.15
    conn = np.array([[k, (k + 1) % n] for k in range(n)])
    q = np.zeros((n, 6))
    rad = n * l / (2 * np.pi)
    for k in range(n):
        a = 2 * np.pi * k / n
        q[k, :3] = [rad * np.cos(a), 0, rad * np.sin(a)]
        q[k, 3:] = [-np.sin(a), 0, np.cos(a)]
    q += 1e-3 * rng.standard_normal(q.shape)
    length = np.full(n, l)
    gx, gw = gauss_legendre(5)
    Qe, Ke, en = np.zeros((n, 12)), np.zeros((n, 12, 12)), np.zeros(n)
    out = {}
    for jac in (True, False):
        AK.cable_elastic(conn, q, length, 3e9, 50.0, gx, gw, Qe, Ke, en, jac)
        best = np.inf
        for _ in range(5):
            t = time.process_time()
            for _ in range(2000):
                AK.cable_elastic(conn, q, length, 3e9, 50.0, gx, gw, Qe, Ke, en, jac)
            best = min(best, (time.process_time() - t) / 2000)
        out["elastic_jacobian_us" if jac else "elastic_forces_us"] = best * 1e6
    return out


def apc() -> dict:
    warnings.simplefilter("ignore")
    sc = Scenario(vehicle="apc", fidelity="ancf", terrain=Flat(), driver=SprocketSpeed.ramp(0.02, 0.2, 25.0),
                  t_end=0.65, step=1e-4, output_step=1e-2)
    prep = prepare(sc)
    prep.sim.run(0.05)
    sysm = prep.sim.system
    p = next(x for x in sysm.providers if isinstance(x, CableForces))
    m = p.mesh
    f = np.zeros((sysm.nb + 1, 6))
    data = np.zeros(int(p.slot.max()) + 1)
    return {
        "bound_step_call_us": _mean_us(p._bound),
        "elastic_jacobian_us": _mean_us(lambda: AK.cable_elastic(
            m.conn, p._qp, m.length, float(m.EA), float(m.EI), m.gauss_x, m.gauss_w, m._Qe, m._Ke, m._U)),
        "elastic_forces_us": _mean_us(lambda: AK.cable_elastic(
            m.conn, p.q, m.length, float(m.EA), float(m.EI), m.gauss_x, m.gauss_w, p._Q0, p._K0, m._U, False)),
        "shift_us": _mean_us(lambda: AK.cable_shift(m.conn, p.qd, 1e-4, m._Ke, m._Qe, 0.5, p._Q0)),
        "scatter_us": _mean_us(lambda: AK.cable_scatter(p.elem_body, m._Qe, m._Ke, p.slot, 1.0, f, data)),
        "dashpot_us": _mean_us(lambda: AK.element_dashpot(m.conn, p.q, p.qd, p.axial_c, p._dF, p._dD, p._dKv)),
        "pin_springs_us": _mean_us(lambda: AK.joint_bending(
            m.joints, p.q, p.qd, p._axis_b, p.pin_angle0, p.pin_k, p.pin_c, p._jF, p._jK, p._jD, p._jKv,
            p.pin_angle)),
    }


if __name__ == "__main__":
    import os

    print("load", os.getloadavg())
    print("ring of 64 elements:", {k: round(v, 1) for k, v in ring().items()})
    print("APC, one track:", {k: round(v, 1) for k, v in apc().items()})
    print("load", os.getloadavg())
