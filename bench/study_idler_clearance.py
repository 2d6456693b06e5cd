"""How high the idler's track sits over the ground at rest, against the half-rounds' crowns (issue #33).

The thesis's idler hits the 10 in half-round at the design position (korner-2024 §5.3, Fig. 5.9: "when the idler
is moved up and backwards ... the idler now clears the obstacle"); trackdyn's never meets it (docs/study/README.md,
"The 10 in layer (idler)"). This script settles the design M113 on flat ground by the §5.1 procedure (the
events' settle) and measures, for each side, the idler centre's height above the ground and the lowest point of
the track on it (centre less the idler's radius and the shoe's depth, top + bottom), then how far each crown
(8, 10, 12 in) stands above that point: the lift the rear must have when the idler reaches the crown for the
idler to clear it. The same for ``m113-base``, whose idler is Chrono's (radius 0.255 m against Table 3.3's
0.219 m), and the design-pose figure (the assembly's geometry before it settles).

Usage: python bench/study_idler_clearance.py [--json PATH]
"""

from __future__ import annotations

import argparse

import numpy as np

from trackdyn.assembly.extent import vehicle_extent
from trackdyn.experiments.events import resolve_vehicle
from trackdyn.experiments.scenarios import settle
from trackdyn.io.results import write_json_atomic
from trackdyn.math.quaternion import quat_to_matrix

CROWNS_IN = (8, 10, 12)


def clearance(name: str) -> dict:
    spec = resolve_vehicle(name)
    wrap = spec.idler.radius + spec.shoes.top + spec.shoes.bottom
    ext = vehicle_extent(spec)
    design = ext.idler_z - ext.ground_z - wrap  # the design pose: the lowest pad face on the ground
    info, res = settle(spec)
    sides = {}
    for s in ("left", "right"):
        zc = float(res[f"{s}.idler.pos.z"][-1])
        sides[s] = {"idler_centre_m": zc, "track_under_idler_m": zc - wrap}
    low = min(v["track_under_idler_m"] for v in sides.values())
    return {"vehicle": name, "idler_radius_m": spec.idler.radius, "wrap_radius_m": wrap,
            "design_pose_track_under_idler_m": float(design), "settled": sides,
            "chassis_pitch_deg": float(np.degrees(_pitch(res))), "itt_N": info["mean_shoe_tension_N"],
            "crown_over_track_m": {f"{h} in": h * 0.0254 - low for h in CROWNS_IN}}


def _pitch(res) -> float:
    """The chassis's pitch at the end of the settle, as the events' monitor measures it (trials.py)."""
    R = quat_to_matrix(np.array([float(res[f"chassis.quat.e{k}"][-1]) for k in range(4)]))
    return float(np.arctan2(R[2, 0], R[0, 0]))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    out = {"vehicles": [clearance(n) for n in ("m113", "m113-base")]}
    for r in out["vehicles"]:
        s = r["settled"]
        shoe = r["wrap_radius_m"] - r["idler_radius_m"]
        print(f"{r['vehicle']:10s} idler r {r['idler_radius_m']:.3f} m (+ shoe {shoe:.3f}): "
              f"track under the idler {r['design_pose_track_under_idler_m']:.3f} m at the design pose, settled "
              f"{s['left']['track_under_idler_m']:.3f} (left) / {s['right']['track_under_idler_m']:.3f} m (right), "
              f"pitch {r['chassis_pitch_deg']:+.2f} deg; crowns over it: "
              + ", ".join(f"{k} {v:+.3f} m" for k, v in r["crown_over_track_m"].items()))
    if a.json:
        write_json_atomic(a.json, out)
    return out


if __name__ == "__main__":
    main()
