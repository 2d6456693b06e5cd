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
import inspect
import sys
import time

import numba as nb
import numpy as np


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

    from trackdyn import _compiled

    real_entry = _compiled.entry_point

    def logged_entry(d, args):
        """The kernels bound once (trackdyn._compiled.bound_call) are typed through this: log their calls."""
        d = unwrap.get(d, d)  # a kernel read from a patched module attribute
        ep = real_entry(d, args)

        def w(*a):
            if recording[0]:
                log.append((d, a, True))
                recording[0] = False
                try:
                    return ep(*a)
                finally:
                    recording[0] = True
            return ep(*a)
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
            elif obj is real_entry:
                patched.append((mod, name, obj))
                setattr(mod, name, logged_entry)
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
        _rebind(sim)  # the bound calls are made again, through logged_entry
        new = sim.integrator.step(sim.state)
    finally:
        for mod, name, obj in patched:
            setattr(mod, name, obj)
        if contact is not None:
            del contact._call  # the instance attribute goes; the class method is back
        _rebind(sim)
    return log, new


def _rebind(sim):
    """Drop the kernels bound to the system, the stepper and the solver: they are bound again when next used."""
    s, integ = sim.system, sim.integrator
    s._bind_kinematics()
    s._step_calls = None
    integ._calls = None
    solver = getattr(integ, "solver", None)
    if hasattr(solver, "_factor_call"):
        solver._factor_call = solver._solve_call = None


def _param_index(d):
    """Position of each parameter of a kernel, by name (so that the lean step follows signature changes)."""
    return {name: i for i, name in enumerate(inspect.signature(d.py_func).parameters)}


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
    """The array work an AbsoluteSystem step does in Python besides its kernels: the state copied into the step
    buffers (``load_step``), the KKT values reset to their constant part, Dv and Kxv zeroed."""
    system.load_step(state)
    system.data[:] = system.base_data
    system.Dv[:] = 0.0
    system.Kxv[:] = 0.0


def replay(plan, system, state, n):
    """Mean seconds per replayed step over ``n`` (each: :func:`prologue`, then the recorded calls)."""
    t0 = time.perf_counter()
    for _ in range(n):
        prologue(system, state)
        for fn, a in plan:
            fn(*a)
    return (time.perf_counter() - t0) / n


class LeanStep:
    """A step made of the recorded kernels alone: the per-step arrays (the state's q, v, λ, its history arrays,
    the new state's arrays, the driver's memory, the contact count) substituted in the recorded argument lists,
    then one new :class:`State`. No stage timers, no providers' Python, no ``ForceContext``: what a step with
    the same kernels and almost no Python costs. Only for the situation recorded (no sample between steps, no
    buffer growth: ``record_step`` is preceded by growing the contact history to the records' capacity);
    :func:`check_lean` compares it with real steps bit for bit.
    """

    def __init__(self, system, h, log, old, new, contact=None):
        from trackdyn.mbs.model import State

        self.State, self.system, self.h = State, system, h
        names = {id(old.q): "q", id(old.v): "v", id(old.lam): "lam", id(new.q): "q_new", id(new.v): "v_new",
                 id(new.lam): "lam_new", id(new.acc): "acc_new"}
        for key, arr in old.extra.items():
            names[id(arr)] = key
        self.calls = []
        self.hist = None
        for d, a, _ in log:
            a = list(a)
            slots = [(i, names[id(x)]) for i, x in enumerate(a) if id(x) in names]
            nm = d.__name__
            arg = _param_index(d)
            if nm == "evaluate":
                a[arg["n_detected"]] = -1  # detection on: the recorded step may have reused a sample's records
            elif nm == "decide":
                slots += [(arg["t"], "t"), (arg["mem"], "driver")]
            elif nm == "commit_history":
                slots.append((arg["n_rec"], "n"))
                self.hist = (a[arg["out_key"]], a[arg["out_disp"]])  # where the commit writes the new history
            self.calls.append((_entry(d, tuple(a)), a, slots, nm))
        self.keys = (contact._key_name, contact._disp_name) if contact is not None else None

    def __call__(self, st):
        s = self.system
        prologue(s, st)
        env = dict(st.extra)
        env.update(q=st.q, v=st.v, lam=st.lam, t=st.t, q_new=np.empty(st.q.shape), v_new=np.empty(st.v.shape),
                   lam_new=np.empty(st.lam.shape), acc_new=np.empty(st.v.shape), n=0)
        if "driver" in env:
            env["driver"] = env["driver"].copy()  # the decision's new memory
        m = 0
        for fn, tmpl, slots, nm in self.calls:
            args = tmpl
            if slots:
                args = tmpl.copy()
                for i, key in slots:
                    args[i] = env[key]
            r = fn(*args)
            if nm == "evaluate":
                env["n"] = r
            elif nm == "commit_history":
                m = r
        extra = dict(st.extra)
        if self.keys is not None:
            extra[self.keys[0]] = self.hist[0][:m].copy()
            extra[self.keys[1]] = self.hist[1][:m].copy()
        if "driver" in extra:
            extra["driver"] = env["driver"].copy()
        return self.State(st.t + self.h, env["q_new"], env["v_new"], env["lam_new"], env["acc_new"], extra)


def check_lean(sim, lean, n=300):
    """True when ``n`` lean steps from ``sim.state`` give the real steps' q, v and λ bit for bit."""
    a = b = sim.state
    for _ in range(n):
        a = sim.integrator.step(a)
        b = lean(b)
    return all(np.array_equal(x, y) for x, y in ((a.q, b.q), (a.v, b.v), (a.lam, b.lam)))


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
    ap.add_argument("--lean", action="store_true",
                    help="also time LeanStep (the recorded kernels advancing the state) against real steps")
    a = ap.parse_args()
    prep = settled_cruise(settle=0.1, options=_contact_options(a.explicit_contact))
    sim = prep.sim
    sim.run(sim.state.t + 0.01)
    cs = prep.contact
    cs._new_history_buffers(cs.rec.kind.shape[0])  # no growth under the lean step
    start = sim.state
    log, new = record_step(sim, cs)
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
    if a.lean:
        lean = LeanStep(s, sim.integrator.h, log, start, new, cs)
        sim.state = start
        same = check_lean(sim, lean)
        print(f"lean step: q, v, λ after 300 steps {'bit-identical to' if same else 'DIFFERENT from'} real steps")
        best = [float("inf")] * 2
        st = start
        for _ in range(a.rounds):
            r = []
            for step in (sim.integrator.step, lean):
                t0 = time.perf_counter()
                for _ in range(a.steps):
                    st = step(st)
                r.append((time.perf_counter() - t0) / a.steps)
            best = [min(x, y) for x, y in zip(best, r)]
            print(f"real {1e3 * r[0]:.3f} / lean {1e3 * r[1]:.3f} ms")
        print(f"fastest blocks: real {1e3 * best[0]:.3f} / lean {1e3 * best[1]:.3f} ms ({best[1] / best[0] - 1:+.0%})")
