"""The M113's event trials with and without the joints' geometric stiffness, and the pin-tension drift.

Usage: python bench/m113_impact_stability.py [--trials step0.45 step0.5 step0.55 step0.6 gap1.75 ditch6-16]
                                             [--drift] [--json]

Each trial is the event's own (`trackdyn.experiments.events`, the M113, links fidelity, h = 5e-4 s, no
step halving: ``refine=0``) run twice: with the implicit stepper's joint geometric stiffness
(``constraint_stiffness=True``) and without (the links fidelity's default since stop 27). A trial either
runs through or diverges; its outcome, the time of a divergence and the diagnostic are printed, one JSON
line per run.

``--drift`` repeats the diverging case of docs/events.md ("Stability at impacts"): the 0.55 m step with
the geometric stiffness, run to its divergence. For the last 60 steps it prints the three largest
multipliers and the largest angular speed of any body, and once, 5.5 ms before the divergence, the
one-step gain: the same step taken with the geometric stiffness of none, the CD rows, the DP1 rows and all
rows, which isolates how much of the pins' new tension the lagged term adds.

Prints one JSON object per line; docs/figures.py ``impact-stability`` runs it.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

from trackdyn.experiments import events as E


def _trial(name: str, stiffness: bool) -> dict:
    so = {"options": {"constraint_stiffness": bool(stiffness)}}
    t0 = time.perf_counter()
    try:
        if name.startswith("step"):
            E.step_climb("m113", height=float(name[4:]), refine=0, scenario_options=so)
        elif name.startswith("gap"):
            E.gap_crossing("m113", width=float(name[3:]), refine=0, scenario_options=so)
        elif name.startswith("ditch"):
            top, slope = (float(x) for x in name[5:].split("-"))
            E.trapezoid("m113", kinds=("ditch",), top_lengths_in=(top,), slopes_deg=(slope,), refine=0,
                        scenario_options=so)
        else:
            raise SystemExit(f"unknown trial {name!r}: stepH, gapW or ditchTOP-SLOPE")
        status, error = "ran through", None
    except E.EventDiverged as err:
        status, error = "diverged", str(err)
    return {"trial": name, "constraint_stiffness": stiffness, "status": status, "error": error,
            "wall_s": round(time.perf_counter() - t0, 1)}


def _scenario(height: float):
    """The Scenario of a step-climb trial (captured from the event instead of run)."""
    captured = {}

    class _Got(Exception):
        pass

    def grab(sc, *a, **k):
        captured["sc"] = sc
        raise _Got

    real = E.run_trial
    E.run_trial = grab
    try:
        E.step_climb("m113", height=height, refine=0)
    except _Got:
        pass
    finally:
        E.run_trial = real
    return captured["sc"]


def drift(height=0.55, window=60, gain_before=0.0055) -> None:
    """The 0.55 m step with the geometric stiffness, run to its divergence: the last ``window`` steps' three
    largest multipliers and largest spin; then, from a second run stopped ``gain_before`` s before the
    divergence, the one-step gain (module docstring)."""
    from collections import deque

    from trackdyn.mbs.model import State
    from trackdyn.sim.run import prepare

    sc = _scenario(height)
    opts = dict(sc.options or {})
    opts["constraint_stiffness"] = True
    sc = sc.replace(options=opts)
    prep = prepare(sc)
    sim, s = prep.sim, prep.sim.system
    names, bodies = s.joint_names, s.model.body_names
    last = deque(maxlen=window)

    def cb(sm):
        lam, v = sm.state.lam, sm.state.v.reshape(-1, 6)
        r = np.argsort(-np.abs(lam))[:3]
        b = int(np.argmax(np.abs(v[:, 3:]).max(1)))
        last.append({"drift": "step", "t_s": round(sm.state.t, 5),
                     "largest_multipliers": {f"{names[s.row_joint[k]]}[{k}]": float(lam[k]) for k in r},
                     "largest_spin": [bodies[b], float(np.abs(v[b, 3:]).max())]})
        return False

    res = sim.run(sc.t_end, callback=cb)
    t_div = sim.state.t
    for rec in last:
        print(json.dumps(rec), flush=True)
    print(json.dumps({"drift": "end", "status": res.status, "t_s": t_div,
                      "error": (res.metadata.get("error") or "")[:300]}), flush=True)
    if res.status != "diverged":
        return
    prep = prepare(sc)
    sim, s = prep.sim, prep.sim.system
    sim.run(t_div - gain_before)
    st = sim.state.copy()
    cd = (s.row_type == 3).astype(float)
    top = np.argsort(-np.abs(st.lam))[:3]
    gain = {}
    for label, mask in (("none", 0 * cd), ("cd", cd), ("dp1", 1 - cd), ("all", cd ** 0)):
        trial = State(st.t, st.q.copy(), st.v.copy(), st.lam * mask, st.acc.copy(),
                      {k: (v.copy() if hasattr(v, "copy") else v) for k, v in st.extra.items()})
        new = sim.integrator.step(trial)
        s.commit(st)  # the providers' history back to the saved state
        gain[label] = [float(x) for x in new.lam[top]]
    print(json.dumps({"drift": "one-step gain", "t_s": st.t, "rows": [f"{names[s.row_joint[r]]}[{r}]" for r in top],
                      "lam_old": [float(x) for x in st.lam[top]], "lam_new_with_stiffness_of": gain}), flush=True)


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", nargs="*", default=["step0.45", "step0.5", "step0.55", "step0.6", "gap1.75",
                                                     "ditch6-16"])
    ap.add_argument("--drift", action="store_true")
    a = ap.parse_args()
    if a.drift:
        drift()
    for name in a.trials:
        for stiffness in (True, False):
            print(json.dumps(_trial(name, stiffness)), flush=True)
