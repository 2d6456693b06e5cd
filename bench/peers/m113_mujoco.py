"""m113-flat's MuJoCo peer side by side with trackdyn (`trackdyn bench m113-flat --peers --json` with options).

Usage: python bench/peers/m113_mujoco.py [--step 1e-4] [--peer-step H] [--t-end 2.0] [--settle 0.5]
                                         [--integrator NAME] [--theta THETA]
                                         [--reference-t-end 0.25] [--no-reference] [--explicit-contact]
                                         [--tracks tree|maximal] [--solimp D0,D1,W,M,P] [--peer-only]
                                         [--write-mjcf FILE]

Runs trackdyn's m113-flat (one segment of --t-end s after --settle s) at --step (a number or a fraction such
as 1/1100) with --integrator (θ of theta-linearized: --theta), then the MuJoCo M113
generated from the same spec, geometry and start (trackdyn.testing.benchmarks_peers.m113_mjcf) at --peer-step
(default: --step), in this process, and prints one JSON object: both figures, their ratio, each side's
accuracy (pin gap, penetration; the peer's road-wheel heights against itself at h/10 over
--reference-t-end s) and Chrono's cited figure (not measured side by side). --tracks maximal: every shoe a
free body with two connects per pin instead of hinged chains. --write-mjcf FILE writes the model and exits.
Needs the peers extra: pip install -e ".[peers]".
"""

import argparse
import json
import sys
import warnings
from pathlib import Path

from trackdyn.testing import benchmarks_peers as BP
from trackdyn.testing.benchmarks_vehicle import step_size_arg

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--step", type=step_size_arg, default=1e-4)
    ap.add_argument("--peer-step", type=step_size_arg, default=None)
    ap.add_argument("--integrator", default="euler-implicit-linearized", help="trackdyn's integrator")
    ap.add_argument("--theta", type=float, default=None, help="θ of theta-linearized")
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--settle", type=float, default=0.5)
    ap.add_argument("--reference-t-end", type=float, default=0.25)
    ap.add_argument("--no-reference", action="store_true")
    ap.add_argument("--explicit-contact", action="store_true")
    ap.add_argument("--tracks", choices=("tree", "maximal"), default="tree")
    ap.add_argument("--solimp", default=None, help="five comma-separated numbers (default: BP.settings's)")
    ap.add_argument("--peer-only", action="store_true")
    ap.add_argument("--write-mjcf", type=Path, default=None)
    a = ap.parse_args()
    solimp = None if a.solimp is None else [float(x) for x in a.solimp.split(",")]
    h = a.peer_step or a.step
    s = BP.m113_settings(h, **({} if solimp is None else {"solimp": solimp}))
    warnings.simplefilter("ignore")  # the redundant pin rows closing each loop (expected)
    if a.write_mjcf is not None:
        a.write_mjcf.write_text(BP.m113_mjcf(h, s, tracks=a.tracks)[0])
        sys.exit(0)
    try:
        if a.peer_only:
            out = BP.m113_peer(step=h, t_end=a.t_end, settle=a.settle, reference=not a.no_reference,
                               reference_t_end=a.reference_t_end, tracks=a.tracks, s=s)
        else:
            out = BP.m113_side_by_side(t_end=a.t_end, step=a.step, peer_step=a.peer_step, settle=a.settle,
                                       reference=not a.no_reference, reference_t_end=a.reference_t_end,
                                       explicit_contact=a.explicit_contact, tracks=a.tracks, solimp=solimp,
                                       integrator=a.integrator,
                                       options=None if a.theta is None else {"theta": a.theta})
    except BP.PeerUnavailable as err:
        sys.exit(str(err))
    print(json.dumps(out, indent=2, default=str))
