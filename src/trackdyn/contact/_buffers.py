"""Fixed-capacity struct-of-arrays buffers of contact records and their outputs.

A record is written by the narrow phase (:mod:`trackdyn.contact._detect`) and
read by the force stage (:mod:`trackdyn.contact._kernels`); the field meanings
are documented there. Buffers grow (doubling) only when a step finds more
contacts than ever before, so the time loop does not allocate.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Records", "Outputs", "new_records", "new_outputs"]


class Records(NamedTuple):
    kind: np.ndarray      # (cap,) int64: K_PP, K_PL, K_PN, K_DN
    pmode: np.ndarray     # (cap,) int64: PM_FIXED, PM_LINE
    body: np.ndarray      # (cap, 2) int64: side A, side B (-1 ground)
    lside: np.ndarray     # (cap,) int64: side of the line in PM_LINE
    pa: np.ndarray        # (cap, 3): witness point (A frame) or line point (line-side frame)
    da: np.ndarray        # (cap, 3): disc axis (A frame) or line direction (line-side frame)
    sp: np.ndarray        # (cap, 3): station plane point (plane-side frame), PM_LINE
    sn: np.ndarray        # (cap, 3): station plane normal
    tb: np.ndarray        # (cap, 3): target point (B frame)
    te: np.ndarray        # (cap, 3): target direction / outward normal (B frame)
    ra: np.ndarray        # (cap,): radius at the witness point (m)
    rb: np.ndarray        # (cap,): radius of the target (m)
    conc: np.ndarray      # (cap,) int64: +1 convex, -1 internal (concave target)
    pair: np.ndarray      # (cap,) int64: material pair index
    reff: np.ndarray      # (cap,): effective radius of curvature (m)
    weight: np.ndarray    # (cap,): share of a line contact carried by this record
    area: np.ndarray      # (cap,): Winkler area (m²) or slice width (m)
    wtype: np.ndarray     # (cap,) int64: W_POINT, W_DISC, W_SPHERE
    key: np.ndarray       # (cap, 2) int64: persistent identity (history)
    pslot: np.ndarray     # (cap,) int64: coupling block index in the KKT pattern (-1: none)
    ptrans: np.ndarray    # (cap,) int64: 1 if the block is stored as (B, A)


class Outputs(NamedTuple):
    delta: np.ndarray     # (cap,): penetration (m)
    normal: np.ndarray    # (cap, 3): direction in which side B is pushed (world)
    point: np.ndarray     # (cap, 3): contact point (world, m)
    vrel: np.ndarray      # (cap, 3): velocity of B relative to A at the point (m/s)
    fn: np.ndarray        # (cap,): normal force (N)
    ft: np.ndarray        # (cap, 3): tangential force on B (world, N)
    s_d0: np.ndarray      # (cap, 3): projected history, staged
    s_Tv: np.ndarray      # (cap, 3, 12): ∂v_t/∂v at the step's start, staged
    s_kt: np.ndarray      # (cap,): shear stiffness, staged
    s_cap: np.ndarray     # (cap,): Coulomb limit μ F_n, staged
    s_hist: np.ndarray    # (cap,) bool: the record keeps a history


def new_records(cap: int) -> Records:
    i = lambda *s: np.zeros(s, dtype=np.int64)  # noqa: E731
    f = lambda *s: np.zeros(s)  # noqa: E731
    return Records(i(cap), i(cap), i(cap, 2), i(cap), f(cap, 3), f(cap, 3), f(cap, 3), f(cap, 3), f(cap, 3),
                   f(cap, 3), f(cap), f(cap), np.ones(cap, dtype=np.int64), i(cap), f(cap), np.ones(cap), f(cap),
                   i(cap), i(cap, 2), np.full(cap, -1, dtype=np.int64), i(cap))


def new_outputs(cap: int) -> Outputs:
    return Outputs(np.zeros(cap), np.zeros((cap, 3)), np.zeros((cap, 3)), np.zeros((cap, 3)), np.zeros(cap),
                   np.zeros((cap, 3)), np.zeros((cap, 3)), np.zeros((cap, 3, 12)), np.zeros(cap), np.zeros(cap),
                   np.zeros(cap, dtype=np.bool_))
