"""Experiments: procedures that run many simulations and turn them into tables and figures.

For now: convergence studies over step sizes × integrators × solvers
(:mod:`.convergence`, thesis §4.1). Mobility procedures, limit searches and
sweeps come later.
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
