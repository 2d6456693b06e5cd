"""chain64's MuJoCo peers side by side with trackdyn (`trackdyn bench chain64 --peers --json` with options).

Usage: python bench/peers/chain64_mujoco.py [--step 1e-4] [--peer-step H] [--t-end 2.0] [--solimp D0,D1,W,M,P]
                                            [--no-reference] [--peer-only] [--write-mjcf DIR]

Runs trackdyn's chain64 at --step, then MuJoCo's chain in maximal coordinates (64 free bodies, two connect
equalities per pin) and as a tree (64 hinges), both generated from trackdyn's model
(trackdyn.testing.benchmarks_peers), in this process, and prints one JSON object: both figures, their ratio
and each side's accuracy (pin gap, tip error against the tree at h/10). --peer-only skips trackdyn;
--write-mjcf DIR writes the two MJCF files and exits. Needs the peers extra: pip install -e ".[peers]".
"""

import argparse
import json
import sys
from pathlib import Path

from trackdyn.testing import benchmarks_peers as BP

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--step", type=float, default=1e-4)
    ap.add_argument("--peer-step", type=float, default=None)
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--solimp", default=None, help="five comma-separated numbers (default: BP.settings's)")
    ap.add_argument("--no-reference", action="store_true", help="skip the h/10 reference (no tip errors)")
    ap.add_argument("--peer-only", action="store_true")
    ap.add_argument("--write-mjcf", type=Path, default=None)
    a = ap.parse_args()
    solimp = None if a.solimp is None else [float(x) for x in a.solimp.split(",")]
    h = a.peer_step or a.step
    if a.write_mjcf is not None:
        a.write_mjcf.mkdir(parents=True, exist_ok=True)
        s = BP.settings(h, integrator="Euler", **({} if solimp is None else {"solimp": solimp}))
        for variant in ("maximal", "tree"):
            (a.write_mjcf / f"chain64-{variant}.xml").write_text(BP.chain64_mjcf(variant, h, s))
        sys.exit(0)
    try:
        if a.peer_only:
            out = BP.chain64_peer(step=h, t_end=a.t_end, reference=not a.no_reference, solimp=solimp)
        else:
            out = BP.chain64_side_by_side(t_end=a.t_end, step=a.step, peer_step=a.peer_step,
                                          reference=not a.no_reference, solimp=solimp)
    except BP.PeerUnavailable as err:
        sys.exit(str(err))
    print(json.dumps(out, indent=2, default=str))
