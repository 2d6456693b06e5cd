"""Vehicle-level recorded series derived from the multibody state.

``left.shoe[k].tension``: the force that shoe k transmits to shoe k+1 through
their pin, along shoe k+1 (positive in tension), from the pin's reaction.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ShoeTensions"]


class ShoeTensions:
    """Output-only provider (adds no force) recording the tension of every shoe pin."""

    name = "shoe-tensions"

    def __init__(self, sides):
        self.sides = sides
        self.names, self.joint_names, self.body_names = [], [], []
        for side in sides.values():
            n = len(side.shoes)
            for k in range(n):
                self.names.append(f"{side.name}.shoe[{k}].tension")
                self.joint_names.append(side.pins[k])
                self.body_names.append(side.shoes[(k + 1) % n])
        self.tension = np.zeros(len(self.names))

    def coupling_pairs(self):
        return []

    def bind(self, system):
        self.system = system
        idx = {nm: k for k, nm in enumerate(system.joint_names)}
        self.joint_idx = np.array([idx[j] for j in self.joint_names], dtype=np.int64)
        bidx = {nm: k for k, nm in enumerate(system.body_names)}
        self.body_idx = np.array([bidx[b] for b in self.body_names], dtype=np.int64)

    def initial_extra(self):
        return {}

    def accumulate(self, ctx):
        if ctx.data is not None:
            return
        F, _ = self.system.reactions(ctx.state.lam)
        d = ctx.kin.R[self.body_idx][:, :, 0]  # body x: rear pin -> front pin
        self.tension[:] = -np.einsum("ij,ij->i", F[self.joint_idx], d)

    def commit(self, state):
        pass

    def series(self):
        return {nm: (self.tension, k) for k, nm in enumerate(self.names)}
