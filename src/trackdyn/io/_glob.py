"""Glob patterns over dotted series names (``left.roadwheel[2].pos.z``), where brackets are mostly indices.

:func:`fnmatch.fnmatch` reads ``[...]`` as a character class, so
``left.roadwheel[*].pos.z`` would never match a road wheel. Here a bracket
is read by where it stands:

- after a name (any character but a dot, e.g. ``roadwheel[...]``,
  ``*[...]``) it is an **index**: the brackets are literal and their
  content is

  - a list of integers and integer ranges, ``[3]``, ``[0-2]``,
    ``[0,5,10-12]``: those indices (``shoe[10-20]`` is shoes 10 to 20);
  - anything else, a glob of the index text: ``[*]`` any index, ``[1?]``
    indices 10-19, ``[front]`` literally ``[front]``;

- at the start of the pattern or after a dot it is a **character class**,
  as in ``fnmatch`` (``chassis.pos.[xz]``, ``chassis.pos.[!z]``).

``*`` matches any text (dots and brackets included: ``left.*.pos.z`` is every
left-side body's height), ``?`` one character. A name always matches itself
exactly, whatever it contains.
"""

from __future__ import annotations

import functools
import re

__all__ = ["compile_glob", "match_series"]

_INDEX_LIST = re.compile(r"\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*")
_MAX_RANGE = 100_000  # indices one range may spell out


def _index_alternatives(inner: str, pattern: str) -> str:
    values: list[int] = []
    for item in inner.split(","):
        lo, _, hi = item.partition("-")
        a, b = int(lo), int(hi or lo)
        if b < a:
            raise ValueError(f"series pattern {pattern!r}: index range {item!r} runs backwards")
        if b - a >= _MAX_RANGE:
            raise ValueError(f"series pattern {pattern!r}: index range {item!r} spans more than {_MAX_RANGE} indices")
        values.extend(range(a, b + 1))
    return "(?:" + "|".join(str(k) for k in sorted(set(values))) + ")"


def _index_glob(inner: str) -> str:
    return "".join("[^\\]]*" if c == "*" else "[^\\]]" if c == "?" else re.escape(c) for c in inner)


def _char_class(inner: str) -> str:
    body = inner.replace("\\", "\\\\")
    if body.startswith("!"):
        body = "^" + body[1:]
    elif body.startswith("^"):
        body = "\\" + body
    return "[" + body + "]"


@functools.lru_cache(maxsize=1024)
def compile_glob(pattern: str) -> re.Pattern:
    """The regular expression of a series glob (see the module docstring); ``ValueError`` for a bad range."""
    out = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j < 0 or j == i + 1:  # "[" without its "]", or "[]": literal text
                out.append(re.escape(c))
                i += 1
                continue
            inner = pattern[i + 1: j]
            if i == 0 or pattern[i - 1] == ".":
                out.append(_char_class(inner))
            elif _INDEX_LIST.fullmatch(inner):
                out.append("\\[" + _index_alternatives(inner, pattern) + "\\]")
            else:
                out.append("\\[" + _index_glob(inner) + "\\]")
            i = j + 1
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("(?s:" + "".join(out) + ")")


def match_series(columns, patterns) -> list[str]:
    """Names in ``columns`` matching any glob pattern, in the order of ``columns``.

    See the module docstring for the pattern language: ``*``, ``?``, index
    brackets (``left.roadwheel[*].pos.z``, ``left.shoe[0-9]``) and character
    classes after a dot (``chassis.pos.[xz]``). An exact name always matches.

    Examples
    --------
    >>> cols = ["left.roadwheel[0].pos.z", "left.roadwheel[1].pos.z", "left.roadwheel[12].pos.z", "chassis.pos.x"]
    >>> match_series(cols, "left.roadwheel[*].pos.z")
    ['left.roadwheel[0].pos.z', 'left.roadwheel[1].pos.z', 'left.roadwheel[12].pos.z']
    >>> match_series(cols, ["left.roadwheel[0-1].pos.z", "chassis.pos.[xy]"])
    ['left.roadwheel[0].pos.z', 'left.roadwheel[1].pos.z', 'chassis.pos.x']
    """
    pats = [patterns] if isinstance(patterns, str) else list(patterns)
    exact = set(pats)
    regs = [compile_glob(p) for p in pats]
    return [c for c in columns if c in exact or any(r.fullmatch(c) for r in regs)]
