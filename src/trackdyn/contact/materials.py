"""How two contact materials combine into the parameters of a contact law.

A :class:`~trackdyn.materials.Material` (defined in :mod:`trackdyn.materials`,
re-exported here and as ``trackdyn.contact.Material``) belongs to a shape or a
terrain. When two shapes touch,
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

import numpy as np

from ..materials import KV, SMC, WINKLER, Material
from . import _kernels as CK
from ._restitution import chrono_damping, damping_for_restitution

__all__ = ["Material", "effective_moduli", "combine", "SMC", "KV", "WINKLER"]


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
