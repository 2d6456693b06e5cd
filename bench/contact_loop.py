"""contact-loop benchmark: one closed loop of 63 shoes around 5 road wheels, a sprocket and an idler,
resting on flat ground; cost per step of the contact stage (detection + forces + Jacobians), issue #4.

Usage: python bench/contact_loop.py  (same as `trackdyn bench contact-loop --json` once the CLI imports
trackdyn.testing.benchmarks_contact).
"""

import json

from trackdyn.testing.benchmarks import run_benchmark
import trackdyn.testing.benchmarks_contact  # noqa: F401  (registers "contact-loop")

if __name__ == "__main__":
    print(json.dumps(run_benchmark("contact-loop"), indent=2, default=float))
