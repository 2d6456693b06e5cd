"""Profile of the APC on the ancf fidelity (issue #30; a tool, not a benchmark): cProfile of 0.6 s at
h = 1e-4 s under the sprocket ramp of ``trackdyn bench apc-joints`` (0 -> 25 rad/s over 0.2-1.2 s), after a
0.05 s warm-up that compiles the kernels. Prints the total and the functions with the largest own time.

    python bench/profile_ancf.py [--top 12]

The figures of bench/README.md ("ancf kernels") come from it.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import warnings

from trackdyn.driver import SprocketSpeed
from trackdyn.sim.run import prepare
from trackdyn.spec.scenario import Scenario
from trackdyn.terrain import Flat


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    sc = Scenario(vehicle="apc", fidelity="ancf", terrain=Flat(), driver=SprocketSpeed.ramp(0.2, 1.2, 25.0),
                  t_end=0.65, step=1e-4, output_step=1e-2)
    prep = prepare(sc)
    prep.sim.run(0.05)
    prof = cProfile.Profile()
    prof.enable()
    prep.sim.run(0.65)
    prof.disable()
    out = io.StringIO()
    st = pstats.Stats(prof, stream=out).sort_stats("tottime")
    st.print_stats(a.top)
    steps = round(0.6 / 1e-4)
    print(f"{steps} steps, {1e3 * st.total_tt / steps:.2f} ms per step under the profiler")
    print(out.getvalue())


if __name__ == "__main__":
    main()
