"""Force providers (contact, drivetrain: ``ForceProvider``) on the spatial recursive formulation.

The providers are evaluated by the system's embedded absolute formulation on the absolute body states and
projected on the joints; the reference is the absolute formulation's own KKT solution with the same provider.
"""

from __future__ import annotations

import numpy as np
import pytest
from _recursive_helpers import absolute_accelerations, manifold_state
from test_recursive_spatial import floating_loop

from trackdyn.formulations.absolute import AbsoluteSystem
from trackdyn.formulations.recursive_spatial import RecursiveSpatialSystem
from trackdyn.integrators.recursive import RecursiveRK4
from trackdyn.mbs.model import State

import warnings


class PointSpring:
    """A provider: a spring-damper from a world anchor to a point of one body (world force, body torque about the
    centre), with a history in ``State.extra`` (the count of steps committed) and a log of what it was given."""

    name = "point-spring"

    def __init__(self, body, point_b, anchor, k=300.0, c=4.0):
        self.body_name, self.point_b, self.anchor = body, np.asarray(point_b, float), np.asarray(anchor, float)
        self.k, self.c = k, c
        self.seen = []

    def coupling_pairs(self):
        return []

    def bind(self, system):
        self.b = system.body_names.index(self.body_name)

    def initial_extra(self):
        return {"point-spring.steps": np.zeros(1)}

    def accumulate(self, ctx):
        if ctx.data is None:
            return
        self.seen.append((ctx.state, ctx.h))
        k = ctx.kin
        R = k.R[self.b]
        s = R @ self.point_b
        p = k.pos[self.b] + s
        vp = k.vel[self.b] + np.cross(k.omega_w[self.b], s)
        F = -self.k * (p - self.anchor) - self.c * vp
        ctx.f[self.b, :3] += F
        ctx.f[self.b, 3:] += R.T @ np.cross(s, F)

    def commit(self, state):
        state.extra["point-spring.steps"] = state.extra["point-spring.steps"] + 1.0

    def series(self):
        return {}


def _systems():
    prov_r = PointSpring("plate", (0.1, -0.05, 0.02), (0.3, 0.2, -0.4))
    prov_a = PointSpring("plate", (0.1, -0.05, 0.02), (0.3, 0.2, -0.4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs = RecursiveSpatialSystem(floating_loop(), providers=[prov_r])
        ab = AbsoluteSystem(floating_loop(), providers=[prov_a])
    return rs, ab, prov_r


@pytest.mark.parametrize("seed", [31, 32])
def test_provider_forces_equal_absolute_index1_solution(seed):
    """The provider's force on the plate moves the body accelerations as in the absolute KKT solution with the
    same provider (relative 1e-12; without it they differ at the 1e-1 level, so the force is there)."""
    rs, ab, _ = _systems()
    q, qd = manifold_state(rs, seed)
    qa, va, _ = rs.to_absolute(q, qd)
    rs.begin_step(State(0.0, qa, va, np.zeros(rs.nc), np.zeros_like(va), {}), 1e-3)
    qdd, _ = rs.accelerations(0.0, q, qd)
    _, _, aa = rs.to_absolute(q, qd, qdd)
    ref = absolute_accelerations(ab, qa, va)
    assert np.max(np.abs(aa - ref)) <= 1e-12 * np.max(np.abs(ref))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bare = AbsoluteSystem(floating_loop())
    assert np.max(np.abs(absolute_accelerations(bare, qa, va) - ref)) > 1e-3 * np.max(np.abs(ref))


def test_steppers_hand_the_step_state_and_commit_the_history():
    """recursive-rk4 hands the provider the step's starting state and h at every evaluation of the step (5: the
    four stages, the first re-evaluated because the forces depend on that state, and the end point) and lets it
    commit into the new state."""
    rs, _, prov = _systems()
    st = rs.initial_state()
    assert st.extra["point-spring.steps"][0] == 0.0
    stepper = RecursiveRK4(rs, 1e-3)
    for k in range(3):
        prov.seen.clear()
        new = stepper.step(st)
        assert len(prov.seen) == 5 and all(s is st and h == 1e-3 for s, h in prov.seen)
        assert new.extra["point-spring.steps"][0] == k + 1
        st = new


def test_providers_need_the_step_state():
    rs, _, _ = _systems()
    q = np.zeros(rs.n)
    with pytest.raises(ValueError, match="begin_step"):
        rs.accelerations(0.0, q, q)
