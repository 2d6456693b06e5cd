"""The half-round study's step check (issue #33 item 2): each point of a sweep folder run at another step (default
``docs/study/sprocket-halfround-h1e-4``, h = 1e-4 s) against the same configuration in the study's folder (default
``docs/study/sprocket-halfround``, the event's default step), read from the points' own records (``point.json``,
``summary.json``), so that several sweep files of one identity may have filled the folder.

Usage: python bench/study_step_check.py [CHECK_DIR] [STUDY_DIR] [--json]
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path


def _points(folder: Path) -> dict:
    out = {}
    for d in sorted((folder / "points").iterdir()):
        if d.name.startswith(".") or not (d / "point.json").exists():
            continue
        p = json.loads((d / "point.json").read_text())
        key = tuple(sorted(p["params"].items()))
        s = json.loads((d / "summary.json").read_text()) if (d / "summary.json").exists() else None
        out[key] = (p, s)
    return out


def main(argv=None) -> list:
    args = [a for a in (argv if argv is not None else sys.argv[1:]) if not a.startswith("--")]
    check = Path(args[0]) if args else Path("docs/study/sprocket-halfround-h1e-4")
    study = Path(args[1]) if len(args) > 1 else Path("docs/study/sprocket-halfround")
    ref = _points(study)
    rows = []
    for key, (p, s) in _points(check).items():
        params = dict(key)
        row = {**params, "status": p["status"]}
        r = ref.get(key)
        if s is not None:
            row["check_speed_mps"] = s.get("limiting_speed_mps")
            row["check_status"] = s.get("limit_status")
            row["check_peaks_g"] = [[x.get("speed_mps"), x.get("peak_g")] for x in s.get("runs", [])]
        if r is not None and r[1] is not None:
            row["study_speed_mps"] = r[1].get("limiting_speed_mps")
            row["study_status"] = r[1].get("limit_status")
            row["study_peaks_g"] = [[x.get("speed_mps"), x.get("peak_g")] for x in r[1].get("runs", [])]
        a, b = row.get("check_speed_mps"), row.get("study_speed_mps")
        row["difference_mps"] = (a - b) if isinstance(a, float) and isinstance(b, float) and not (
            math.isnan(a) or math.isnan(b)) else None
        rows.append(row)
    if "--json" in (argv if argv is not None else sys.argv[1:]):
        print(json.dumps(rows, indent=1))
    else:
        for r in rows:
            print({k: v for k, v in r.items() if not k.endswith("peaks_g")})
    return rows


if __name__ == "__main__":
    main()
