"""The force providers' time per step of the APC on the ancf fidelity (issue #30; a tool, not a benchmark).

0.05 s of warm-up (compilation), then 3 rounds of 0.1 s at h = 1e-4 s under the sprocket ramp of
``trackdyn bench apc-joints``; prints the providers' wall time (``AbsoluteSystem.provider_time``: the
cable's forces and contact, the powertrain) and the process's CPU time per step of each round. To compare
two commits side by side, run it from a worktree of each with that tree's ``src`` first on ``PYTHONPATH``:

    PYTHONPATH=OTHER_TREE/src python bench/ancf_provider_time.py
    python bench/ancf_provider_time.py

(bench/README.md, "ancf: the predicted linearisation and the fused force kernel".)
"""

from __future__ import annotations

import time
import warnings

import trackdyn
from trackdyn.driver import SprocketSpeed
from trackdyn.sim.run import prepare
from trackdyn.spec.scenario import Scenario
from trackdyn.terrain import Flat

STEP, ROUND, ROUNDS = 1e-4, 0.1, 3


def main() -> None:
    warnings.simplefilter("ignore")
    print(trackdyn.__file__)
    sc = Scenario(vehicle="apc", fidelity="ancf", terrain=Flat(), driver=SprocketSpeed.ramp(0.2, 1.2, 25.0),
                  t_end=10.0, step=STEP, output_step=1e-2)
    p = prepare(sc)
    p.sim.run(0.05)
    s = p.sim.system
    n = int(round(ROUND / STEP))
    for _ in range(ROUNDS):
        t0, c0 = s.provider_time, time.process_time()
        p.sim.run(p.sim.state.t + ROUND)
        print(f"providers {1e6 * (s.provider_time - t0) / n:.0f} us/step, CPU {1e6 * (time.process_time() - c0) / n:.0f} "
              "us/step")


if __name__ == "__main__":
    main()
