"""Markers: named body points whose position, velocity and acceleration are recorded.

They add no force; :class:`MarkerOutputs` plugs into the system as a force
provider so that the recorder sees its series. The acceleration of a point
``p = r + A s̄`` is ``r̈ + α × s + ω × (ω × s)`` with ``α = A ω̄̇`` from the
state's last mean accelerations.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MarkerOutputs"]


class MarkerOutputs:
    name = "markers"

    def __init__(self, markers):
        self.names = [m[0] for m in markers]
        self.body = np.array([m[1] for m in markers], dtype=np.int64)
        self.s = np.array([m[2] for m in markers], dtype=float).reshape(-1, 3)
        self.out = np.zeros((len(markers), 9))

    def coupling_pairs(self):
        return []

    def bind(self, system):
        pass

    def initial_extra(self):
        return {}

    def accumulate(self, ctx):
        if ctx.data is not None:  # outputs only: nothing to add to the step
            return
        kin, st = ctx.kin, ctx.state
        for k, b in enumerate(self.body):
            R = kin.R[b]
            s = R @ self.s[k]
            w = kin.omega_w[b]
            alpha = R @ st.acc[b, 3:]
            self.out[k, 0:3] = kin.pos[b] + s
            self.out[k, 3:6] = kin.vel[b] + np.cross(w, s)
            self.out[k, 6:9] = st.acc[b, :3] + np.cross(alpha, s) + np.cross(w, np.cross(w, s))

    def commit(self, state):
        pass

    def series(self):
        out = {}
        for k, nm in enumerate(self.names):
            for j, part in enumerate(("pos", "vel", "acc")):
                for c, ax in enumerate("xyz"):
                    out[f"{nm}.{part}.{ax}"] = (self.out[:, 3 * j + c], k)
        return out
