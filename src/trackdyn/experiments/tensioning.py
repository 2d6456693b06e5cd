"""The track-tensioning procedure of korner-2024 §5.1, as a run-time controller of the tensioner springs.

Changing the sprocket or idler position changes the track length, the shoe
count and where the idler settles; with a spring tensioner the initial track
tension (ITT) then differs from one configuration to the next. §5.1 makes
every configuration start at the same ITT:

1. **free**: the idler is spring-less and pushed with the constant force that
   holds the target ITT (both strands leaving the idler, ``F = T (u_in +
   u_out) · d``: about 2 T = 20 kN on the M113), until the vehicle settles
   (at least ``free_time`` s, then until the carrier's speed along the slide
   is below ``rate_tol`` m/s, at most ``max_free_time`` s);
2. **average**: the carrier position is averaged over ``average_time`` s
   while the constant force still acts;
3. **locked**: the spring is reintroduced with the spec's stiffness and an
   anchor (free length) such that it pushes with exactly that force at the
   averaged position — the idler is "held at its mean position by
   reintroducing the spring".

Implementation: the tensioner of each side is a TSDA (tension ``k (l - l0) +
c l̇ - f_act``) between the chassis anchor and the idler carrier; the
procedure edits that element's ``k``, ``l0`` and ``f_act`` in the system's
TSDA block between steps (phase 1: ``k = 0``, ``f_act = F``; phase 3: ``k =
k_spec``, ``f_act = preload``, ``l0 = l̄ + (F - preload)/k``). The damping is
kept throughout so the free idler settles. The assembled spring already
holds the target tension at the design pose, so ``F`` is the force the
assembled spring exerts at t = 0 (scaled when another ``target_tension`` is
asked).

:meth:`Tensioning.info` reports, per side, the push force, the averaging
window, the mean carrier length and the idler's mean position in the vehicle
frame (its x is the quantity of thesis Fig. 5.5, right); the mean shoe
tension over the window (Fig. 5.5, left) is computed from the recorded
``*.shoe[*].tension`` by :func:`window_means`.
"""

from __future__ import annotations

import numpy as np

from ..math.quaternion import quat_to_matrix
from ..mbs.forces import TSDABlock

__all__ = ["Tensioning", "idler_strands", "strand_tensions", "vehicle_frame", "window_means"]


def _tsda_block(system, name):
    for blk in system.blocks:
        if isinstance(blk, TSDABlock) and name in blk.names:
            return blk, blk.names.index(name)
    raise ValueError(f"tensioning: no spring-damper named {name!r} in the model")


def _length(system, blk, k, q):
    """Current length of TSDA ``k`` of ``blk`` at positions ``q`` (nb, 7)."""
    pts = []
    for j in range(2):
        b = int(blk.body[k, j])
        if b < 0:
            pts.append(blk.s[k, j])
        else:
            pts.append(q[b, :3] + quat_to_matrix(q[b, 3:]) @ blk.s[k, j])
    return float(np.linalg.norm(pts[1] - pts[0]))


class Tensioning:
    """The §5.1 procedure on a prepared run; call it after every step (``Monitor`` does).

    Parameters
    ----------
    prep : Prepared
        From :func:`trackdyn.sim.run.prepare`, not yet run.
    target_tension : float, optional
        Initial track tension to hold, N (default: the spec's tensioner target).
    free_time : float
        Minimum duration of the spring-less phase, s.
    max_free_time : float
        Longest spring-less phase, s (then it averages whatever state it is in).
    average_time : float
        Averaging window of the carrier position, s.
    rate_tol : float
        Carrier speed along its slide under which the idler counts as settled, m/s.
    """

    def __init__(self, prep, target_tension: float | None = None, free_time: float = 0.8,
                 max_free_time: float = 2.0, average_time: float = 0.4, rate_tol: float = 2e-3):
        for name, v in (("free_time", free_time), ("max_free_time", max_free_time), ("average_time", average_time),
                        ("rate_tol", rate_tol)):
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
                raise ValueError(f"tensioning: {name} = {v!r}: must be a positive number")
        if max_free_time < free_time:
            raise ValueError(f"tensioning: max_free_time = {max_free_time} is below free_time = {free_time}")
        spec = prep.spec
        ten = spec.idler.tensioner
        if ten.mode != "spring":
            raise ValueError(f"tensioning: the tensioner of {spec.name!r} is {ten.mode!r}; the §5.1 procedure "
                             "needs a spring tensioner")
        sides = [s for s in prep.vehicle.sides.values() if getattr(s, "tensioner", None)]
        if not sides:
            raise ValueError(f"tensioning: the {prep.scenario.fidelity!r} model of {spec.name!r} has no tensioner")
        self.system = prep.sim.system
        self.spec = spec
        self.free_time, self.max_free_time = float(free_time), float(max_free_time)
        self.average_time, self.rate_tol = float(average_time), float(rate_tol)
        scale = 1.0 if target_tension is None else float(target_tension) / ten.target_tension
        if target_tension is not None and not (np.isfinite(target_tension) and target_tension > 0):
            raise ValueError(f"tensioning: target_tension = {target_tension!r}: must be positive")
        self.target_tension = ten.target_tension * scale
        q = prep.sim.state.q
        self.sides = []
        names = {n: k for k, n in enumerate(self.system.body_names)}
        for s in sides:
            blk, k = _tsda_block(self.system, s.tensioner)
            l_init = _length(self.system, blk, k, q)
            # the assembled spring holds the target tension at the design pose: its force there is the push
            push = -(blk.k[k] * (l_init - blk.l0[k]) - blk.f_act[k]) * scale
            self.sides.append({"name": s.name, "block": blk, "k": k, "stiffness": float(blk.k[k]),
                               "free_length": float(blk.l0[k]), "preload": float(blk.f_act[k]), "push": float(push),
                               "carrier": names[s.carrier], "chassis": names["chassis"], "samples": []})
            blk.k[k] = 0.0
            blk.f_act[k] = push
        self.phase = "free"
        self.t_free_end = None
        self.t_lock = None

    def __call__(self, sim) -> bool:
        if self.phase == "locked":
            return False
        t = sim.state.t
        if self.phase == "free":
            settled = all(abs(s["block"].rate[s["k"]]) < self.rate_tol for s in self.sides)
            if (t >= self.free_time and settled) or t >= self.max_free_time:
                self.phase = "average"
                self.t_free_end = t
            return False
        for s in self.sides:
            s["samples"].append(_length(self.system, s["block"], s["k"], sim.state.q))
        if t >= self.t_free_end + self.average_time:
            for s in self.sides:
                blk, k = s["block"], s["k"]
                lbar = float(np.mean(s["samples"]))
                s["mean_length"] = lbar
                s["length_std"] = float(np.std(s["samples"]))
                blk.k[k] = s["stiffness"]
                blk.f_act[k] = s["preload"]
                blk.l0[k] = lbar + (s["push"] - s["preload"]) / s["stiffness"] if s["stiffness"] > 0 else lbar
            self.phase = "locked"
            self.t_lock = t
        return False

    def info(self) -> dict:
        """Per side: push force (N), averaging window (s), mean carrier length (m) and its scatter."""
        return {
            "procedure": "korner-2024 §5.1", "phase": self.phase, "target_tension_N": self.target_tension,
            "free_end_s": self.t_free_end, "lock_s": self.t_lock,
            "sides": {s["name"]: {"push_N": s["push"], "mean_length_m": s.get("mean_length"),
                                  "length_std_m": s.get("length_std"), "new_free_length_m":
                                  float(s["block"].l0[s["k"]]) if self.phase == "locked" else None}
                      for s in self.sides},
        }


def window_means(result, t0: float, t1: float, com) -> dict:
    """Mean shoe tension and idler position over ``[t0, t1]`` s of a vehicle run (thesis Fig. 5.5).

    Returns ``itt_N`` (mean over every shoe of both tracks and the window),
    ``itt_side_N`` per side, and per side the idler centre in the vehicle
    frame (``idler_x_m``, ``idler_z_m``: relative to the sprocket axis, from
    the chassis pose and the spec's centre of mass ``com``).
    """
    t = result.t
    w = (t >= t0 - 1e-9) & (t <= t1 + 1e-9)
    if not w.any():
        w = np.zeros_like(t, dtype=bool)
        w[-1] = True
    out = {"window_s": [float(t[w][0]), float(t[w][-1])]}
    per_side = {}
    allv = []
    for side in ("left", "right"):
        cols = result.match([f"{side}.shoe[*].tension"])
        if cols:
            result.prefetch(cols)
            vals = np.array([np.nanmean(result[c][w]) for c in cols])
            per_side[side] = float(np.mean(vals))
            allv.append(vals)
    out["itt_N"] = float(np.mean(np.concatenate(allv))) if allv else float("nan")
    out["itt_side_N"] = per_side
    com = np.asarray(com, float)
    idler = {}
    if "chassis.pos.x" in result:
        for side in ("left", "right"):
            if f"{side}.idler.pos.x" not in result:
                continue
            pv = vehicle_frame(result, f"{side}.idler", com)[w]
            idler[side] = {"idler_x_m": float(pv[:, 0].mean()), "idler_z_m": float(pv[:, 2].mean())}
    out["idler"] = idler
    if "left" in idler:
        out["idler_x_m"] = idler["left"]["idler_x_m"]
        out["idler_z_m"] = idler["left"]["idler_z_m"]
    return out


def vehicle_frame(result, name: str, com) -> np.ndarray:
    """Body ``name``'s recorded centre in the vehicle frame, (T, 3) m: from the recorded chassis pose
    (``chassis.pos.*``, ``chassis.quat.*``) and the spec's chassis centre of mass ``com`` (the vehicle frame's
    origin is the sprocket axis, so ``com`` is where the chassis body's centre sits in it)."""
    P = np.column_stack([result[f"chassis.pos.{c}"] for c in "xyz"])
    R = quat_to_matrix(np.column_stack([result[f"chassis.quat.e{k}"] for k in range(4)]))
    X = np.column_stack([result[f"{name}.pos.{c}"] for c in "xyz"])
    return np.einsum("tji,tj->ti", R, X - P) + np.asarray(com, float)


def idler_strands(spec, side, result, i: int, margin: float = 0.02) -> tuple[list, list]:
    """Loop indices of the shoes of the two strands leaving the idler at sample ``i``: (upper, lower),
    each ordered from the idler outwards.

    ``side`` is the built side (``prep.vehicle.sides[name]``: its ``shoes``, ``idler``, ``sprocket`` and
    ``wheels`` body names). A shoe is wrapped on the sprocket or the idler, or pressed under a road wheel,
    while its centre is within the pin circle (sprocket) or the wheel radius plus the shoe's ``top`` (+
    ``margin``) of that centre, below a road wheel's centre; the strands are the runs of other shoes on
    either side of the idler's wrap. On the M113 the upper run rests on the road wheels' tops, which turn
    freely.
    """
    com = np.asarray(spec.chassis.com, float)
    at = lambda name: vehicle_frame(result, name, com)[i][[0, 2]]
    top = spec.shoes.top
    rolling = ([(at(side.sprocket), spec.sprocket.assembly_radius + margin, False)]
               + [(at(w), spec.suspension.wheel_radius + top + margin, True) for w in side.wheels])
    idler = at(side.idler)
    shoes = [at(s) for s in side.shoes]
    n = len(shoes)
    on_idler = [np.hypot(*(p - idler)) < spec.idler.radius + top + margin for p in shoes]
    held = [on_idler[k] or any(np.hypot(*(p - c)) < r and (not below or p[1] < c[1]) for c, r, below in rolling)
            for k, p in enumerate(shoes)]
    first = next(k for k in range(n) if on_idler[k] and not on_idler[k - 1])
    last = next(k for k in range(n) if on_idler[k] and not on_idler[(k + 1) % n])
    runs = []
    for start, step in ((first - 1, -1), (last + 1, 1)):
        run, k = [], start % n
        while not held[k]:
            run.append(k)
            k = (k + step) % n
        runs.append(run)
    upper, lower = sorted(runs, key=lambda r: -np.mean([shoes[k][1] for k in r]))
    return upper, lower


def strand_tensions(spec, side, result, t0: float, t1: float) -> dict:
    """The tension of the two strands leaving the idler over ``[t0, t1]`` s, and its hanging-chain share.

    A chain of weight ``w = m_shoe g / pitch`` per metre carries, between two of its points on free spans
    or over frictionless supports, a tension that differs by ``w Δz`` (the height difference): the upper
    strand, which lies about 0.6 m above the lower one on the M113, carries ``w Δz`` more even when the
    tensioner acts perfectly. Per strand (``upper``, ``lower``): the mean of ``SIDE.shoe[k].tension`` over
    its shoes and the window (``tension_N``), their mean world height (``z_m``), and the tension brought to
    the idler centre's height, ``tension_at_idler_N = tension_N - w (z_m - z_idler)``; ``w_N_per_m``;
    ``gravity_N = w (z_upper - z_lower)``; the shoes (``shoes``, from the idler outwards).
    """
    t = result.t
    win = (t >= t0 - 1e-9) & (t <= t1 + 1e-9)
    i0 = int(np.nonzero(win)[0][0])
    upper, lower = idler_strands(spec, side, result, i0)
    w = spec.shoes.mass * 9.81 / spec.shoes.pitch
    z_idler = float(np.mean(result[f"{side.idler}.pos.z"][win]))
    out = {"w_N_per_m": float(w), "z_idler_m": z_idler}
    for name, strand in (("upper", upper), ("lower", lower)):
        tension = float(np.mean([np.mean(result[f"{side.name}.shoe[{k}].tension"][win]) for k in strand]))
        z = float(np.mean([np.mean(result[f"{side.shoes[k]}.pos.z"][win]) for k in strand]))
        out[name] = {"shoes": [int(k) for k in strand], "tension_N": tension, "z_m": z,
                     "tension_at_idler_N": tension - w * (z - z_idler)}
    out["gravity_N"] = w * (out["upper"]["z_m"] - out["lower"]["z_m"])
    return out
