"""A limit over the idler's actual position, not its input (issue #33; korner-2024 Fig. 5.6 right, 5.8-5.10 right).

The assembly closes each track by moving the idler along its tensioner, and the §5.1 tensioning moves it
again, so an idler sweep's input offsets (dx, dz) map onto fewer actual positions: a whole number of shoes
allows the idler's x only in steps of about half a pitch. This draws each computed point of an idler sweep
folder at its actual idler position after §5.1 (``idler_x_m``, ``idler_z_m`` of the table), coloured by the
chosen value; points of one actual position are drawn once, with the inputs that reach it counted. It prints
the actual positions with their inputs and values.

Usage: python bench/study_idler_actual.py [SWEEP_DIR] [--value limit_m] [--png PATH] [--json PATH]
       (default docs/study/idler-step, its figures/<value>_over_actual_idler.png)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from trackdyn.experiments.sweep import load_sweep, sweep_table
from trackdyn.io.results import write_json_atomic
from trackdyn.viz.plots import new_figure, save_figure


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
    ap.add_argument("--png", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    groups = actual_positions(a.folder, a.value)
    print(f"{len(groups)} actual idler positions from {sum(len(g['inputs']) for g in groups)} computed points")
    print("  idler x, z (m)      inputs  " + a.value)
    for g in groups:
        v = g["values"]
        spread = f"{min(v):.3f}" if max(v) - min(v) < 1e-9 else f"{min(v):.3f}-{max(v):.3f}"
        print(f"  {g['idler_x_m']:+.3f}, {g['idler_z_m']:+.3f}   {len(g['inputs']):>6}  {spread}")
    fig, ax = new_figure(7.0, 4.2)
    x = np.array([g["idler_x_m"] for g in groups])
    z = np.array([g["idler_z_m"] for g in groups])
    v = np.array([float(np.mean(g["values"])) for g in groups])
    n = np.array([len(g["inputs"]) for g in groups])
    sc = ax.scatter(x, z, c=v, s=40 + 40 * (n - 1), cmap="viridis", edgecolors="k")
    fig.colorbar(sc, ax=ax, label=a.value)
    ax.set_xlabel("idler x after §5.1, m (vehicle frame)")
    ax.set_ylabel("idler z, m")
    ax.set_title(f"{a.folder.name}: {a.value} over the actual idler position (marker size: inputs reaching it)",
                 fontsize=9)
    ax.grid(True, alpha=0.3)
    png = a.png or a.folder / "figures" / f"{a.value}_over_actual_idler.png"
    save_figure(fig, png)
    print(f"figure: {png}")
    if a.json:
        write_json_atomic(a.json, {"folder": str(a.folder), "value": a.value, "positions": groups})
    return {"positions": groups}


if __name__ == "__main__":
    main()
