"""Where the hull touches the half-round (issue #33, docs/study/README.md "The half-round study (idler)").

Runs one half-round speed (the §5.1 tensioning, the events' default step) and, at every step at which the hull
has a contact force with the terrain, records each of the hull's contact records as the contact system holds it:
its kind (a face against a terrain line, a vertex in the terrain), where it acts relative to the obstacle's crown
(world x - crown, y, z), its depth, normal and force. The first records and the largest are printed.

Usage: python bench/study_trace_hull_contact.py [--idler-dx DX] [--idler-dz DZ] [--sprocket-dx ..] [--sprocket-dz ..]
                                                [--height-in 12] [--speed 2.0] [--json PATH]
(the M113's design by default: the 12 in design point's hull contact at 2 m/s; one run, 1-2 min on a free core)
"""

from __future__ import annotations

import argparse

import numpy as np

import trackdyn.experiments.trials as TR
from trackdyn.contact import _kernels as CK
from trackdyn.conventions import INCH
from trackdyn.experiments.events import resolve_vehicle, run_event
from trackdyn.experiments.trials import vehicle_extent
from trackdyn.io.results import write_json_atomic

KINDS = {int(CK.K_PP): "point (a vertex in the terrain)", int(CK.K_PL): "line with radius",
         int(CK.K_PN): "face against a terrain line", int(CK.K_DN): "disc on a face"}


def trace(spec, height_in: float, speed: float) -> tuple[list, dict]:
    """The hull's contact records at every step with a hull contact force, and the event's summary."""
    crown = vehicle_extent(spec).front_x + 3.0 * speed + height_in * INCH  # half_round's lead_time = 3 s
    seen = []
    orig = TR.Monitor._hull_force_now

    def spy(mon):
        f = orig(mon)
        if f > 0:
            rec, out, n = mon.contact.records()
            b = rec.body[:n]
            hull = (((b[:, 0] == mon.c) & (b[:, 1] < 0)) | ((b[:, 1] == mon.c) & (b[:, 0] < 0))) & (out.fn[:n] > 0)
            for i in np.nonzero(hull)[0]:
                p = out.point[i]
                seen.append({"t_s": float(mon.prep.sim.state.t), "kind": KINDS.get(int(rec.kind[i]), int(rec.kind[i])),
                             "x_from_crown_m": float(p[0] - crown), "y_m": float(p[1]), "z_m": float(p[2]),
                             "depth_m": float(out.delta[i]), "normal": [float(x) for x in out.normal[i]],
                             "normal_force_N": float(out.fn[i])})
        return f

    TR.Monitor._hull_force_now = spy
    try:
        summary = run_event("half-round", spec, height_in=height_in, speeds=[speed], tension=True)
    finally:
        TR.Monitor._hull_force_now = orig
    return seen, summary


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for k in ("idler-dx", "idler-dz", "sprocket-dx", "sprocket-dz"):
        ap.add_argument(f"--{k}", type=float, default=0.0)
    ap.add_argument("--height-in", type=float, default=12.0)
    ap.add_argument("--speed", type=float, default=2.0)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    spec = resolve_vehicle("m113", idler_dx=a.idler_dx, idler_dz=a.idler_dz, sprocket_dx=a.sprocket_dx,
                           sprocket_dz=a.sprocket_dz)
    seen, summary = trace(spec, a.height_in, a.speed)
    run = summary["runs"][0]
    print(f"{a.height_in:g} in at {a.speed:g} m/s: driver peak {run['peak_g']:.3f} g "
          f"({(run.get('peak_source') or {}).get('source')}), {len(seen)} hull contact records over "
          f"{len({r['t_s'] for r in seen})} steps")
    show = seen[:4] + ([max(seen, key=lambda r: r["normal_force_N"])] if seen else [])
    for r in show:
        print(f"  t {r['t_s']:.5f} s  {r['kind']}: x - crown {r['x_from_crown_m']:+.4f} m, y {r['y_m']:+.3f} m, "
              f"z {r['z_m']:.4f} m, depth {1e3 * r['depth_m']:.2f} mm, normal "
              f"({', '.join(f'{x:+.3f}' for x in r['normal'])}), force {r['normal_force_N']:.3g} N")
    res = {"height_in": a.height_in, "speed_mps": a.speed, "peak_g": run["peak_g"],
           "peak_source": (run.get("peak_source") or {}).get("source"), "records": seen,
           "offsets": {k: getattr(a, k.replace("-", "_")) for k in ("idler-dx", "idler-dz", "sprocket-dx",
                                                                     "sprocket-dz")}}
    if a.json:
        write_json_atomic(a.json, res)
    return res


if __name__ == "__main__":
    main()
