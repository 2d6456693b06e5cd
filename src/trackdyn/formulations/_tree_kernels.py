"""Numba kernels for the recorded outputs of the real-time path (:class:`trackdyn.formulations.tree.TreeSystem`)."""

from __future__ import annotations

import numba as nb

jit = nb.njit(cache=True)


@jit
def markers(body, s, pos, R, vel, omega_w, acc, out):
    """Marker position, velocity and acceleration (world) into ``out`` (n, 9).

    As :class:`trackdyn.mbs.markers.MarkerOutputs` (its Python loop with
    ``np.cross`` cost ~120 µs per recorded sample for the M113's markers).
    ``s`` (n, 3) body-frame offsets; ``acc`` (nb, 6) the state's accelerations
    (world linear, body-frame angular): ``a = a_b + α × s + ω × (ω × s)``.
    """
    for k in range(body.shape[0]):
        b = body[k]
        sw = (R[b, 0, 0] * s[k, 0] + R[b, 0, 1] * s[k, 1] + R[b, 0, 2] * s[k, 2],
              R[b, 1, 0] * s[k, 0] + R[b, 1, 1] * s[k, 1] + R[b, 1, 2] * s[k, 2],
              R[b, 2, 0] * s[k, 0] + R[b, 2, 1] * s[k, 1] + R[b, 2, 2] * s[k, 2])
        w = (omega_w[b, 0], omega_w[b, 1], omega_w[b, 2])
        al = (R[b, 0, 0] * acc[b, 3] + R[b, 0, 1] * acc[b, 4] + R[b, 0, 2] * acc[b, 5],
              R[b, 1, 0] * acc[b, 3] + R[b, 1, 1] * acc[b, 4] + R[b, 1, 2] * acc[b, 5],
              R[b, 2, 0] * acc[b, 3] + R[b, 2, 1] * acc[b, 4] + R[b, 2, 2] * acc[b, 5])
        ws = (w[1] * sw[2] - w[2] * sw[1], w[2] * sw[0] - w[0] * sw[2], w[0] * sw[1] - w[1] * sw[0])
        wws = (w[1] * ws[2] - w[2] * ws[1], w[2] * ws[0] - w[0] * ws[2], w[0] * ws[1] - w[1] * ws[0])
        als = (al[1] * sw[2] - al[2] * sw[1], al[2] * sw[0] - al[0] * sw[2], al[0] * sw[1] - al[1] * sw[0])
        for i in range(3):
            out[k, i] = pos[b, i] + sw[i]
            out[k, 3 + i] = vel[b, i] + ws[i]
            out[k, 6 + i] = acc[b, i] + als[i] + wws[i]
