"""Where the ancf fidelity's step error comes from (issue #30; a study tool, not a benchmark): the APC on the
``ancf`` fidelity, driven through the sprocket ramp of ``trackdyn bench apc-joints-stepsize`` (0 -> 25 rad/s
over 0.2-1.2 s, at the fidelity's default step), then 2 s from that one state at a reference step (1e-5 s,
linearised Euler, or ``--reference VARIANT``) and at each asked variant, ``INTEGRATOR:STEP`` with ``euler`` (the linearised Euler step)
or ``thetaX`` (the linearised θ-method at θ = X). Per variant: the largest road-wheel height difference from
the reference over the record (the bench's measure, mm), the chassis's forward-position difference at 0.5, 1
and 2 s (m), its height difference, and the mean road-wheel height differences (the pitch the step leaves).

    python bench/ancf_step_integrators.py euler:5e-5 euler:1e-4 theta0.6:1e-4 theta0.5:1e-4 theta0.6:2e-4

The reference run (about 200 CPU s on a quiet machine) and the start state are kept in ``--cache`` (default
a folder in the system's temporary directory) so variants can be added without repeating them. CPU times
are printed for orientation only (the machine's load is not controlled here; the ratios of record are
``trackdyn bench apc-joints-stepsize``'s).
"""

from __future__ import annotations

import argparse
import os
import pickle
import tempfile
import time
import warnings

import numpy as np

from trackdyn.driver import SprocketSpeed
from trackdyn.sim.run import prepare
from trackdyn.spec.scenario import Scenario
from trackdyn.terrain import Flat
from trackdyn.testing import benchmarks  # noqa: F401  (imports the benchmark modules in their order)
from trackdyn.testing.benchmarks_vehicle import _wheel_names

RAMP = (0.2, 1.2)
T_RUN = 2.0
H_REF = 1e-5


def _scenario(h, integrator=None, options=None, record=None) -> Scenario:
    kw = dict(vehicle="apc", fidelity="ancf", terrain=Flat(), driver=SprocketSpeed.ramp(*RAMP, 25.0), t_end=1e6,
              step=h, output_step=0.01, record=record, name="ancf-step-integrators")
    if integrator:
        kw["integrator"] = integrator
    if options:
        kw["options"] = options
    return Scenario(**kw)


def _parse(variant: str):
    kind, _, h = variant.partition(":")
    if kind == "euler":
        return None, None, float(h)
    if kind.startswith("theta"):
        return "theta-linearized", {"theta": float(kind[5:])}, float(h)
    raise SystemExit(f"variant {variant!r}: expected euler:STEP or thetaX:STEP")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "trackdyn-ancf-step-integrators"))
    ap.add_argument("--reference", default=f"euler:{H_REF:g}",
                    help="the reference run, a variant (default euler:1e-05; e.g. theta0.6:1e-05 for that "
                         "integrator's own reference)")
    a = ap.parse_args(argv)
    ref_label, ref_integrator, ref_options, ref_h = a.reference, *_parse(a.reference)
    variants = [(v, *_parse(v)) for v in a.variants]
    os.makedirs(a.cache, exist_ok=True)
    warnings.simplefilter("ignore")
    base = prepare(_scenario(None))
    wheels = _wheel_names(base)
    names = [w + ".pos.z" for w in wheels] + ["chassis.pos.x", "chassis.pos.z"]
    start = os.path.join(a.cache, "state0.pkl")
    if os.path.exists(start):
        with open(start, "rb") as fh:
            state0 = pickle.load(fh)
    else:
        base.sim.run(RAMP[1])
        state0 = base.sim.state.copy()
        with open(start, "wb") as fh:
            pickle.dump(state0, fh)

    def run(h, integrator=None, options=None):
        prep = prepare(_scenario(h, integrator, options, record=tuple(names)))
        prep.sim.state = state0.copy()
        c0 = time.process_time()
        res = prep.sim.run(state0.t + T_RUN)
        return np.array([res[n] for n in names]), time.process_time() - c0

    default_ref = ref_integrator is None and ref_h == H_REF
    ref_file = os.path.join(a.cache, "reference.npy" if default_ref else f"reference-{ref_label.replace(':', '_')}.npy")
    if os.path.exists(ref_file):
        ref = np.load(ref_file)
    else:
        ref, cpu = run(ref_h, ref_integrator, ref_options)
        np.save(ref_file, ref)
        print(f"reference: {ref_label}, {cpu / T_RUN:.1f} CPU s per simulated s")
    nw = len(wheels)
    print("variant | road wheels, mm | chassis x at 0.5 / 1 / 2 s, m | chassis z, mm | mean wheel z, mm | CPU s/s")
    for label, integrator, options, h in variants:
        y, cpu = run(h, integrator, options)
        n = min(y.shape[1], ref.shape[1])
        d = y[:, :n] - ref[:, :n]
        xs = [d[nw, min(i, n - 1)] for i in (50, 100, n - 1)]
        print(f"{label} | {1e3 * np.abs(d[:nw]).max():.3f} | " + " / ".join(f"{x:+.4f}" for x in xs)
              + f" | {1e3 * np.abs(d[nw + 1]).max():.2f} | " + " ".join(f"{1e3 * m:+.2f}" for m in d[:nw].mean(axis=1))
              + f" | {cpu / T_RUN:.1f}", flush=True)


if __name__ == "__main__":
    main()
