"""Compiled kernels of the recorder: one sample gathered into a preallocated chunk buffer.

The recorder's plan names, for every kept series, where its value lives and
which row of the chunk buffer it goes to: a body's state (``q``, ``v``,
``acc``), a joint's reaction (``F``, ``T``) or an element's output buffer (a
flat float64 array in the tuple ``elem``, the kept series of each buffer
contiguous in the plan). The plan is built once per recorder; a sample is
then one call instead of a few dozen NumPy operations and a Python loop.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["gather_sample"]


@nb.njit(cache=True, nogil=True)
def gather_sample(q, v, acc, F, T, elem, body_dst, body_src, body_part, joint_dst, joint_src, joint_part,
                  elem_ptr, elem_dst, elem_idx, nan_cols, buf, n, t, tbuf, extent):  # pragma: no cover
    """Write one sample into column ``n`` of ``buf`` (n_kept, cap), ``tbuf[n] = t``; widen ``extent``.

    Body series: ``buf[body_dst[c], n]`` is part ``p = body_part[c]`` of body
    ``b = body_src[c]``: ``q[b, p]`` for p < 7 (position, quaternion),
    ``v[b, p - 7]`` for p < 13 (velocity, body-frame angular velocity), else
    ``acc[b, p - 13]``. Joint series: part ``p`` of joint ``j`` is ``F[j, p]``
    for p < 3, else ``T[j, p - 3]``. Element series of buffer ``e``: entries
    ``elem_ptr[e]`` to ``elem_ptr[e + 1]`` of ``elem_dst``/``elem_idx`` give
    ``buf[elem_dst[c], n] = elem[e][elem_idx[c]]``. The rows ``nan_cols``
    (series not due at this sample) get NaN. ``extent`` (4,) = (x_min,
    y_min, x_max, y_max) of the body positions so far, NaN positions ignored.
    """
    for c in range(body_dst.shape[0]):
        b = body_src[c]
        p = body_part[c]
        if p < 7:
            x = q[b, p]
        elif p < 13:
            x = v[b, p - 7]
        else:
            x = acc[b, p - 13]
        buf[body_dst[c], n] = x
    for c in range(joint_dst.shape[0]):
        j = joint_src[c]
        p = joint_part[c]
        buf[joint_dst[c], n] = F[j, p] if p < 3 else T[j, p - 3]
    for e in range(len(elem)):
        a = elem[e]
        for c in range(elem_ptr[e], elem_ptr[e + 1]):
            buf[elem_dst[c], n] = a[elem_idx[c]]
    for c in nan_cols:
        buf[c, n] = np.nan
    tbuf[n] = t
    for b in range(q.shape[0]):
        x = q[b, 0]
        y = q[b, 1]
        if x < extent[0]:
            extent[0] = x
        if y < extent[1]:
            extent[1] = y
        if x > extent[2]:
            extent[2] = x
        if y > extent[3]:
            extent[3] = y
