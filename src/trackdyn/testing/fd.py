"""Finite-difference oracles for Jacobians in absolute coordinates.

Positions are perturbed on the manifold, ``q ⊕ ε e_k`` with ``e_k`` a unit
``(Δr, Δπ̄)`` of one body (the exponential map of eq. 2.9), velocities
``(ṙ, ω̄)`` directly. Central differences; used by the property tests and by
anyone adding an element.
"""

from __future__ import annotations

import numpy as np

from ..mbs import _kernels as MK

__all__ = ["perturb", "fd_position_jacobian", "fd_velocity_jacobian", "random_state"]


def perturb(q, body: int, k: int, eps: float) -> np.ndarray:
    """``q ⊕ eps e_k`` for body ``body`` and local coordinate ``k`` in 0..5."""
    dx = np.zeros((q.shape[0], 6))
    dx[body, k] = eps
    out = np.empty_like(q)
    MK.advance_positions_dq(q, dx, out)
    return out


def fd_position_jacobian(fn, q, v, bodies, eps=1e-6):
    """Central-difference Jacobian of ``fn(q, v) -> (m,)`` w.r.t. the 6 coordinates of each body.

    ``bodies`` lists the body index of each 6-column block (-1: zero columns).
    Returns (m, 6 len(bodies)).
    """
    f0 = np.asarray(fn(q, v), dtype=float)
    out = np.zeros((f0.size, 6 * len(bodies)))
    for side, b in enumerate(bodies):
        if b < 0:
            continue
        for k in range(6):
            fp = np.asarray(fn(perturb(q, b, k, eps), v), dtype=float).ravel()
            fm = np.asarray(fn(perturb(q, b, k, -eps), v), dtype=float).ravel()
            out[:, 6 * side + k] = (fp - fm) / (2 * eps)
    return out


def fd_velocity_jacobian(fn, q, v, bodies, eps=1e-6):
    """Central-difference Jacobian of ``fn(q, v)`` w.r.t. each body's ``(ṙ, ω̄)``."""
    f0 = np.asarray(fn(q, v), dtype=float)
    out = np.zeros((f0.size, 6 * len(bodies)))
    for side, b in enumerate(bodies):
        if b < 0:
            continue
        for k in range(6):
            vp = v.copy()
            vm = v.copy()
            vp[b, k] += eps
            vm[b, k] -= eps
            out[:, 6 * side + k] = (np.asarray(fn(q, vp)).ravel() - np.asarray(fn(q, vm)).ravel()) / (2 * eps)
    return out


def random_state(rng, n_bodies, pos_scale=1.0, vel_scale=1.0):
    """Random poses (unit quaternions) and velocities for ``n_bodies``."""
    q = np.zeros((n_bodies, 7))
    q[:, :3] = rng.normal(scale=pos_scale, size=(n_bodies, 3))
    quat = rng.normal(size=(n_bodies, 4))
    q[:, 3:] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    v = rng.normal(scale=vel_scale, size=(n_bodies, 6))
    return q, v
