"""Does the sprocket's contact coupling set the step error of a driven track? (issue #30; a study tool)

``trackdyn bench apc-joints-stepsize`` on the links fidelity alone (2 s from one post-ramp state at 1e-5 s and at
each of ``--steps``), with the sprocket-pin contact's Jacobian coupling as built (``full``: the coupling blocks
in the Newton matrix) or turned to ``diagonal`` (each body's own block only, the cross terms explicit, as the
ancf chain's contact keeps its wheels' and sprocket's side). Prints per step the road wheels' largest height
error, the chassis's travel and height errors against the 1e-5 s run (m).

    python bench/links_sprocket_coupling.py diagonal
    python bench/links_sprocket_coupling.py full
"""

from __future__ import annotations

import argparse

import trackdyn.testing.benchmarks_joints as B
from trackdyn.contact.system import ContactSystem


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("coupling", choices=("full", "diagonal"))
    ap.add_argument("--steps", default="1e-4,2.5e-4")
    a = ap.parse_args(argv)
    if a.coupling == "diagonal":
        built = ContactSystem.coupling

        def coupling(self, fa, fb, mode):
            return built(self, fa, fb, "diagonal" if {fa, fb} == {"sprocket", "pins"} else mode)

        ContactSystem.coupling = coupling
    out = B.apc_joints_stepsize(steps=tuple(float(h) for h in a.steps.split(",")), fidelities=["links"])
    for r in out["fidelities"][0]["runs"][1:]:
        print(f"{a.coupling} {r['step_size_s']:g} s: road wheels {1e3 * r['max_error_m']:.4f} mm, chassis x "
              f"{r['chassis_x_error_m']:.4f} m, z {1e3 * r['chassis_z_error_m']:.3f} mm")


if __name__ == "__main__":
    main()
