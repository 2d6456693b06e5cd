"""chain64 benchmark: 64 links on revolutes, 2 s at h = 1e-4 and 1e-3 (issue #2, #6).

Usage: python bench/chain64.py  (same as `trackdyn bench chain64 --json`).
"""

import json

from trackdyn.testing.benchmarks import run_benchmark

if __name__ == "__main__":
    print(json.dumps(run_benchmark("chain64"), indent=2))
