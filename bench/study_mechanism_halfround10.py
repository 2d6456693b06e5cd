"""Why a lower sprocket raises the 10 in half-round limit (issue #33, docs/study/README.md "The 10 in layer").

At the design sprocket height the 10 in limit (2.71 m/s) is set at 3 m/s by the front road wheel, on its
jounce stop, when the front wheel is 3.3 m past the obstacle: the rear road wheels have crossed and the hull
pitches nose-down onto the front of the track. With the sprocket 0.1 m lower the same speed gives about 1 g.
This script runs that one speed (3 m/s, §5.1 tensioning, the events' default step) at the design and at
sprocket dz = -0.1 m and measures the nose-down fall: the hull's pitch rate, how long the fall takes to be
arrested, the front arm's rotation from its static angle, the left tensioner's force, and how high the sprocket
centre is when the track's front run starts to carry the nose.

Usage: python bench/study_mechanism_halfround10.py [--runs DIR] [--json PATH]
(``--runs DIR`` keeps the two event folders there and reuses them when they exist; two runs of ~5 s simulated,
about a minute each on a free core.)
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.spatial.transform import Rotation

from trackdyn.experiments.events import resolve_vehicle, run_event
from trackdyn.io.results import write_json_atomic

SPEED = 3.0
HEIGHT_IN = 10.0
CASES = {"design": 0.0, "sprocket dz -0.1 m": -0.1}


def _run(folder: Path, dz: float) -> dict:
    if not (folder / "summary.json").exists():
        run_event("half-round", resolve_vehicle("m113", sprocket_dz=dz), height_in=HEIGHT_IN, speeds=[SPEED],
                  tension=True, out=folder)
    return json.loads((folder / "summary.json").read_text())


def _rot(d: pd.DataFrame, body: str) -> Rotation:
    return Rotation.from_quat(d[[f"{body}.quat.e{i}" for i in (1, 2, 3, 0)]].to_numpy())


def fall(folder: Path, summ: dict) -> dict:
    """The nose-down fall after the rear road wheels crossed, from the trial's time series."""
    run = summ["runs"][0]
    src = run["peak_source"] or {}
    d = pd.read_parquet(folder / run["folder"] / "timeseries.parquet")
    t = d["t"].to_numpy()
    chassis = _rot(d, "chassis")
    pitch = np.degrees(chassis.as_euler("xyz")[:, 1])            # positive: nose down
    arm = np.degrees(np.unwrap((chassis.inv() * _rot(d, "left.arm[0]")).as_rotvec()[:, 1]))
    wy = d["chassis.omega.y"].to_numpy()
    tension = -d["left.tensioner.force"].to_numpy()              # compression of the tensioner, N
    sprocket_z = d["left.sprocket.pos.z"].to_numpy()
    i_static = int(np.searchsorted(t, 0.5 * run["t_arrive_s"]))
    after = t >= run["t_arrive_s"]
    i_up = int(np.flatnonzero(after)[np.argmin(pitch[after])])   # the largest nose-up pitch on the obstacle
    win = np.arange(i_up, len(t))
    i_w = int(win[np.argmax(wy[win])])                           # the fastest nose-down rotation
    w_max = float(wy[i_w])
    i_start = int(win[np.flatnonzero((win > i_w) & (wy[win] < 0.9 * w_max))[0]])
    i_end = int(win[np.flatnonzero((win > i_w) & (wy[win] < 0.1 * w_max))[0]])
    i_load = int(win[np.flatnonzero((win > i_w) & (tension[win] > 30e3))[0]])
    return {
        "peak_g": run["peak_g"], "t_peak_s": run["t_peak_s"], "peak_source": src,
        "static_pitch_deg": float(pitch[i_static]), "static_sprocket_centre_z_m": float(sprocket_z[i_static]),
        "static_tensioner_N": float(tension[i_static]),
        "nose_up_pitch_deg": float(pitch[i_up]), "t_nose_up_s": float(t[i_up]),
        "max_nose_down_rate_rad_s": w_max, "t_max_rate_s": float(t[i_w]),
        "arrest_s": float(t[i_end] - t[i_start]), "t_arrested_s": float(t[i_end]),
        "max_nose_down_pitch_deg": float(pitch[win].max()),
        "front_arm_rotation_from_static_max_deg": float(np.max(arm[win] - arm[i_static])),
        "front_arm_on_jounce_stop": src.get("on_jounce_stop") if src.get("source") == "left.roadwheel[0]" else None,
        "t_tensioner_above_30kN_s": float(t[i_load]), "sprocket_centre_z_then_m": float(sprocket_z[i_load]),
        "min_sprocket_centre_z_m": float(sprocket_z[win].min()),
        "max_tensioner_in_fall_N": float(tension[win].max()),
    }


def print_cases(cases: dict, keys: list, key_width: int, width: int) -> None:
    """The cases side by side, one row per key (numbers to 4 digits, lists of numbers as a tuple)."""
    def cell(v):
        if isinstance(v, float) and math.isfinite(v):
            return f"{v:>{width}.4g}"
        if isinstance(v, list):
            return f"{'(' + ', '.join(f'{x:.3f}' for x in v) + ')':>{width}s}"
        return f"{v!s:>{width}s}"

    print(f"{'':{key_width}s}" + "".join(f"{n:>{width}s}" for n in cases))
    for k in keys:
        print(f"{k:{key_width}s}" + "".join(cell(c.get(k)) for c in cases.values()))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    root = a.runs or Path(tempfile.mkdtemp(prefix="halfround10-mechanism-"))
    out = {"height_in": HEIGHT_IN, "speed_mps": SPEED, "cases": {}}
    for name, dz in CASES.items():
        folder = root / f"dz{dz:+.2f}"
        summ = _run(folder, dz)
        out["cases"][name] = {"sprocket_dz_m": dz, "step_s": summ["step_size_s"], **fall(folder, summ)}
    keys = ["peak_g", "static_pitch_deg", "static_sprocket_centre_z_m", "nose_up_pitch_deg", "max_nose_down_rate_rad_s",
            "t_max_rate_s", "arrest_s", "front_arm_rotation_from_static_max_deg", "front_arm_on_jounce_stop",
            "t_tensioner_above_30kN_s", "sprocket_centre_z_then_m", "min_sprocket_centre_z_m", "t_peak_s"]
    print_cases(out["cases"], keys, 42, 22)
    if a.json:
        write_json_atomic(a.json, out)
    return out


if __name__ == "__main__":
    main()
