"""Calling compiled (Numba) kernels without per-call type dispatch.

A Numba dispatcher types every argument of every call (``typeof``) to choose
its compiled overload; with 20-30 array arguments that, and the Python that
gathers them from attributes, is a few microseconds a call in a step that
makes about twenty such calls. The helpers here type the arguments once and
keep the overload's entry point:

- :func:`entry_point` — the compiled entry point for the types of a list of
  arguments (compiled first if need be);
- :class:`BoundCall` — a kernel with all its arguments fixed (arrays a
  component owns: buffers, slot maps), called with none: one C-level call.

An entry point does not check its arguments: given an array of another
dtype, layout or dimension it reads the wrong memory. A ``BoundCall`` only
ever passes the objects it was typed with; a component that reallocates one
of them must make a new ``BoundCall`` (never keep the old one), and an array's
shape must not be assigned in place.
"""

from __future__ import annotations

import functools

import numba as nb

__all__ = ["entry_point", "BoundCall"]


def entry_point(dispatcher, args):
    """The entry point of ``dispatcher``'s overload for the Numba types of ``args`` (compiled if missing)."""
    sig = tuple(nb.typeof(a) for a in args)
    ov = dispatcher.overloads.get(sig)
    if ov is None:
        dispatcher.compile(sig)
        ov = dispatcher.overloads[sig]
    return ov.entry_point


class BoundCall:
    """``dispatcher(*args)`` with the arguments typed and bound once; ``call()`` runs it.

    ``args`` are kept by reference: the kernel sees the current values of the bound arrays at every call.
    ``key``: the objects that an owner passes per call and may change (a solver's ``data``, ``rhs``,
    ``out``), for the owner to check by identity that the call still refers to the arrays it would pass.
    """

    __slots__ = ("call", "key")

    def __init__(self, dispatcher, *args, key=()):
        self.key = tuple(key)
        self.call = functools.partial(entry_point(dispatcher, args), *args)
