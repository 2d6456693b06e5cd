"""m113-memory: peak RSS of m113-flat runs of growing length, output every 10 ms (issue #6).

Each length runs in a fresh process; with --out the samples stream to a results folder per run.
Usage: python bench/m113_memory.py [--lengths 10 20 100] [--step 1e-4] [--out DIR]
"""

import argparse
import json

from trackdyn.testing.benchmarks_vehicle import m113_memory

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", type=float, nargs="+", default=[10.0, 20.0])
    ap.add_argument("--step", type=float, default=1e-4)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    print(json.dumps(m113_memory(lengths=tuple(a.lengths), step=a.step, out=a.out), indent=2, default=str))
