"""The force-provider hook: forces, Jacobians, history in State.extra, recorded outputs."""

import numpy as np

import trackdyn as td
from trackdyn.mbs import _force_kernels as FK


class GroundSpring:
    """A vertical spring-damper from z = 0 to every body, as a provider; counts accepted steps."""

    name = "springs"

    def __init__(self, k, c):
        self.k, self.c = k, c
        self.staged = None

    def coupling_pairs(self):
        return []

    def bind(self, system):
        nb = system.nb
        self.body = np.array([[-1, b] for b in range(nb)], dtype=np.int64)
        self.slot = np.array([system.pattern.element_slots(bb) for bb in self.body])
        self.Q = np.zeros((nb, 12))
        self.Kx = np.zeros((nb, 12, 12))
        self.Kv = np.zeros((nb, 12, 12))
        self.force = np.zeros(nb)

    def initial_extra(self):
        return {"springs.count": np.zeros(1)}

    def accumulate(self, ctx):
        z = ctx.kin.pos[:-1, 2]
        vz = ctx.kin.vel[:-1, 2]
        self.Q[:] = 0.0
        self.Kx[:] = 0.0
        self.Kv[:] = 0.0
        self.Q[:, 8] = -self.k * z - self.c * vz
        self.Kx[:, 8, 8] = -self.k
        self.Kv[:, 8, 8] = -self.c
        self.force[:] = self.Q[:, 8]
        if ctx.data is not None:
            FK.scatter_elements(self.body, self.Q, self.Kx, self.Kv, self.slot, ctx.cK, ctx.cD,
                                ctx.state.v, ctx.f, ctx.data, ctx.Dv, ctx.Kxv)
            self.staged = ctx.state.extra["springs.count"] + 1

    def commit(self, state):
        state.extra["springs.count"] = self.staged

    def series(self):
        return {"springs.force[0]": (self.force, 0)}


def test_provider_forces_history_and_outputs():
    m = td.Model()
    m.add_body("b", mass=2.0, inertia=[1, 1, 1], pos=[0, 0, 0.1])
    k, c = 2000.0, 10.0
    sim = td.Simulation(m, step=1e-3, output_step=1e-3, providers=[GroundSpring(k, c)])
    res = sim.run(5.0)
    # settles at the static deflection m g / k
    assert np.isclose(res["b.pos.z"][-1], -2.0 * 9.81 / k, rtol=1e-3)
    assert np.isclose(res["springs.force[0]"][-1], 2.0 * 9.81, rtol=1e-3)
    assert sim.state.extra["springs.count"][0] == sim.steps == 5000
    # damped frequency of the oscillation matches √(k/m - (c/2m)²) within 0.5 %
    z = res["b.pos.z"] + 2.0 * 9.81 / k
    idx = np.nonzero((z[:-1] < 0) & (z[1:] >= 0))[0]
    T = np.mean(np.diff(res.t[idx][:5]))
    wd = np.sqrt(k / 2.0 - (c / 4.0) ** 2)
    assert abs(T * wd / (2 * np.pi) - 1) < 5e-3
