"""Quaternion, rotation and small-vector kernels. No domain imports."""

from .quaternion import (
    matrix_to_quat,
    quat_conj,
    quat_exp_update,
    quat_from_axis_angle,
    quat_mul,
    quat_normalize,
    quat_to_matrix,
    skew,
)

__all__ = [
    "matrix_to_quat",
    "quat_conj",
    "quat_exp_update",
    "quat_from_axis_angle",
    "quat_mul",
    "quat_normalize",
    "quat_to_matrix",
    "skew",
]
