"""Prescribed functions of time for drivers and loads: value, derivatives, integral.

A :class:`Profile` is what a motor or a prescribed translation follows:
``value(t)``, ``d1(t)``, ``d2(t)`` and ``integral(t) = ∫₀ᵗ value``. Speed
motors integrate their speed profile to an angle, so the integral must be
exact for the built-in shapes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["Profile", "as_profile"]


@dataclass(frozen=True)
class Profile:
    """A scalar function of time with derivatives and integral.

    Build with :meth:`constant`, :meth:`linear`, :meth:`table`,
    :meth:`smooth_ramp` or :meth:`function`.
    """

    kind: str
    params: tuple

    # ------------------------------------------------------------ constructors
    @classmethod
    def constant(cls, value: float) -> "Profile":
        return cls("constant", (float(value),))

    @classmethod
    def linear(cls, rate: float, offset: float = 0.0) -> "Profile":
        """``offset + rate t``."""
        return cls("linear", (float(offset), float(rate)))

    @classmethod
    def table(cls, times, values) -> "Profile":
        """Piecewise-linear through ``(times, values)``, constant outside."""
        t = np.asarray(times, dtype=float)
        y = np.asarray(values, dtype=float)
        if t.ndim != 1 or t.shape != y.shape or len(t) < 1:
            raise ValueError("profile table: times and values must be 1-D arrays of equal length >= 1")
        if np.any(np.diff(t) <= 0):
            raise ValueError(f"profile table: times must increase strictly, got {t.tolist()}")
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(y))):
            raise ValueError("profile table: times and values must be finite")
        return cls("table", (tuple(t), tuple(y)))

    @classmethod
    def smooth_ramp(cls, t0: float, t1: float, y0: float, y1: float) -> "Profile":
        """``y0`` before ``t0``, ``y1`` after ``t1``, a C¹ cubic (smoothstep) between."""
        if not t1 > t0:
            raise ValueError(f"smooth_ramp: t1 ({t1}) must be greater than t0 ({t0})")
        return cls("smooth_ramp", (float(t0), float(t1), float(y0), float(y1)))

    @classmethod
    def function(cls, f: Callable[[float], float], df=None, ddf=None) -> "Profile":
        """An arbitrary callable; missing derivatives by central differences,
        the integral by adaptive quadrature (slow: prefer the built-in shapes)."""
        if not callable(f):
            raise TypeError("Profile.function needs a callable f(t)")
        return cls("function", (f, df, ddf))

    # ------------------------------------------------------------ evaluation
    def value(self, t: float) -> float:
        k, p = self.kind, self.params
        if k == "constant":
            return p[0]
        if k == "linear":
            return p[0] + p[1] * t
        if k == "table":
            return float(np.interp(t, p[0], p[1]))
        if k == "smooth_ramp":
            t0, t1, y0, y1 = p
            s = min(max((t - t0) / (t1 - t0), 0.0), 1.0)
            return y0 + (y1 - y0) * s * s * (3 - 2 * s)
        return float(p[0](t))

    def d1(self, t: float) -> float:
        k, p = self.kind, self.params
        if k == "constant":
            return 0.0
        if k == "linear":
            return p[1]
        if k == "table":
            ts, ys = p
            if len(ts) < 2 or t <= ts[0] or t >= ts[-1]:
                return 0.0
            i = int(np.searchsorted(ts, t, side="right")) - 1
            return (ys[i + 1] - ys[i]) / (ts[i + 1] - ts[i])
        if k == "smooth_ramp":
            t0, t1, y0, y1 = p
            if t <= t0 or t >= t1:
                return 0.0
            s = (t - t0) / (t1 - t0)
            return (y1 - y0) * 6 * s * (1 - s) / (t1 - t0)
        f, df, _ = p
        if df is not None:
            return float(df(t))
        e = 1e-6 * max(1.0, abs(t))
        return (f(t + e) - f(t - e)) / (2 * e)

    def d2(self, t: float) -> float:
        k, p = self.kind, self.params
        if k in ("constant", "linear", "table"):
            return 0.0
        if k == "smooth_ramp":
            t0, t1, y0, y1 = p
            if t <= t0 or t >= t1:
                return 0.0
            s = (t - t0) / (t1 - t0)
            return (y1 - y0) * 6 * (1 - 2 * s) / (t1 - t0) ** 2
        f, df, ddf = p
        if ddf is not None:
            return float(ddf(t))
        e = 1e-4 * max(1.0, abs(t))
        if df is not None:
            return (df(t + e) - df(t - e)) / (2 * e)
        return (f(t + e) - 2 * f(t) + f(t - e)) / (e * e)

    def integral(self, t: float) -> float:
        """∫₀ᵗ value(τ) dτ."""
        k, p = self.kind, self.params
        if k == "constant":
            return p[0] * t
        if k == "linear":
            return p[0] * t + 0.5 * p[1] * t * t
        if k == "table":
            return _table_integral(np.asarray(p[0]), np.asarray(p[1]), t)
        if k == "smooth_ramp":
            t0, t1, y0, y1 = p

            def prim(x):  # ∫ from -inf-ish reference of the piecewise function
                if x <= t0:
                    return y0 * x
                if x >= t1:
                    return prim(t1) + y1 * (x - t1)
                L = t1 - t0
                s = (x - t0) / L
                return y0 * t0 + L * (y0 * s + (y1 - y0) * (s**3 - 0.5 * s**4))

            return prim(t) - prim(0.0)
        from scipy.integrate import quad

        val, _ = quad(p[0], 0.0, t, limit=200)
        return float(val)

    def __call__(self, t: float) -> float:
        return self.value(t)


def _table_integral(ts, ys, t):
    """Exact integral of a clamped piecewise-linear table from 0 to t."""
    if t == 0.0:
        return 0.0
    sign = 1.0
    a, b = 0.0, t
    if b < a:
        a, b, sign = b, a, -1.0
    pts = np.concatenate([[a], ts[(ts > a) & (ts < b)], [b]])
    vals = np.interp(pts, ts, ys)
    return sign * float(np.sum(0.5 * (vals[1:] + vals[:-1]) * np.diff(pts)))


def as_profile(x, what: str) -> Profile:
    """A float, a callable or a Profile as a Profile; ``what`` names the field in errors."""
    if isinstance(x, Profile):
        return x
    if callable(x):
        return Profile.function(x)
    try:
        val = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected a number, a callable f(t) or a Profile, got {x!r}") from None
    if not math.isfinite(val):
        raise ValueError(f"{what}: value {val} is not finite")
    return Profile.constant(val)
