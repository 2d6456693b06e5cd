"""Surface materials of shapes and terrains (data only; no contact law here).

A :class:`Material` belongs to a contact shape or a terrain: friction,
restitution and either material properties (Young's modulus, Poisson's ratio)
or given smooth-contact coefficients; or a Kelvin-Voigt or Winkler ground
(:meth:`Material.kelvin_voigt`, :meth:`Material.winkler`). How two materials
combine into the parameters of a contact law is contact's business
(:mod:`trackdyn.contact.materials`).

This module sits at the bottom of the layers (it imports nothing from
trackdyn), so that terrains (``terrain``) and contact (``contact``) can both
use it. ``trackdyn.contact.Material`` is the same class.

Example
-------
>>> from trackdyn.contact import Material
>>> pad = Material("pad", young=5e6, poisson=0.3, restitution=0.1, friction=0.8)
>>> apc = Material.kelvin_voigt("apc-ground", stiffness=2e6, damping=5e3, friction=0.3)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

__all__ = ["Material", "SMC", "KV", "WINKLER"]

SMC = "smc"
KV = "kelvin-voigt"
WINKLER = "winkler"


def _pos(x, what, allow_zero=False, allow_none=False):
    if x is None and allow_none:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected a number, got {x!r}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{what}: must be {'non-negative' if allow_zero else 'positive'} and finite, got {x!r}")
    return v


@dataclass(frozen=True)
class Material:
    """Surface material of a shape or a terrain.

    Parameters
    ----------
    name : str
    young : float, optional
        Young's modulus E, Pa (smooth contact from material properties).
    poisson : float
        Poisson's ratio ν, in [0, 0.5).
    restitution : float
        Coefficient of restitution e in [0, 1] (0: perfectly plastic).
    friction : float
        Coulomb friction coefficient μ (static = kinetic).
    kn, kt, gn, gt : float, optional
        Given smooth-contact coefficients. Hertz (thesis eq. 2.16): N/m², N/m²,
        1/(s m), 1/(s m) (forces ``√(R δ)(k_n δ + g_n m δ̇)``); Hooke (Chrono): N/m,
        N/m, 1/s, 1/s (``k_n δ + g_n m δ̇``). ``m`` is the effective mass.
    kind : {"smc", "kelvin-voigt", "winkler"}
        Use :meth:`kelvin_voigt` and :meth:`winkler` for the other kinds.
    stiffness, damping : float
        Kelvin-Voigt: N/m and N s/m of ``f = k δ + c δ̇``; Winkler: N/m³ and
        N s/m³ per unit area of the foundation.
    slip_speed : float
        Kelvin-Voigt and Winkler friction ``μ F_n tanh(|v_t| / slip_speed)``, m/s.

    Defaults are Chrono's ``ChContactMaterialSMC`` defaults.
    """

    name: str = "default"
    young: float | None = 2e5
    poisson: float = 0.3
    restitution: float = 0.4
    friction: float = 0.6
    kn: float | None = None
    kt: float | None = None
    gn: float | None = None
    gt: float | None = None
    kind: str = SMC
    stiffness: float | None = None
    damping: float | None = None
    slip_speed: float = 0.01
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        what = f"material {self.name!r}"
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"material name must be a non-empty string, got {self.name!r}")
        if self.kind not in (SMC, KV, WINKLER):
            raise ValueError(f"{what}: kind must be 'smc', 'kelvin-voigt' or 'winkler', got {self.kind!r}")
        _pos(self.young, f"{what}: young", allow_none=True)
        nu = float(self.poisson)
        if not (0.0 <= nu < 0.5):
            raise ValueError(f"{what}: poisson must be in [0, 0.5), got {self.poisson!r}")
        e = float(self.restitution)
        if not (0.0 <= e <= 1.0):
            raise ValueError(f"{what}: restitution must be in [0, 1], got {self.restitution!r}")
        _pos(self.friction, f"{what}: friction", allow_zero=True)
        for k in ("kn", "kt", "gn", "gt"):
            _pos(getattr(self, k), f"{what}: {k}", allow_zero=True, allow_none=True)
        _pos(self.slip_speed, f"{what}: slip_speed")
        if self.kind != SMC:
            _pos(self.stiffness, f"{what}: stiffness")
            _pos(self.damping, f"{what}: damping", allow_zero=True)
        elif self.young is None and self.kn is None:
            raise ValueError(f"{what}: give young (material properties) or kn (coefficients)")

    @classmethod
    def kelvin_voigt(cls, name, stiffness, damping, friction=0.3, slip_speed=0.01) -> "Material":
        """Kelvin-Voigt contact ``f = k δ + c δ̇`` with tanh-regularised friction (han-sander-mao eq. 28)."""
        return cls(name=name, young=None, friction=friction, kind=KV, stiffness=stiffness,
                   damping=damping, slip_speed=slip_speed)

    @classmethod
    def winkler(cls, name, stiffness, damping=0.0, friction=0.5, slip_speed=0.01) -> "Material":
        """Winkler ground: pressure ``k_w z + c_w ż`` (N/m³, N s/m³) under the contact patch."""
        return cls(name=name, young=None, friction=friction, kind=WINKLER, stiffness=stiffness,
                   damping=damping, slip_speed=slip_speed)

    def with_(self, **changes) -> "Material":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)
