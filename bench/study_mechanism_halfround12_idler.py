"""What the idler's height does at the 12 in (and 10 in) half-round (issue #33, docs/study/README.md).

In ``thesis-idler-halfround`` the 12 in limit falls into three bands by the idler's height: raised (dz >= +0.10 m)
the hull strikes at 2 m/s (limit about 1.5 m/s, 1.1-1.3 m/s where it strikes at 1.5 m/s already); lowered by
0.05-0.10 m nothing strikes at the rear and the limit is set later, at 2.5-3 m/s, by the front road wheel;
lowered by 0.15-0.20 m the idler itself strikes at 1.5 m/s (1.34-1.43 m/s), and so it does lowered by 0.10 m
when it is also 0.15-0.20 m back. This script runs one speed at five
idler positions (the §5.1 tensioning, the events' default step, output every 2 ms) and measures the peak and
its source, the hull's contact force with the terrain (largest, when, over how many samples), the idler's
settled centre in the hull's frame, and the idler's lowest clearance over the obstacle's crown (the idler
centre's height less its radius, the shoe's depth (top + bottom) and the obstacle's height, while the idler is
within 5 cm of the crown; negative: the track on the idler presses onto the obstacle).

With ``--height-in 10`` the same measures at the 10 in half-round, where the thesis's idler strikes at the design
position (Fig. 5.9) and trackdyn's sets no limit: the design at the layer's last speed under 2.5 g and its first
above (2.5, 3 m/s), and the idler 0.2 m up and back (the thesis's "clears the obstacle") at 3 m/s. Every case also
records the idler's lift over its height at rest when it is over the crown (``idler_lift_at_crown_m``), and the
chassis's pitch (nose up positive) and the rise of its centre of mass then.

Usage: python bench/study_mechanism_halfround12_idler.py [--height-in 12|10] [--runs DIR] [--json PATH]
(``--runs DIR`` keeps the event folders and reuses them; five runs of 6-9 s simulated, 1-2 min each on a free core.)
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.spatial.transform import Rotation
from study_mechanism_halfround10 import print_cases

from trackdyn.conventions import INCH
from trackdyn.experiments.events import resolve_vehicle, run_event
from trackdyn.experiments.trials import vehicle_extent
from trackdyn.io.results import write_json_atomic

REAR_FLOOR = 1.0  # m of floor from the hull's rear end forwards, behind the rear road wheel (x = -3.35 m)
LEAD_TIME = 3.0  # half_round's default: the front starts lead_time * speed before the obstacle
CASES = {  # name: (idler dx, idler dz, speed)
    # 12 in: the sweep's first speed above 2.5 g (2 m/s lowered by 0.1 m, where the sweep's first is 3 m/s: the
    # speed at which the design's hull strikes)
    12.0: {"idler up 0.2, back 0.2": (-0.2, 0.2, 2.0),
           "design": (0.0, 0.0, 2.0),
           "idler down 0.1": (0.0, -0.1, 2.0),
           "idler down 0.2": (0.0, -0.2, 1.5),
           "idler down 0.1, back 0.2": (-0.2, -0.1, 1.5)},
    # 10 in: the design's last speed under 2.5 g and its first above; the idler up and back at the latter
    10.0: {"design, 2.5 m/s": (0.0, 0.0, 2.5),
           "design, 3 m/s": (0.0, 0.0, 3.0),
           "idler up 0.2, back 0.2": (-0.2, 0.2, 3.0)},
}


def _run(folder: Path, dx: float, dz: float, speed: float, height_in: float) -> dict:
    if not (folder / "summary.json").exists():
        run_event("half-round", resolve_vehicle("m113", idler_dx=dx, idler_dz=dz), height_in=height_in,
                  speeds=[speed], tension=True, output_step=0.002, out=folder)
    return json.loads((folder / "summary.json").read_text())


def rear(folder: Path, summ: dict, dx: float, dz: float, height_in: float) -> dict:
    """The hull contact's place on the hull and the idler's clearance over the obstacle, from the time series."""
    spec = resolve_vehicle("m113", idler_dx=dx, idler_dz=dz)
    run = summ["runs"][0]
    d = pd.read_parquet(folder / run["folder"] / "timeseries.parquet")
    t = d["t"].to_numpy()
    H = height_in * INCH
    x_obs = vehicle_extent(spec).front_x + LEAD_TIME * run["speed_mps"]  # the obstacle's leading edge, world x
    crown = x_obs + H
    rot = Rotation.from_quat(d[[f"chassis.quat.e{i}" for i in (1, 2, 3, 0)]].to_numpy())
    com = d[["chassis.pos.x", "chassis.pos.y", "chassis.pos.z"]].to_numpy()
    force = d[["chassis.contact.force.x", "chassis.contact.force.y", "chassis.contact.force.z"]].to_numpy()
    fmag = np.linalg.norm(force, axis=1)
    out = {"peak_g": run["peak_g"], "peak_source": (run.get("peak_source") or {}).get("source"),
           "t_peak_s": run["t_peak_s"], "hull_force_max_N": float(fmag.max()),
           "t_hull_force_max_s": float(t[int(np.argmax(fmag))]) if fmag.max() > 1.0 else None,
           "hull_contact_samples": int((fmag > 1.0).sum())}
    rz = spec.idler.radius + spec.shoes.top + spec.shoes.bottom  # the wheel, then the shoe from its top to its pad
    i_static = int(np.searchsorted(t, 0.5 * run["t_arrive_s"]))
    side, lift = [], []
    for s in ("left", "right"):
        ix, iz = d[f"{s}.idler.pos.x"].to_numpy(), d[f"{s}.idler.pos.z"].to_numpy()
        over = np.abs(ix - crown) < 0.05
        if over.any():
            side.append(float(np.min(iz[over]) - rz - H))
            lift.append(float(np.min(iz[over]) - iz[i_static]))
    R = rot.as_matrix()
    pitch = np.degrees(np.arctan2(R[:, 2, 0], R[:, 0, 0]))  # nose up positive, as the events' monitor (trials.py)
    j = int(np.argmin(np.abs(d["left.idler.pos.x"].to_numpy() - crown)))  # the left idler over the crown
    out.update({"pitch_at_rest_deg": float(pitch[i_static]), "pitch_idler_at_crown_deg": float(pitch[j]),
                "chassis_rise_idler_at_crown_m": float(com[j, 2] - com[i_static, 2])})
    idler_body = rot[i_static].inv().apply(d.loc[i_static, ["left.idler.pos.x", "left.idler.pos.y",
                                                            "left.idler.pos.z"]].to_numpy(float) - com[i_static])
    out.update({"idler_centre_hull_frame_m": [float(idler_body[0] + spec.chassis.com[0]),
                                              float(idler_body[2] + spec.chassis.com[2])],
                "idler_clearance_over_crown_m": min(side) if side else None,
                "idler_lift_at_crown_m": min(lift) if lift else None,
                "idler_wrap_radius_m": float(rz)})
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--height-in", type=float, default=12.0, choices=sorted(CASES))
    ap.add_argument("--runs", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    h = a.height_in
    root = a.runs or Path(tempfile.mkdtemp(prefix=f"halfround{h:g}-idler-"))
    out = {"height_in": h, "cases": {}}
    for name, (dx, dz, v) in CASES[h].items():
        folder = root / f"h{h:g}_dx{dx:+.2f}_dz{dz:+.2f}_v{v:g}"
        summ = _run(folder, dx, dz, v, h)
        out["cases"][name] = {"idler_dx_m": dx, "idler_dz_m": dz, "speed_mps": v, "step_s": summ["step_size_s"],
                              **rear(folder, summ, dx, dz, h)}
    keys = ["speed_mps", "peak_g", "peak_source", "t_peak_s", "hull_force_max_N", "t_hull_force_max_s",
            "hull_contact_samples", "idler_centre_hull_frame_m", "idler_clearance_over_crown_m",
            "idler_lift_at_crown_m", "pitch_at_rest_deg", "pitch_idler_at_crown_deg", "chassis_rise_idler_at_crown_m"]
    print_cases(out["cases"], keys, 36, 26)
    if a.json:
        write_json_atomic(a.json, out)
    return out


if __name__ == "__main__":
    main()
