"""The half-round study's step check (issue #33 item 2): each point of a sweep folder run at another step (default
``docs/study/sprocket-halfround-h1e-4``, h = 1e-4 s) against the same configuration in the study's folder (default
``docs/study/sprocket-halfround``, the event's default step): limiting speed, its status, and the driver-seat peak
at each speed. Several sweep files of one identity filled the check's folder, so its table is read with
``sweep_table(..., every_point=True)``.

Usage: python bench/study_step_check.py [CHECK_DIR] [STUDY_DIR] [--json]
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from trackdyn.experiments.sweep import load_sweep, point_record, sweep_table


def _table(folder: Path):
    return sweep_table(load_sweep(folder / "sweep.toml"), folder, every_point=True).set_index("point")


def _peaks(folder: Path, point: str):
    rec = point_record(folder, point)
    return [[r.get("speed_mps"), r.get("peak_g")] for r in rec["summary"].get("runs", [])] if rec and \
        rec["status"] == "ok" else None


def main(argv=None) -> list:
    argv = sys.argv[1:] if argv is None else argv
    args = [a for a in argv if not a.startswith("--")]
    check = Path(args[0]) if args else Path("docs/study/sprocket-halfround-h1e-4")
    study = Path(args[1]) if len(args) > 1 else Path("docs/study/sprocket-halfround")
    tc, ts = _table(check), _table(study)
    rows = []
    for point, r in tc.iterrows():
        row = {"point": point, "status": r["status"]}
        for tag, folder, t in (("check", check, tc), ("study", study, ts)):
            if point in t.index and t.loc[point, "status"] == "ok":
                row[f"{tag}_speed_mps"] = float(t.loc[point, "limiting_speed_mps"])
                row[f"{tag}_status"] = t.loc[point, "limit_status"]
                row[f"{tag}_peaks_g"] = _peaks(folder, point)
        a, b = row.get("check_speed_mps"), row.get("study_speed_mps")
        row["difference_mps"] = a - b if a is not None and b is not None and not math.isnan(a - b) else None
        rows.append(row)
    if "--json" in argv:
        print(json.dumps(rows, indent=1))
    else:
        for r in rows:
            print({k: v for k, v in r.items() if not k.endswith("peaks_g")})
    return rows


if __name__ == "__main__":
    main()
