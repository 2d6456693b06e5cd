"""Transitional alias of :mod:`trackdyn.terrain.kernels` (the terrain kernels' old, private name).

Kept only until ``contact/massless/_slice.py`` imports :mod:`trackdyn.terrain.kernels`;
import that module, not this one.
"""

from .kernels import *  # noqa: F401,F403
from .kernels import __all__  # noqa: F401
