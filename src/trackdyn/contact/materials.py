"""Contact materials and how two of them combine into the parameters of a contact law.

A :class:`Material` belongs to a shape or a terrain. When two shapes touch,
their materials combine (Chrono's default composition, ``ChMaterialCompositionStrategy``):
friction and restitution take the smaller value, given stiffness and damping
coefficients the mean, Young's and shear moduli combine as in thesis eq. 2.19.
The law of the pair:

- ``"winkler"`` if either material is a Winkler ground (han-sander-mao §5);
- ``"kelvin-voigt"`` if both are Kelvin-Voigt materials (han-sander-mao eq. 28,
  wallin-shabana Table 2); a Kelvin-Voigt material against a smooth-contact
  (SMC) one needs an explicit pair material (:meth:`ContactSystem.set_pair`);
- otherwise the contact system's SMC law, ``"hertz"`` (default, thesis
  eq. 2.16-2.19) or ``"hooke"``, from material properties (``young``,
  ``poisson``, ``restitution``) or, when ``use_material_properties`` is off or
  a material has no ``young``, from given coefficients ``kn, kt, gn, gt``.

Example
-------
>>> from trackdyn.contact import Material
>>> pad = Material("pad", young=5e6, poisson=0.3, restitution=0.1, friction=0.8)
>>> apc = Material.kelvin_voigt("apc-ground", stiffness=2e6, damping=5e3, friction=0.3)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from . import _kernels as CK
from ._restitution import chrono_damping, damping_for_restitution

__all__ = ["Material", "effective_moduli"]

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
        Coefficient of restitution e in (0, 1].
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
        if not (0.0 < e <= 1.0):
            raise ValueError(f"{what}: restitution must be in (0, 1], got {self.restitution!r}")
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


def effective_moduli(a: Material, b: Material) -> tuple[float, float]:
    """E* and G* of thesis eq. 2.19 (Pa)."""
    Ea, Eb = a.young, b.young
    na, nb_ = a.poisson, b.poisson
    E = 1.0 / ((1 - na * na) / Ea + (1 - nb_ * nb_) / Eb)
    G = 1.0 / (2 * (2 + na) * (1 - na) / Ea + 2 * (2 + nb_) * (1 - nb_) / Eb)
    return E, G


def _mean(x, y):
    if x is None:
        return y
    if y is None:
        return x
    return 0.5 * (x + y)


def combine(a: Material, b: Material, law: str, use_material_properties: bool, damping: str,
            characteristic_velocity: float, override: Material | None = None, damping_ramp: float = 1e-5):
    """Law code and parameter row of the pair (a, b) for the kernels."""
    par = np.zeros(CK.N_PAR)
    par[CK.P_RAMP] = damping_ramp
    if override is not None:
        a = b = override
    mu = min(a.friction, b.friction)
    par[CK.P_MU] = mu
    par[CK.P_VSLIP] = min(a.slip_speed, b.slip_speed)
    par[CK.P_VCHAR] = characteristic_velocity
    what = f"materials {a.name!r} and {b.name!r}"
    if a.kind == WINKLER or b.kind == WINKLER:
        w = a if a.kind == WINKLER else b
        par[CK.P_KN] = w.stiffness
        par[CK.P_GN] = w.damping
        return CK.L_WINKLER, par
    if a.kind == KV or b.kind == KV:
        if a.kind != b.kind:
            raise ValueError(f"{what}: a Kelvin-Voigt material against a smooth-contact material has no "
                             "combination rule; give the pair a material with ContactSystem.set_pair")
        par[CK.P_KN] = _mean(a.stiffness, b.stiffness)
        par[CK.P_GN] = _mean(a.damping, b.damping)
        return CK.L_KV, par
    e = min(a.restitution, b.restitution)
    use_props = use_material_properties and a.young is not None and b.young is not None
    if use_props:
        E, G = effective_moduli(a, b)
        par[CK.P_E] = E
        par[CK.P_G] = G
        if damping == "chrono":
            par[CK.P_CDAMP] = chrono_damping(e, law)
        else:
            par[CK.P_CDAMP] = damping_for_restitution(e, law)
        return (CK.L_HERTZ if law == "hertz" else CK.L_HOOKE), par
    for k in ("kn", "kt", "gn", "gt"):
        if getattr(a, k) is None and getattr(b, k) is None:
            raise ValueError(f"{what}: coefficient {k} is not given (use material properties or give {k})")
    par[CK.P_KN] = _mean(a.kn, b.kn)
    par[CK.P_KT] = _mean(a.kt, b.kt)
    par[CK.P_GN] = _mean(a.gn, b.gn)
    par[CK.P_GT] = _mean(a.gt, b.gt)
    return (CK.L_HERTZ_GIVEN if law == "hertz" else CK.L_HOOKE_GIVEN), par
