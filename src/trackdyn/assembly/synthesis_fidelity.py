"""The ``synthesis`` fidelity (kim-2012): the chassis as a free base body, each suspension unit a subsystem.

A wheeled vehicle (:class:`~trackdyn.spec.wheeled.WheeledVehicleSpec`) is built by the ``links`` fidelity's
wheeled builder (:func:`~trackdyn.assembly.wheeled.build_wheeled_scenario`: the same bodies, joints, arm
springs, point tyres and wheel motors), and stepped in joint coordinates by
:class:`~trackdyn.integrators.synthesis.SynthesisStepper`: the chassis has its 6 dof, each unit (the arm on
its pivot and the wheel on its axle) is a two-body chain subsystem reduced to an effective mass and force on
the chassis (eq. 21-30 for a chain), one batch of small dense problems in compiled kernels.

A tracked vehicle is the ``links`` model (:func:`~trackdyn.assembly.builder.build_vehicle`: bodies, pins,
contact, drivetrain) stepped by :class:`~trackdyn.integrators.synthesis.SynthesisTrackedStepper`: the chassis
the base, each road-arm unit, sprocket, idler on its carrier's slide and seat a chain subsystem
(:func:`tracked_chains`), and the shoes -- which touch the rest through contact only -- stepped by the links'
implicit Euler with every other body's motion prescribed, one staggered exchange per step (docs/synthesis.md,
"The M113 on synthesis").

Integrators (``scenario.integrator``):

- ``synthesis-ab3-hht`` (default): kim-2012's explicit-implicit model: AB3 on the chassis, HHT-α on the
  subsystems with Newton (the tyres' slip and the brakes make the wheel spin stiff);
- ``synthesis-ab3``: the explicit model, AB3 on everything.

Integrator options (``scenario.options`` without a dot): ``alpha``, ``newton_tol``, ``newton_max_iter``,
``refresh_after`` (:class:`~trackdyn.integrators.synthesis.SynthesisStepper`). The recorded series are the
``links`` model's of the same vehicle (``chassis.*``, ``left.wheel[k].*``, ``left.arm[k].*``, the tyres', the
motors', ``driver.*``) except the chain joints' reactions, which joint coordinates do not compute.

Refused by name: a vehicle on an undercarriage frame (the crawler: more wheels on the frame than a chain
holds), NSC or other contact options, another integrator or saddle-point solver.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._compiled import bound_call
from ..contact._tyre_kernels import tyre_batch
from ..contact.tyre import TerrainTyres
from ..formulations._synthesis_kernels import chain_evaluate, chain_pose
from ..formulations.absolute import ForceContext
from ..formulations.contract import Build, FormulationInfo, register_formulation
from ..formulations.synthesis import SynthesisAbsoluteSystem
from ..integrators.synthesis import SCHEME_INTEGRATORS, SynthesisStepper, SynthesisTrackedStepper
from ..mbs._force_kernels import _add_element_forces, body_forces, rsda_eval
from ..mbs._kernels import body_kinematics
from ..mbs.forces import RSDABlock
from ..mbs.markers import MarkerOutputs
from ..powertrain import SERVO_GAIN, WheelDrivetrain, _wheel_drive_kernel
from .builder import build_vehicle
from .contact import vehicle_contact
from .outputs import ShoeTensions
from .placement import vehicle_drivetrain, vehicle_placement
from .seat import SEAT_BODY
from .visuals import add_vehicle_visuals
from .wheeled import SIDES, build_wheeled_scenario, check_wheeled_scenario

__all__ = ["SynthesisFormulation", "SYNTHESIS_STEP", "SYNTHESIS_OPTIONS"]

#: The fidelity's default step (s). The chassis is advanced explicitly in both models, and at rest the point
#: tyres' slip law damps its horizontal motion hard: with the wheels braked the slip's denominator is the
#: floor v_min = 0.1 m/s, so each tyre's μ F_z / (κ_ref v_min) = 2.6e5 N s/m acts on the chassis; in yaw the six
#: give 1.6e6 N m s on ~1 300 kg m², |λ| ≈ 1 200 1/s, and AB3's real-axis bound 0.545/|λ| is 0.45 ms
#: (docs/synthesis.md, "The `synthesis` fidelity"). 2.5e-4 s, the links event step, keeps a margin of ~2 there:
#: the braked settle of the conformance test takes 3.2 evaluations a step at 2.5e-4 s, 26 at 5e-4 s and 30 at
#: 1e-3 s (its Newton iteration fighting the explicit chassis). Rolling, the steps may grow (bench/README.md).
SYNTHESIS_STEP = 2.5e-4
#: the stepper's options that a scenario may set (``scenario.options``, no prefix)
SYNTHESIS_OPTIONS = ("alpha", "newton_tol", "newton_max_iter", "refresh_after", "base_prediction", "weighted_coupling")


@nb.njit(cache=True)
def chain_full(q0, v0, th, thd, base, ch_body, ch_parent, ch_nb, ch_axis, ch_sp, ch_sc, ch_q0, ch_type, q, v, pos, R,
               vel, om, q_ext, mass, inertia, gravity, f, rs, rs_body, rs_Q, ty, ty_body, ty_Q, dr, dr_body, dr_Q,
               Meff, Peff, Myq, Mqq, Pq, Jb, cb, a0, thdd, solve_base):
    """One synthesis evaluation in one compiled call, for a model whose forces are gravity, one RSDA block
    (``rs``: :func:`trackdyn.mbs._force_kernels.rsda_eval`'s arguments), point tyres (``ty``:
    :func:`trackdyn.contact._tyre_kernels.tyre_batch`'s) and wheel motors (``dr``: the wheel drive kernel's,
    its throttle and braking decided once per step): the pose of every body, the world kinematics, the forces
    (each element's 12-vector added to its two bodies, as the absolute system's scatter does) and
    :func:`chain_evaluate`."""
    for k in range(7):
        q[base, k] = q0[k]
    for k in range(6):
        v[base, k] = v0[k]
    chain_pose(q0, v0, th, thd, ch_body, ch_parent, ch_nb, ch_axis, ch_sp, ch_sc, ch_q0, ch_type, q, v)
    body_kinematics(q, v, pos, R, vel, om)
    nb_ = q.shape[0]
    for b in range(nb_):
        for k in range(7):
            q_ext[b, k] = q[b, k]
    body_forces(mass, inertia, v, gravity, f)
    rsda_eval(*rs)
    for e in range(rs_body.shape[0]):
        _add_element_forces(e, rs_body, rs_Q, f)
    tyre_batch(*ty)
    for e in range(ty_body.shape[0]):
        _add_element_forces(e, ty_body, ty_Q, f)
    _wheel_drive_kernel(*dr)
    for e in range(dr_body.shape[0]):
        _add_element_forces(e, dr_body, dr_Q, f)
    chain_evaluate(q0, v0, th, thd, f, base, mass, inertia, ch_body, ch_parent, ch_nb, ch_axis, ch_sp, ch_sc,
                   ch_q0, ch_type, q, v, Meff, Peff, Myq, Mqq, Pq, Jb, cb, a0, thdd, solve_base)



def fused_vehicle_evaluation(cs):
    """The compiled evaluation of a wheeled vehicle's synthesis (:meth:`ChainSynthesis.set_fused`'s
    arguments) when its forces are those this module fuses -- gravity, one RSDA block (the arm springs),
    :class:`~trackdyn.contact.tyre.TerrainTyres` and a :class:`~trackdyn.powertrain.WheelDrivetrain` (and
    output-only markers) -- else None (the absolute system's force evaluation is used). The same kernels as
    the providers' ``accumulate`` on the same arrays; ``decide(state, h)`` runs the drivetrain's own
    ``accumulate`` at ``state`` (its driver decides once per step there) into scratch arrays."""
    s = cs.system
    if len(s.blocks) != 1 or type(s.blocks[0]) is not RSDABlock:
        return None
    tyres = [p for p in s.providers if type(p) is TerrainTyres]
    drives = [p for p in s.providers if type(p) is WheelDrivetrain]
    if len(tyres) != 1 or len(drives) != 1 or any(type(p) not in (TerrainTyres, WheelDrivetrain, MarkerOutputs)
                                                  for p in s.providers):
        return None
    ty, dt, kin = tyres[0], drives[0], s.kin
    rs = s.blocks[0]
    rs_args = rs._kernel(kin, cs.v)[1]
    ty_args = (ty.body, kin.R, kin.pos, kin.vel, kin.omega_w, ty.radius, ty.k, ty.c, ty.mu, ty.slip_ref, ty.v_min,
               ty.origin, ty.u, ty.table_s, ty.table_z, ty.Q, ty.Kx, ty.Kv, ty.out, *ty._scratch)
    gain = SERVO_GAIN if getattr(dt.driver, "kinematic", False) else 0.0
    dr_args = (dt.arms, dt.wheels, dt.side, kin.R, kin.omega_w, dt.throttle, dt.braking, dt.map_w, dt.map_t,
               float(dt.brake_torque), dt.servo_ref, float(gain), dt.Q, dt.Kx, dt.Kv, dt.out, dt._dX, dt._dV)
    calls = tuple(bound_call(chain_full, cs.q0b, cs.v0b, cs.thb, cs.thdb, cs.base, *cs.chain_args, cs.q, cs.v,
                             kin.pos, kin.R, kin.vel, kin.omega_w, kin.q_ext, cs.mass, cs.inertia,
                             np.asarray(s.gravity, float), cs.f, rs_args, rs.body, rs.Q, ty_args, ty.elem, ty.Q,
                             dr_args, dt.body, dt.Q, cs.Meff, cs.Peff, cs.Myq, cs.Mqq, cs.Pq, cs.Jb, cs.cb, cs.a0b,
                             cs.thddb, sb) for sb in (0, 1))
    f, dv, kxv = np.zeros_like(cs.f), np.zeros_like(cs.f), np.zeros_like(cs.f)
    data = np.zeros(s.pattern.nnz)

    def decide(state, h):
        s.update_kinematics(state.q, state.v)
        f[:] = 0.0
        dt.accumulate(ForceContext(state.t, h, state, kin, f, dv, data, 0.0, 0.0, kxv))

    profiles = dt.driver.side_profiles() if getattr(dt.driver, "kinematic", False) else None

    def at_time(t):
        # the speed servo's reference at the evaluation's own time: the drivetrain's accumulate sets it for the
        # end of an implicit Euler step (t + h), which is one step ahead of the synthesis' evaluations at t_{n+1}
        for k, p in enumerate(profiles):
            dt.servo_ref[k] = float(p.value(t))

    return calls, decide, (at_time if profiles is not None else None)


def tracked_chains(vm) -> tuple[list, list]:
    """``(chains, passive)`` of a tracked vehicle model (:func:`~trackdyn.assembly.builder.build_vehicle`):
    per side the sprocket, the idler on its carrier (a prismatic slide) or alone, each road wheel on its arm
    (or alone) and each roller, as chain subsystems on the chassis; the shoes passive (stepped apart, coupled
    by contact only). A vehicle with an undercarriage frame is refused: its wheels hang on the frame, more
    bodies than a chain subsystem holds."""
    from ..formulations._synthesis_kernels import NBS

    chains, passive = [], []
    for side in vm.sides.values():
        if side.frame is not None:
            raise ValueError(f"fidelity 'synthesis': vehicle {vm.spec.name!r} carries its {side.name} running gear on "
                             f"an undercarriage frame ({side.frame!r}); one chain subsystem holds at most {NBS} "
                             "bodies, fewer than the frame's wheels (use links or recursive)")
        chains.append([side.sprocket])
        chains.append([side.carrier, side.idler] if side.carrier else [side.idler])
        for k, wheel in enumerate(side.wheels):
            chains.append([side.arms[k], wheel] if side.arms else [wheel])
        chains.extend([r] for r in side.rollers)
        passive.extend(side.shoes)
    if SEAT_BODY in vm.model.body_names:  # the seat on its prismatic slide: a one-body chain on the chassis
        chains.append([SEAT_BODY])
    return chains, passive


class SynthesisFormulation:
    """``synthesis``: chassis as base body, suspension units as joint-coordinate subsystems (module docstring)."""

    name = "synthesis"
    info = FormulationInfo(
        models="the chassis as a free base body (6 dof) and each suspension unit (arm and wheel; sprocket, "
               "idler on its slide, seat) a joint-coordinate chain subsystem reduced to effective mass and force "
               "on it; a track's shoes stepped apart by the links' implicit Euler, coupled by contact; no joint "
               "reactions of the chains",
        cost="reduced", paper="kim-2012", default_step=SYNTHESIS_STEP,
        default_integrator="synthesis-ab3-hht", integrators=tuple(SCHEME_INTEGRATORS),
        option_prefixes=(), benchmark="m113-flat", conformance_vehicle="robot-6x6", running_gear=("wheels", "tracks"),
        # measured against links on robot-6x6 (tests/integration/test_conformance.py), synthesis at its 2.5e-4 s
        # explicit-implicit, links at 5e-4 s: settle height 1.7e-5 m, pitch 0.0017 deg, drift 5e-5 m/s; bump
        # rise 1.7e-4 m, largest pitch 0.012 deg, mean speed 0.0011 m/s
        conformance=(
            ("settle", "height_m", 1e-4,
             "the same bodies, springs and tyres in other coordinates: both hold the static pose, the height "
             "differing by the integrators' residue of the drop's bounce after 3 s (a few hundredths of a mm)"),
            ("settle", "pitch_deg", 0.01,
             "equal wheel loads by the spec's centre of mass: both settle level; the rest is the decay of the "
             "drop's pitch oscillation under the two integrators' different numerical damping"),
            ("settle", "speed_mps", 5e-4,
             "both stand on their brakes: the drift is the brakes' smooth torque law and the tyres' slip law, "
             "the same laws in both"),
            ("bump", "rise_m", 1e-3,
             "the same model over the bump at 4 m/s: the rise differs by the step errors (links' first-order "
             "implicit Euler against AB3 and HHT) in the 1.2 Hz bounce the bump excites"),
            ("bump", "pitch_max_deg", 0.05,
             "as the rise: the same pitch response, integrated with different errors and numerical damping"),
            ("bump", "speed_mean_mps", 0.005,
             "the same PID driver and motors; the mean speed moves with the arms' traction jacking over the "
             "bump, integrated with different errors"),
        ),
        # the M113 (tests/integration/test_conformance.py, further vehicles), synthesis at its 2.5e-4 s against
        # links at 5e-4 s (python -m trackdyn.testing.conformance synthesis; docs/synthesis.md, "The M113 on
        # synthesis"): settle height 1.4e-5 m, pitch 0.0005 deg, drift 1.3e-5 m/s; bump rise 5.4e-3 m, largest
        # pitch 0.13 deg, mean speed 0.018 m/s
        extra_conformance=(("m113", (
            ("settle", "height_m", 1e-4,
             "the links M113's bodies, contact and brakes with the hull and suspension in joint coordinates: the "
             "static pose is the same, the rest is the integrators' residue of the drop after 3 s"),
            ("settle", "pitch_deg", 0.01,
             "the same static pitch on the same road-wheel loads; the drop's pitch oscillation decays under "
             "different numerical damping (AB3 and HHT on the hull and arms, Euler on the shoes)"),
            ("settle", "speed_mps", 1e-3,
             "both stand on the same smooth brake law and the same shoe friction: the creep is the brake's, "
             "not the integrators'"),
            ("bump", "rise_m", 7e-3,
             "the staggered coupling (the wheels see the shoes where their last acceleration takes them, the "
             "shoes see the wheels' new motion) adds a step error in the bump's transient: 4.9 mm below links' "
             "converged 58.3 mm rise at 2.5e-4 s, 1.7 mm at 1.25e-4 s"),
            ("bump", "pitch_max_deg", 0.25,
             "as the rise: the same pitch response with the coupling's step error, 0.08 deg above links' "
             "converged 3.49 deg at 2.5e-4 s"),
            ("bump", "speed_mean_mps", 0.03,
             "the same PID driver and drivetrain; the mean speed moves with the shoes' slip over the bump, "
             "integrated with different errors (0.011 m/s above links' converged 4.024 m/s)"),
        )),))

    def defaults(self, options):
        return self.info.default_integrator, self.info.default_step

    def _options(self, sc) -> dict:
        opts = dict(sc.options or {})
        dotted = sorted(k for k in opts if isinstance(k, str) and "." in k)
        if dotted:
            why = ("NSC contact is not built on the synthesis fidelity (its tyres are the links model's smooth "
                   "point tyres)" if "contact.method" in opts else "the synthesis fidelity reads no prefixed options")
            raise ValueError(f"scenario.options {dotted}: {why}; integrator options only: {list(SYNTHESIS_OPTIONS)}")
        bad = sorted(k for k in opts if k not in SYNTHESIS_OPTIONS)
        if bad:
            raise ValueError(f"scenario.options {bad}: unknown option of the 'synthesis' fidelity's stepper; "
                             f"choose from {list(SYNTHESIS_OPTIONS)}")
        return opts

    def check(self, sc) -> None:
        if isinstance(sc.integrator, str) and sc.integrator not in SCHEME_INTEGRATORS:
            raise ValueError(f"scenario.integrator = {sc.integrator!r}: the 'synthesis' fidelity steps with its own "
                             f"{list(SCHEME_INTEGRATORS)} (AB3 explicit, or AB3 on the chassis and HHT on the "
                             "subsystems)")
        if sc.solver != "direct":
            raise ValueError(f"scenario.solver = {sc.solver!r}: the 'synthesis' fidelity solves small dense systems "
                             "of its own; it takes no saddle-point solver (leave 'direct')")
        self._options(sc)
        spec = sc.vehicle_spec()
        if getattr(spec, "running_gear", "tracks") == "wheels":
            check_wheeled_scenario(sc, self.name, self.info.integrators)
        elif getattr(spec, "frame", None) is not None:
            raise ValueError(f"fidelity 'synthesis': vehicle {spec.name!r} carries its running gear on an "
                             "undercarriage frame ([frame]); a chain subsystem holds at most 4 bodies, fewer than "
                             "the frame's wheels (use links or recursive)")
        if getattr(sc.driver, "kinematic", False) and sc.integrator == "synthesis-ab3":
            raise ValueError(f"scenario.driver = {sc.driver!r}: a prescribed wheel speed acts through a stiff servo "
                             "(1e6 N m s/rad on a 1.2 kg m² wheel) that the explicit 'synthesis-ab3' would need "
                             "h < 1e-6 s for; use 'synthesis-ab3-hht' (the servo in the implicit subsystems)")

    def _build_tracked(self, sc, opts) -> Build:
        """A tracked vehicle: the links model (the same bodies, joints, contact and drivetrain), its chassis
        the base, each road-arm unit, sprocket, idler unit and roller a chain subsystem, the shoes stepped by
        the links' implicit Euler with the rest prescribed (:class:`SynthesisTrackedStepper`)."""
        from .fidelities import LINKS_CONSTRAINT_STIFFNESS

        spec, terrain, geo, z0 = vehicle_placement(sc)
        vm = build_vehicle(spec, origin=(sc.start_x, 0.0, z0), geometry=geo, speed=sc.speed)
        add_vehicle_visuals(vm)
        contact = vehicle_contact(vm, terrain, "smc")
        m = vm.model
        idx = {n: k for k, n in enumerate(m.body_names)}
        drivetrain = vehicle_drivetrain(spec, idx, vm.sides, sc.driver)
        system = SynthesisAbsoluteSystem(m, providers=[contact, ShoeTensions(vm.sides), drivetrain, *vm.providers],
                                         coupling="diagonal")
        chains, passive = tracked_chains(vm)
        integrator = sc.integrator or self.info.default_integrator
        options = {"chains": chains, "base": vm.chassis, "passive": passive,
                   "scheme": SCHEME_INTEGRATORS[integrator],
                   "track_options": {"constraint_stiffness": LINKS_CONSTRAINT_STIFFNESS}, **opts}
        return Build(spec, vm, system, contact, drivetrain, SynthesisTrackedStepper, options)

    def build(self, sc) -> Build:
        opts = self._options(sc)
        if getattr(sc.vehicle_spec(), "running_gear", "tracks") != "wheels":
            return self._build_tracked(sc, opts)
        b = build_wheeled_scenario(sc, {}, system_cls=SynthesisAbsoluteSystem)
        vm = b.vehicle
        chains = [[vm.sides[s].arms[k], vm.sides[s].wheels[k]] for s in SIDES for k in range(len(vm.sides[s].arms))]
        if SEAT_BODY in vm.model.body_names:  # the seat on its prismatic slide: a one-body chain on the chassis
            chains.append([SEAT_BODY])
        integrator = sc.integrator or self.info.default_integrator
        options = {"chains": chains, "base": vm.chassis, "scheme": SCHEME_INTEGRATORS[integrator],
                   "fused": fused_vehicle_evaluation, **opts}
        return Build(b.spec, vm, b.system, b.contact, b.drivetrain, SynthesisStepper, options)


register_formulation(SynthesisFormulation())
