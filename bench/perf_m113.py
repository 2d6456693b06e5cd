"""perf-m113: where the settled M113's step spends its time, by compiled kernel, with Linux ``perf``.

Usage: python bench/perf_m113.py [--explicit-contact] [--seconds 4] [--out DIR]

Numba's compiled code has no symbols for ``perf``; this script writes a
``/tmp/perf-PID.map`` (the JIT map format ``perf report`` reads) with the
address of every compiled trackdyn kernel and its Python wrapper, records
``perf record -F 4999`` of its own process while the M113 steps, and prints
the share of the samples per kernel, per runtime (``nrt``: Numba's reference
counting, ``malloc``, ``python``: the interpreter, ``dispatch``: Numba's
argument typing, ``jit (unmapped)``: compiled code the map does not name) and
per library. A share is attributed to the nearest kernel
symbol at or below the sample's address, so a kernel's share includes the
helpers Numba compiled into the same code (``wrap:NAME``: NAME called through
its Python entry point, callees included). Needs ``perf`` on the PATH and
permission to record (``perf_event_paranoid`` <= 1 or root).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

import numba as nb

from trackdyn.testing.benchmarks_vehicle import _contact_options, settled_cruise


def write_perf_map() -> int:
    """Addresses of every compiled trackdyn kernel (and its CPython wrapper) into /tmp/perf-PID.map."""
    addrs = {}
    seen = set()
    for modname, mod in list(sys.modules.items()):
        if not modname.startswith("trackdyn"):
            continue
        for name, obj in list(vars(mod).items()):
            if not isinstance(obj, nb.core.dispatcher.Dispatcher) or id(obj) in seen:
                continue
            seen.add(id(obj))
            for cres in obj.overloads.values():
                for sym, tag in ((cres.fndesc.llvm_func_name, ""), (cres.fndesc.llvm_cpython_wrapper_name, "wrap:")):
                    try:
                        a = cres.library.get_pointer_to_function(sym)
                    except Exception:  # noqa: BLE001 - a symbol the library does not export: leave it out
                        continue
                    if a:
                        addrs[a] = f"{tag}{modname.rsplit('.', 1)[-1]}.{name}"
    # Numba's reference counting is JIT code of its own (NRT_incref / NRT_decref: atomic adds)
    from numba.core.runtime import nrt

    for sym in ("nrt_atomic_add", "nrt_atomic_sub", "NRT_incref", "NRT_decref"):
        try:
            a = nrt.rtsys.library.get_pointer_to_function(sym)
        except Exception:  # noqa: BLE001
            continue
        if a:
            addrs[a] = f"nrt:{sym}"
    items = sorted(addrs.items())
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as fh:
        for i, (a, label) in enumerate(items):
            size = min(items[i + 1][0] - a, 1 << 20) if i + 1 < len(items) else 4096
            fh.write(f"{a:x} {size:x} {label}\n")
    return len(items)


def group(report: str) -> Counter:
    """Sample shares of ``perf report --sort dso,sym`` grouped as described in the module docstring."""
    unmapped = re.compile(r"^0x[0-9a-f]+$")
    out = Counter()
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(.+?)\s+\[\.\]\s+(.*)", line)
        if not m:
            continue
        pct, dso, sym = float(m.group(1)), m.group(2), m.group(3).strip()
        if "NRT" in sym or sym.startswith("nrt:") or "nrt" in dso:
            key = "nrt"  # reference counting (the map names Numba's NRT functions)
        elif "JIT" in dso and unmapped.match(sym):
            key = "jit (unmapped)"  # compiled code the map does not name (e.g. a kernel outside trackdyn)
        elif "libc" in dso and any(x in sym for x in ("malloc", "free", "unlink_chunk", "consolidate")):
            key = "malloc"
        elif "libpython" in dso:
            key = "python"
        elif "_dispatcher" in dso:
            key = "dispatch"
        elif "JIT" in dso:
            key = sym
        else:
            key = f"{dso.split('.')[0]}:{sym}"
        out[key] += pct
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--explicit-contact", action="store_true")
    ap.add_argument("--seconds", type=float, default=4.0, help="wall seconds recorded")
    ap.add_argument("--out", default=None, help="folder for perf.data (default: a temporary one)")
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    if shutil.which("perf") is None:
        sys.exit("perf-m113: `perf` is not on the PATH (Debian: linux-perf)")
    prep = settled_cruise(settle=0.3, options=_contact_options(a.explicit_contact))
    sim = prep.sim
    sim.run(sim.state.t + 0.01)  # every kernel compiled or loaded before the map is written
    n_sym = write_perf_map()
    folder = a.out or tempfile.mkdtemp(prefix="perf-m113-")
    data = os.path.join(folder, "perf.data")
    rec = subprocess.Popen(["perf", "record", "-F", "4999", "-p", str(os.getpid()), "-o", data, "--", "sleep",
                            str(a.seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    t0, steps = time.perf_counter(), 0
    while rec.poll() is None:  # chunks of 1000 steps: Simulation.run's own set-up stays out of the shares
        sim.run(sim.state.t + 0.1)
        steps += 1000
    wall = time.perf_counter() - t0
    report = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "dso,sym"],
                            capture_output=True, text=True).stdout
    os.remove(f"/tmp/perf-{os.getpid()}.map")
    shares = group(report)
    print(f"{steps} steps, {1e3 * wall / steps:.3f} ms per step while recording; {n_sym} kernel symbols; {data}")
    for key, pct in shares.most_common(a.top):
        print(f"{pct:6.2f} %  {key}")
