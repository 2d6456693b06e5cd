"""replay-m113: what the settled M113's step would cost with no Python between its compiled kernels.

Usage: python bench/replay_m113.py [--explicit-contact] [--rounds 8] [--steps 200]

Records the compiled calls of one integrator step (every trackdyn kernel
called through its module, and the contact system's entry-point calls) with
their arguments, then times, interleaved in one process, (a) replaying that
list through the kernels' entry points (no argument typing), (b) replaying it
as the step calls them (through Numba's dispatchers, or the entry point where
the step uses one), and (c) real steps. (a) is the floor a step
written as one compiled call would approach (with the step's few array
resets, :func:`prologue`); (b) - (a) is Numba's dispatch; (c) - (b) is the
Python of the step (stage bookkeeping, providers, new state arrays, history
commit). The replay repeats one state, so its caches and
branch predictors see the same work every time: (c) - (a) is an upper bound
of what removing the Python would save. Not a benchmark of the physics: the
replayed step does not advance the state.
"""

import argparse
import sys
import time

import numba as nb


def record_step(sim, contact=None):
    """The compiled calls ``[(dispatcher, args, by_entry), ...]`` of one ``sim.integrator.step`` from
    ``sim.state``, and the new state; ``by_entry``: the step calls this one through its entry point (the
    contact system does). Module attributes and ``contact._call`` are patched for the step and restored."""
    log = []
    recording = [True]
    patched, unwrap = [], {}

    def wrap(d):
        def w(*a):
            if recording[0]:
                log.append((d, a, False))
                recording[0] = False  # a kernel called by a kernel's Python caller is not a second call
                try:
                    return d(*a)
                finally:
                    recording[0] = True
            return d(*a)
        unwrap[w] = d
        return w

    seen = {}
    for modname, mod in list(sys.modules.items()):
        if not modname.startswith("trackdyn"):
            continue
        for name, obj in list(vars(mod).items()):
            if isinstance(obj, nb.core.dispatcher.Dispatcher):
                w = seen.setdefault(id(obj), wrap(obj))
                patched.append((mod, name, obj))
                setattr(mod, name, w)
    call = None
    if contact is not None:
        call = contact._call

        def contact_call(name, fn, args):
            d = unwrap.get(fn, fn)
            log.append((d, tuple(args), True))
            recording[0] = False
            try:
                return call(name, d, args)
            finally:
                recording[0] = True
        contact._call = contact_call
    try:
        new = sim.integrator.step(sim.state)
    finally:
        for mod, name, obj in patched:
            setattr(mod, name, obj)
        if contact is not None:
            del contact._call  # the instance attribute goes; the class method is back
    return log, new


def _entry(d, a):
    return d.overloads[tuple(nb.typeof(x) for x in a)].entry_point


def entry_plan(log):
    """``[(entry_point, args), ...]``: each call through the compiled overload for its argument types."""
    return [(_entry(d, a), a) for d, a, _ in log]


def step_plan(log):
    """``[(callable, args), ...]`` as the step calls them: through the dispatcher, or the entry point where the
    step uses one."""
    return [(_entry(d, a) if by_entry else d, a) for d, a, by_entry in log]


def prologue(system, state):
    """The array work an AbsoluteSystem step does in Python besides its kernels: the KKT values reset to their
    constant part, Dv and Kxv zeroed, the positions copied into the kinematics' q_ext."""
    system.data[:] = system.base_data
    system.Dv[:] = 0.0
    system.Kxv[:] = 0.0
    system.kin.q_ext[:-1] = state.q


def replay(plan, system, state, n):
    """Mean seconds per replayed step over ``n`` (each: :func:`prologue`, then the recorded calls)."""
    t0 = time.perf_counter()
    for _ in range(n):
        prologue(system, state)
        for fn, a in plan:
            fn(*a)
    return (time.perf_counter() - t0) / n


def real_steps(sim, n):
    t0 = time.perf_counter()
    st = sim.state
    for _ in range(n):
        st = sim.integrator.step(st)
    sim.state = st
    return (time.perf_counter() - t0) / n


if __name__ == "__main__":
    from trackdyn.testing.benchmarks_vehicle import _contact_options, settled_cruise

    ap = argparse.ArgumentParser()
    ap.add_argument("--explicit-contact", action="store_true")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--steps", type=int, default=200, help="steps per timed block")
    a = ap.parse_args()
    prep = settled_cruise(settle=0.1, options=_contact_options(a.explicit_contact))
    sim = prep.sim
    sim.run(sim.state.t + 0.01)
    start = sim.state
    log, _ = record_step(sim, prep.contact)
    plan_ep, plan_d = entry_plan(log), step_plan(log)
    s = sim.system
    print(f"{len(log)} compiled calls per step: {', '.join(sorted({d.__name__ for d, _, _ in log}))}")
    print("ms per step (best of 3 blocks of --steps each, interleaved): entry points / dispatchers / real steps")
    best = [float("inf")] * 3
    for _ in range(a.rounds):
        e = min(replay(plan_ep, s, start, a.steps) for _ in range(3))
        d = min(replay(plan_d, s, start, a.steps) for _ in range(3))
        r = min(real_steps(sim, a.steps) for _ in range(3))
        best = [min(x, y) for x, y in zip(best, (e, d, r))]
        print(f"{1e3 * e:.3f} / {1e3 * d:.3f} / {1e3 * r:.3f}   kernels alone {e / r:.0%} of the step")
    # the machine's phases change a block's time by up to 2x: each column's fastest block is the figure to compare
    e, d, r = best
    print(f"fastest blocks: {1e3 * e:.3f} / {1e3 * d:.3f} / {1e3 * r:.3f} ms: dispatch {1e3 * (d - e):.3f} ms, "
          f"the step's Python {1e3 * (r - d):.3f} ms ({(r - e) / r:.0%} of the step outside the kernels)")
