"""Calling compiled (Numba) kernels without per-call type dispatch.

A Numba dispatcher types every argument of every call (``typeof``) to choose
its compiled overload; with 20-30 array arguments that, and the Python that
gathers them from attributes, is a few microseconds a call in a step that
makes about twenty such calls. The helpers here type the arguments once and
keep the overload's entry point:

- :func:`entry_point` — the compiled entry point for the types of a list of
  arguments (compiled first if need be);
- :func:`bound_call` — a kernel with all its arguments fixed (arrays a
  component owns: buffers, slot maps), called with none: one C-level call.

An entry point does not check its arguments: given an array of another
dtype, layout or dimension it reads the wrong memory. A bound call only
ever passes the objects it was typed with; a component that reallocates one
of them must bind again (never keep the old call), and an array's shape must
not be assigned in place.
"""

from __future__ import annotations

import functools

import numba as nb

__all__ = ["entry_point", "bound_call"]


def entry_point(dispatcher, args):
    """The entry point of ``dispatcher``'s overload for the Numba types of ``args`` (compiled if missing)."""
    sig = tuple(nb.typeof(a) for a in args)
    ov = dispatcher.overloads.get(sig)
    if ov is None:
        dispatcher.compile(sig)
        ov = dispatcher.overloads[sig]
    return ov.entry_point


def bound_call(dispatcher, *args):
    """``dispatcher(*args)`` typed and bound once: a callable without arguments (a ``functools.partial`` of the
    entry point). The arrays are kept by reference: the kernel sees their current values at every call."""
    return functools.partial(entry_point(dispatcher, args), *args)
