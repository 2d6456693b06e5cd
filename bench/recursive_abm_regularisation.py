"""chain64 and the chain loop over T s, recursive ABM against the absolute ABM (both at rtol 1e-9, atol 1e-12),
at the absolute KKT's default regularisation δ = 1e-12 and at 1e-14 (issue #31, docs/recursive.md, "It is the
absolute KKT's regularisation"): the largest difference of the bodies' centres over the run.

    python bench/recursive_abm_regularisation.py 1000      # 1000 outputs of 1 ms: 1 s
"""

import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit" / "formulations"))
warnings.simplefilter("ignore")  # the closed loops' redundant rows

from _recursive_helpers import lockstep  # noqa: E402  (the tests' side-by-side runner)

from trackdyn.formulations.absolute import AbsoluteSystem  # noqa: E402
from trackdyn.formulations.recursive import RecursiveSystem  # noqa: E402
from trackdyn.integrators import make_integrator  # noqa: E402
from trackdyn.integrators.recursive import RecursiveABM  # noqa: E402
from trackdyn.testing.problems import chain, chain_loop  # noqa: E402

n_out = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
for name, make in (("chain64", lambda: chain(64)), ("chain loop", chain_loop)):
    for delta in (1e-12, 1e-14):
        model = make()
        rec, a = RecursiveSystem(model), AbsoluteSystem(model, regularization=delta)
        ir = RecursiveABM(rec, 1e-3, rtol=1e-9, atol=1e-12)
        ia = make_integrator("abm", a, 1e-3, rtol=1e-9, atol=1e-12)
        t0 = time.process_time()
        err, *_ = lockstep(ir, ia, rec.initial_state(), a.initial_state(), n_out)
        print(f"{name}: delta {delta:g}, {n_out} ms: largest difference {err:.3e} m "
              f"(CPU {time.process_time() - t0:.1f} s)", flush=True)
