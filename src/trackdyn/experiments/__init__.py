"""Experiments: procedures that run many simulations and turn them into tables and figures.

Convergence studies over step sizes × integrators × solvers
(:mod:`.convergence`, thesis §4.1); built-in vehicle scenarios
(:mod:`.scenarios`); the stairs climb (:mod:`.stairs`); the power audit of a run
(:mod:`.power`: every energy term from its own law, summed every step); mobility events (:mod:`.events`, thesis chapter 4) made
of trials (:mod:`.trials`) and limit searches (:mod:`.limits`); the §5.1
tensioning procedure (:mod:`.tensioning`); parameter sweeps on Dask
(:mod:`.sweep`). The public names of the events are in :mod:`trackdyn.events`.
"""

from .convergence import (
    SCENARIOS,
    ConvergenceStudy,
    StudyScenario,
    convergence_study,
    get_scenario,
    register_scenario,
)

__all__ = ["SCENARIOS", "ConvergenceStudy", "StudyScenario", "convergence_study", "get_scenario",
           "register_scenario"]
