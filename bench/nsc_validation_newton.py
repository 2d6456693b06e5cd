"""The Newton contact solver on docs/contact-nsc.md's validation cases (issue #29): the figures of its
``newton`` entries, measured by the procedures of ``tests/unit/contact/test_nsc_validation.py`` (whose
tests assert them within the issue's tolerances).

- box on a 30° incline, μ = tan θ + 0.01, h = 1e-3, 2 s: drift (m);
- the same with μ = tan θ − 0.01: relative error of the acceleration from 0.5 to 2 s against
  g(sin θ − μ cos θ), and the box's height off the plane at 2 s (m);
- the 5-box stack, h = 2e-3, 10 s: largest drift (m) and largest energy gain (J);
- Newton iterations per step of each.

Usage: python bench/nsc_validation_newton.py [--json PATH]; prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "unit", "contact"))

import test_nsc_validation as T  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    out = {}
    theta = math.radians(30.0)
    m, nsc, _, _ = T._box_on_incline(theta, math.tan(theta) + 0.01)
    sim = T._sim(m, nsc, 1e-3, "newton")
    x0 = sim.state.q[0, :3].copy()
    for _ in range(2000):
        sim.step()
    out["stick_drift_m"] = float(np.linalg.norm(sim.state.q[0, :3] - x0))
    out["stick_newton_per_step"] = sim.integrator.counters["newton_iterations"] / 2000
    mu = math.tan(theta) - 0.01
    m, nsc, n, down = T._box_on_incline(theta, mu)
    sim = T._sim(m, nsc, 1e-3, "newton")
    sp = []
    for _ in range(2000):
        sim.step()
        sp.append(float(sim.state.v[0, :3] @ down))
    acc = (sp[1999] - sp[499]) / 1.5
    exact = T.G * (math.sin(theta) - mu * math.cos(theta))
    out["slide_acceleration_rel_error"] = (acc - exact) / exact
    out["slide_lift_m"] = float((sim.state.q[0, :3] - 0.05 * n) @ n)
    out["slide_newton_per_step"] = sim.integrator.counters["newton_iterations"] / 2000
    sim, out["stack_drift_m"], out["stack_energy_gain_J"] = T.stack_at_rest("newton")
    out["stack_newton_per_step"] = sim.integrator.counters["newton_iterations"] / 5000
    print(json.dumps(out))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
    return out


if __name__ == "__main__":
    main()
