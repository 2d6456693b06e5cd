"""Run a validation case at the settings of one of its documented forms and check it two ways.

``passed`` is the physical tolerance (the case's pass/fail line). Every
documented figure (``REFERENCES``, the table of docs/validation.md) must also
be within its reference's factor of the measured value, so a 100× regression
fails even where the tolerance is 10⁴× the error.
"""

import warnings

from trackdyn.testing.validation import REFERENCES, run_case


def run_documented(name, form="full", undocumented=()):
    """The result of ``name`` at the settings of its ``form``; fails on the tolerance or a documented figure.

    ``undocumented``: error keys that carry a tolerance but no documented figure (each test says why).
    """
    ref = REFERENCES[name][form]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = run_case(name, **ref.settings)
    assert r["passed"], r
    doc = r["documented"]
    assert doc["form"] == form and doc["factor"] == ref.factor
    off = {k: v for k, v in doc["figures"].items() if not v["within"]}
    assert not off, (f"{name} ({form}): measured figures outside {ref.factor:g}x of the documented ones "
                     f"(docs/validation.md): {off}")
    missing = set(r["errors"]) - set(ref.figures) - set(undocumented)
    assert not missing, f"{name} ({form}): error figures without a documented value: {sorted(missing)}"
    return r
