"""Quaternion and rotation helpers on NumPy arrays (set-up time, tests, results).

Quaternions are unit, scalar first ``(e0, e1, e2, e3)``; ``A(q)`` rotates body
vectors into the world frame (thesis appendix A). The time loop uses the
tuple kernels of :mod:`trackdyn.math._kernels` instead.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "skew",
    "body_pitch",
    "quat_mul",
    "quat_conj",
    "quat_to_matrix",
    "matrix_to_quat",
    "quat_from_axis_angle",
    "quat_exp_update",
    "quat_normalize",
]


def skew(a) -> np.ndarray:
    """Skew-symmetric matrix ``ã`` with ``ã b = a × b``."""
    a = np.asarray(a, dtype=float)
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def quat_mul(p, q) -> np.ndarray:
    """Hamilton product ``p q`` (scalar first)."""
    p0, p1, p2, p3 = p
    q0, q1, q2, q3 = q
    return np.array(
        [
            p0 * q0 - p1 * q1 - p2 * q2 - p3 * q3,
            p0 * q1 + p1 * q0 + p2 * q3 - p3 * q2,
            p0 * q2 - p1 * q3 + p2 * q0 + p3 * q1,
            p0 * q3 + p1 * q2 - p2 * q1 + p3 * q0,
        ]
    )


def quat_conj(q) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    return np.array([q[0], -q[1], -q[2], -q[3]])


def quat_normalize(q) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    n = np.linalg.norm(q)
    if not np.isfinite(n) or n == 0.0:
        raise ValueError(f"quaternion {q.tolist()} has no direction: its norm is {n}")
    return q / n


def quat_to_matrix(q) -> np.ndarray:
    """Rotation matrix ``A(q)`` (body to world), thesis appendix A.

    ``q`` (4,) gives (3, 3); a stack of quaternions (..., 4), e.g. a body's
    recorded ``quat.e0..e3`` series side by side, gives (..., 3, 3).
    """
    q = np.asarray(q, dtype=float)
    q0, q1, q2, q3 = (q[..., k] for k in range(4))
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0] = q0 * q0 + q1 * q1 - q2 * q2 - q3 * q3
    R[..., 0, 1] = 2 * (q1 * q2 - q3 * q0)
    R[..., 0, 2] = 2 * (q1 * q3 + q2 * q0)
    R[..., 1, 0] = 2 * (q1 * q2 + q3 * q0)
    R[..., 1, 1] = q0 * q0 - q1 * q1 + q2 * q2 - q3 * q3
    R[..., 1, 2] = 2 * (q2 * q3 - q1 * q0)
    R[..., 2, 0] = 2 * (q1 * q3 - q2 * q0)
    R[..., 2, 1] = 2 * (q1 * q0 + q2 * q3)
    R[..., 2, 2] = q0 * q0 - q1 * q1 - q2 * q2 + q3 * q3
    return R


def body_pitch(R) -> np.ndarray:
    """Pitch of a body's x axis above the horizontal, rad (nose up positive), from ``A(q)`` (..., 3, 3)."""
    return np.arctan2(R[..., 2, 0], R[..., 0, 0])


def matrix_to_quat(R) -> np.ndarray:
    """Unit quaternion (``e0 >= 0``) of a rotation matrix (Shepperd's method)."""
    R = np.asarray(R, dtype=float)
    tr = np.trace(R)
    if tr > 0:
        s = 2.0 * np.sqrt(1.0 + tr)
        q = np.array([0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s])
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = np.array([(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s])
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = np.array([(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s])
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = np.array([(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s])
    if q[0] < 0:
        q = -q
    return q / np.linalg.norm(q)


def quat_from_axis_angle(axis, angle: float) -> np.ndarray:
    """Quaternion of a rotation by ``angle`` (rad) about ``axis``."""
    axis = np.asarray(axis, dtype=float)
    n = np.linalg.norm(axis)
    if n == 0.0:
        raise ValueError("rotation axis has zero length")
    axis = axis / n
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


def quat_exp_update(q, omega_b, h: float) -> np.ndarray:
    """``q exp([0, ω̄ h/2])``: advance an orientation by a body-frame angular velocity (eq. 2.9)."""
    w = np.asarray(omega_b, dtype=float)
    n = np.linalg.norm(w)
    if n * h < 1e-12:
        dq = np.array([1.0, *(0.5 * h * w)])
    else:
        dq = np.concatenate([[np.cos(0.5 * n * h)], np.sin(0.5 * n * h) * w / n])
    out = quat_mul(q, dq)
    return out / np.linalg.norm(out)
