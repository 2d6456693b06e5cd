"""An idler sweep's actual idler positions with the inputs that reach each (issue #33; korner-2024 §5.2).

The assembly closes each track by moving the idler along its tensioner, and the §5.1 tensioning moves it
again, so an idler sweep's input offsets (dx, dz) map onto fewer actual positions: a whole number of shoes
allows the idler's x only in steps of about half a pitch. The sweep draws the chosen value at the actual
positions itself (``figures/<value>_actual.png``, the thesis's Fig. 5.6 right kind); this prints (and writes
as JSON) the table behind it: each actual position (after §5.1, to 1 mm), the inputs reaching it, the values.

Usage: python bench/study_idler_actual.py [SWEEP_DIR] [--value limit_m] [--json PATH]   (default docs/study/idler-step)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from trackdyn.experiments.sweep import load_sweep, sweep_table
from trackdyn.io.results import write_json_atomic


def actual_positions(folder: Path, value: str) -> list[dict]:
    """The computed points grouped by actual idler position (x, z to 1 mm): inputs, value range."""
    t = sweep_table(load_sweep(folder / "sweep.toml"), folder, every_point=True)
    t = t[(t["status"] == "ok") & t[value].notna()]
    groups: dict[tuple, dict] = {}
    for _, r in t.iterrows():
        k = (round(float(r["idler_x_m"]), 3), round(float(r["idler_z_m"]), 3))
        g = groups.setdefault(k, {"idler_x_m": k[0], "idler_z_m": k[1], "inputs": [], "values": []})
        g["inputs"].append([float(r["idler.dx"]), float(r["idler.dz"])])
        g["values"].append(float(r[value]))
    return sorted(groups.values(), key=lambda g: (g["idler_z_m"], g["idler_x_m"]))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", type=Path, default=Path("docs/study/idler-step"))
    ap.add_argument("--value", default="limit_m")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    groups = actual_positions(a.folder, a.value)
    print(f"{len(groups)} actual idler positions from {sum(len(g['inputs']) for g in groups)} computed points")
    print("  idler x, z (m)      inputs  " + a.value)
    for g in groups:
        v = g["values"]
        spread = f"{min(v):.3f}" if max(v) - min(v) < 1e-9 else f"{min(v):.3f}-{max(v):.3f}"
        print(f"  {g['idler_x_m']:+.3f}, {g['idler_z_m']:+.3f}   {len(g['inputs']):>6}  {spread}")
    if a.json:
        write_json_atomic(a.json, {"folder": str(a.folder), "value": a.value, "positions": groups})
    return {"positions": groups}


if __name__ == "__main__":
    main()
