"""The crawler on the recursive fidelity against the absolute formulation with the same integrator (issue #31).

Both from the crawler's assembled pose, idle, on flat ground (the drop onto the ground and the settle), for
``T`` s at step ``h``: the ``recursive`` fidelity on ``recursive-rk4`` and the ``links`` fidelity (absolute
coordinates) on ``rk4`` (coordinate partitioning), recording every 10 ms; prints each run's CPU time and the
largest difference of five recorded positions between the two. The issue's check: within 1e-6 m over 1 s at
h = 1e-4 s, or within 1e-8 m with ABM at a relative tolerance of 1e-9: with ``abm`` for the step both run their
Adams-Bashforth-Moulton (``recursive-abm`` and the absolute ``abm``) at rtol 1e-9 (or RTOL), atol 0.01 rtol,
output every 10 ms.

    python bench/recursive_crawler_vs_absolute.py 1.0 1e-4
    python bench/recursive_crawler_vs_absolute.py 1.0 abm [RTOL [DELTA]]

DELTA: the absolute system's KKT regularisation δ (default 1e-12), whose bias δλ on the multipliers separates
the two formulations' tight-tolerance runs (docs/recursive.md).
"""
import sys, time, warnings, numpy as np
warnings.simplefilter("ignore")
from trackdyn.sim.run import prepare
from trackdyn.spec.scenario import Scenario
from trackdyn.terrain import Flat
from trackdyn.drivers import Idle
T = float(sys.argv[1])
abm = sys.argv[2] == "abm"
h = 1e-3 if abm else float(sys.argv[2])
rtol = float(sys.argv[3]) if abm and len(sys.argv) > 3 else 1e-9  # optional third argument: the rtol
tol = {"rtol": rtol, "atol": 1e-2 * rtol} if abm else {}
runs = (("recursive", "recursive-abm"), ("links", "abm")) if abm else (("recursive", "recursive-rk4"), ("links", "rk4"))
out = {}
for fid, integ in runs:
    sc = Scenario(vehicle="crawler", fidelity=fid, integrator=integ, terrain=Flat(), driver=Idle(), t_end=T, step=h, output_step=0.01, options=tol,
                  record=("chassis.pos.x", "chassis.pos.z", "left.roadwheel[0].pos.z", "left.shoe[5].pos.x", "left.shoe[5].pos.z"))
    prep = prepare(sc)
    if fid == "links" and len(sys.argv) > 4:  # optional fourth argument: the absolute KKT's regularisation δ
        prep.sim.system.set_regularization(float(sys.argv[4]))
    t0 = time.process_time()
    res = prep.sim.run(T)
    print(fid, integ, res.metadata.get("status"), "cpu %.1f s" % (time.process_time() - t0),
          "substeps", prep.sim.integrator.counters.get("substeps"), flush=True)
    out[fid] = {k: np.asarray(res[k]) for k in ("chassis.pos.x", "chassis.pos.z", "left.roadwheel[0].pos.z", "left.shoe[5].pos.x", "left.shoe[5].pos.z")}
for k in out["links"]:
    a, b = out["recursive"][k], out["links"][k]; n = min(len(a), len(b))
    d = np.abs(a[:n] - b[:n]); print(k, "max diff %.3e m" % d.max(), "at sample", int(d.argmax()), "of", n)
