"""The multibody core: model, state, joints from DP1/DP2/D/CD, force elements."""

from .forces import TSDA, RSDA, Bushing, PointForce, PointTorque
from .joints import (
    Cylindrical,
    Distance,
    Fixed,
    Joint,
    LinearMotor,
    Prismatic,
    Revolute,
    RevoluteMotor,
    Spherical,
    Universal,
)
from .model import Body, Model, State
from .profiles import Profile

__all__ = [
    "Model", "Body", "State", "Profile", "Joint", "Spherical", "Revolute", "Universal", "Cylindrical",
    "Prismatic", "Fixed", "Distance", "RevoluteMotor", "LinearMotor", "TSDA", "RSDA", "Bushing",
    "PointForce", "PointTorque",
]
