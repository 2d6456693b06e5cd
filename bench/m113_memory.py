"""m113-memory: peak RSS of M113 cruise runs of growing length, every series every 10 ms, streamed (issue #34).

Each length runs in a fresh process and streams its samples to a results folder (a Parquet dataset of parts).
The issue's acceptance (10, 100 and 1000 s at h = 5e-4, link track; hours on a shared 2-core machine):
    python bench/m113_memory.py --lengths 10 100 1000 --step 5e-4
Quick check of the same recorder and writer on the massless M113 (495 series):
    python bench/m113_memory.py --lengths 10 100 1000 --step 5e-4 --fidelity massless
"""

import argparse
import json

from trackdyn.testing.benchmarks_memory import m113_memory

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", type=float, nargs="+", default=[10.0, 100.0, 1000.0])
    ap.add_argument("--step", type=float, default=5e-4)
    ap.add_argument("--output-step", type=float, default=0.01)
    ap.add_argument("--fidelity", default="links")
    ap.add_argument("--out", default=None, help="keep each run's results folder under this folder")
    a = ap.parse_args()
    print(json.dumps(m113_memory(lengths=tuple(a.lengths), step=a.step, output_step=a.output_step,
                                 fidelity=a.fidelity, out=a.out), indent=2, default=str))
