"""Filters of recorded series: the FFT low-pass of wallin-shabana-2013 (its Figs. 12b and 13b: "very high
frequencies were filtered out ... using a low pass FFT with a cut-off frequency of 30 Hz").

:func:`lowpass_fft` is an ideal (brick-wall) low-pass in the frequency domain: the series' discrete Fourier
transform with every bin above the cut-off set to zero, transformed back. A DFT treats the record as one period
of a periodic signal, so a series whose ends differ (a force that grows over a run) would jump at the wrap and
ring along its whole length; the straight line through the first and last samples is therefore taken out
before the transform and put back after it (the line itself is not filtered: it is the record's trend, not a
frequency above the cut-off). A constant or linear series passes unchanged; a sine on an exact bin of the
record is kept below the cut-off and removed above it, to round-off.
"""

from __future__ import annotations

import numpy as np

__all__ = ["lowpass_fft", "sample_interval"]


def sample_interval(t, what: str = "t") -> float:
    """The constant sampling interval of the times ``t`` (s); ValueError naming ``what`` if they are not
    equally spaced (within 1e-6 of the interval) or fewer than two."""
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or len(t) < 2:
        raise ValueError(f"{what}: need at least two sample times, got {t.shape}")
    d = np.diff(t)
    dt = float(np.mean(d))
    if not dt > 0 or np.max(np.abs(d - dt)) > 1e-6 * dt:
        raise ValueError(f"{what}: samples must be equally spaced and increasing (intervals {d.min():.6g} .. "
                         f"{d.max():.6g} s)")
    return dt


def lowpass_fft(y, dt: float, cutoff_hz: float, axis: int = -1) -> np.ndarray:
    """``y`` with its frequencies above ``cutoff_hz`` removed (module docstring), along ``axis``.

    Parameters
    ----------
    y : array_like
        Equally spaced samples (any shape; filtered along ``axis``).
    dt : float
        Sampling interval, s (:func:`sample_interval` of the record's times).
    cutoff_hz : float
        Cut-off frequency, Hz: bins at frequencies ``f <= cutoff_hz`` are kept. At or above the Nyquist
        frequency ``1 / (2 dt)`` nothing is removed.
    """
    y = np.asarray(y, dtype=float)
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"lowpass_fft: dt must be a positive number of seconds, got {dt!r}")
    if not (np.isfinite(cutoff_hz) and cutoff_hz > 0):
        raise ValueError(f"lowpass_fft: cutoff_hz must be a positive frequency, got {cutoff_hz!r}")
    if y.ndim == 0 or y.shape[axis] < 2:
        raise ValueError(f"lowpass_fft: need at least two samples along axis {axis}, got shape {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("lowpass_fft: the series holds NaN or infinite values")
    y = np.moveaxis(y, axis, -1)
    n = y.shape[-1]
    s = np.arange(n) / (n - 1)
    trend = y[..., :1] + (y[..., -1:] - y[..., :1]) * s
    spec = np.fft.rfft(y - trend, axis=-1)
    spec[..., np.fft.rfftfreq(n, dt) > cutoff_hz] = 0.0
    out = np.fft.irfft(spec, n, axis=-1) + trend
    return np.moveaxis(out, -1, axis)
