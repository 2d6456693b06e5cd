"""Frames, units and orientation conventions shared by every layer.

- SI units everywhere (m, kg, s, N, rad); inches and degrees only at the edge.
- ISO 8855 frames as in Chrono: x forward, y left, z up.
- Unit quaternions, scalar first ``(e0, e1, e2, e3)``; ``A(q)`` maps body to world.
- Body state (thesis §2.4.1): centre-of-mass position in the world frame,
  orientation quaternion, world-frame linear velocity, body-frame angular
  velocity. Positions advance with the exponential map (thesis eq. 2.9).
"""

from __future__ import annotations

import numpy as np

GRAVITY = np.array([0.0, 0.0, -9.81])
"""Default gravity vector in the world frame, m/s^2."""

INCH = 0.0254
"""One inch in metres."""

DEG = np.pi / 180.0
"""One degree in radians."""

G0 = 9.81
"""Standard acceleration used to express accelerations in g."""

GROUND = -1
"""Body index of the ground in every element table."""
