"""``trackdyn report``: one self-contained HTML page describing a results folder.

Sections: run (status, times, steps, errors), scenario, spec summary (when the
metadata has a ``spec``), solver settings and model size, event results
(``summary.json``), figures (chosen series as inline SVG, figures named in
``summary.json["figures"]`` and images in the folder's ``figures/``, embedded
as data), warnings, and wall-time statistics (``timing_s`` split and wall
time per simulated second). No external resources: the file can be mailed.
"""

from __future__ import annotations

import base64
import html
import io
import os
from pathlib import Path

import numpy as np

from .._version import __version__
from ..io.results import load
from .plots import plot_series, timing_split

__all__ = ["write_report", "report_html", "default_series", "flatten"]

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; color: #222; margin: 0 auto; max-width: 1000px; padding: 16px 24px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; border-bottom: 1px solid #ccd; padding-bottom: 3px; margin-top: 28px; }
table { border-collapse: collapse; margin: 6px 0; } td, th { padding: 3px 10px; border-bottom: 1px solid #e4e6ea; text-align: left; vertical-align: top; }
th { background: #f3f5f7; } td.num { text-align: right; font-family: ui-monospace, monospace; }
.status-complete { color: #1a7f37; font-weight: 600; } .status-diverged, .status-stopped, .status-failed { color: #b42318; font-weight: 600; }
.warn { background: #fff8e6; border-left: 4px solid #e0a800; padding: 4px 10px; margin: 4px 0; }
.err { background: #fdecec; border-left: 4px solid #b42318; padding: 4px 10px; }
figure { margin: 12px 0; } figcaption { color: #555; font-size: 12px; } .muted { color: #777; }
svg, img { max-width: 100%; height: auto; }
"""


def flatten(d, prefix: str = "", max_items: int = 400) -> list[tuple[str, object]]:
    """Nested dicts/lists as ``[(dotted key, scalar), ...]`` (long lists are summarised)."""
    out: list[tuple[str, object]] = []

    def walk(x, key):
        if len(out) >= max_items:
            return
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, f"{key}.{k}" if key else str(k))
        elif isinstance(x, (list, tuple)) and x and all(isinstance(v, dict) for v in x) and len(x) <= 20:
            for i, v in enumerate(x):
                walk(v, f"{key}[{i}]")
        elif isinstance(x, (list, tuple)) and len(x) > 12:
            out.append((key, f"[{len(x)} values: {_fmt(x[0])} … {_fmt(x[-1])}]"))
        else:
            out.append((key, x))

    walk(d, prefix)
    return out


def _fmt(v) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, (float, np.floating)):
        return f"{v:.6g}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def _table(rows, header=None) -> str:
    if not rows:
        return '<p class="muted">none</p>'
    h = "".join(f"<th>{html.escape(c)}</th>" for c in header) if header else ""
    body = []
    for r in rows:
        cells = []
        for c in r:
            cls = ' class="num"' if isinstance(c, (int, float, np.number)) and not isinstance(c, bool) else ""
            cells.append(f"<td{cls}>{html.escape(_fmt(c))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table>{'<tr>' + h + '</tr>' if h else ''}{''.join(body)}</table>"


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and doctype: inline SVG in HTML


def _embed_file(p: Path) -> str | None:
    ext = p.suffix.lower()
    if ext == ".svg":
        text = p.read_text(encoding="utf-8")
        return text[text.index("<svg"):] if "<svg" in text else None
    mime = {".png": "image/png", ".gif": "image/gif", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}.get(ext)
    if mime is None:
        return None
    data = base64.b64encode(p.read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(p.name)}" src="data:{mime};base64,{data}">'


def default_series(result, limit: int = 4) -> list[str]:
    """Series worth a figure when none are asked for: position and speed of the heaviest drawn body
    (``scene.json``), else of the first body, else the first recorded series."""
    name = None
    scene = result.scene or {}
    bodies = [b for b in scene.get("bodies", []) if f"{b['name']}.pos.x" in result]
    if bodies:
        name = max(bodies, key=lambda b: b.get("mass", 0.0))["name"]
    else:
        cands = [c[: -len(".pos.x")] for c in result.columns if c.endswith(".pos.x")]
        name = cands[0] if cands else None
    if name is None:
        return result.columns[:limit]
    want = [f"{name}.pos.x", f"{name}.pos.z", f"{name}.vel.x", f"{name}.vel.z"]
    return [w for w in want if w in result][:limit]


def report_html(result, series=None, title: str | None = None) -> tuple[str, list[str]]:
    """The report page of a result read from a folder; returns ``(html, warnings)``."""
    meta = result.metadata or {}
    d = result.path
    scen = meta.get("scenario") or {}
    name = title or scen.get("name") or (d.name if d else "trackdyn run")
    warnings_out: list[str] = []
    parts = [f"<h1>{html.escape(str(name))}</h1>",
             f'<p class="muted">trackdyn {html.escape(str(meta.get("trackdyn_version", "?")))}'
             + (f" · git {html.escape(str(meta['git_revision']))}" if meta.get("git_revision") else "")
             + (f" · {html.escape(str(d))}" if d else "") + f" · report by trackdyn {__version__}</p>"]

    status = str(meta.get("status", "complete"))
    run_rows = [("status", status), ("simulated time [s]", meta.get("sim_time_s")),
                ("wall time [s]", meta.get("wall_time_s")), ("wall per simulated second", meta.get("wall_per_sim")),
                ("steps", meta.get("steps")), ("step size [s]", meta.get("step_size_s")),
                ("samples", meta.get("n_samples", len(result.t))), ("series", meta.get("n_series", len(result.columns)))]
    parts.append("<h2>Run</h2>")
    parts.append(f'<p>status: <span class="status-{html.escape(status)}">{html.escape(status)}</span></p>')
    parts.append(_table([(k, v) for k, v in run_rows if v is not None]))
    if meta.get("error"):
        parts.append(f'<p class="err">{html.escape(str(meta["error"]))}</p>')

    parts.append("<h2>Scenario</h2>")
    parts.append(_table(flatten(scen), ["field", "value"]) if scen else '<p class="muted">no scenario in the metadata</p>')
    if meta.get("spec") is not None:
        parts.append("<h2>Spec summary</h2>")
        parts.append(_table(flatten(meta["spec"], max_items=200), ["field", "value"]))

    parts.append("<h2>Solver settings</h2>")
    solver = {"formulation": meta.get("formulation"), **(meta.get("settings") or {})}
    parts.append(_table([(k, v) for k, v in flatten(solver) if v is not None], ["setting", "value"]))
    if meta.get("model"):
        parts.append(_table(flatten(meta["model"]), ["model", "value"]))
    if meta.get("counters"):
        parts.append(_table(flatten(meta["counters"]), ["counter", "value"]))

    summary = result.summary
    if summary is not None:
        parts.append("<h2>Event results</h2>")
        parts.append(_table([(k, v) for k, v in flatten(summary) if not k.startswith("figures")],
                            ["figure", "value"]))

    parts.append("<h2>Figures</h2>")
    names = list(series) if series else default_series(result)
    if names:
        missing = [n for n in names if n not in result]
        if missing:
            raise ValueError(f"report: no series {missing} in {d}")
        fig = plot_series(result, names, title=None)
        parts.append(f"<figure>{_svg(fig)}<figcaption>{html.escape(', '.join(names))}</figcaption></figure>")
    extra_files = []
    if d is not None:
        for f in (summary or {}).get("figures", []) if isinstance(summary, dict) else []:
            extra_files.append(d / f)
        fig_dir = d / "figures"
        if fig_dir.is_dir():
            extra_files += sorted(p for p in fig_dir.iterdir() if p.suffix.lower() in (".png", ".svg", ".gif", ".jpg"))
    seen = set()
    for p in extra_files:
        if p in seen:
            continue
        seen.add(p)
        if not p.exists():
            warnings_out.append(f"figure {p.name} named in summary.json is missing")
            continue
        emb = _embed_file(p)
        if emb:
            parts.append(f"<figure>{emb}<figcaption>{html.escape(p.name)}</figcaption></figure>")

    parts.append("<h2>Warnings</h2>")
    warns = list(meta.get("warnings") or []) + warnings_out
    parts.append("".join(f'<div class="warn">{html.escape(str(w))}</div>' for w in warns)
                 if warns else '<p class="muted">none</p>')

    parts.append("<h2>Wall time</h2>")
    timing = meta.get("timing_s") or {}
    if timing:
        wall = float(meta.get("wall_time_s") or sum(float(v) for v in timing.values()))
        steps = meta.get("steps") or 0
        rows = [(k, float(v), 100 * float(v) / wall if wall else None,
                 1e3 * float(v) / steps if steps else None) for k, v in timing.items()]
        rows.sort(key=lambda r: -r[1])
        parts.append(_table(rows, ["stage", "wall [s]", "share [%]", "ms per step"]))
        parts.append(f"<figure>{_svg(timing_split(meta))}</figure>")
    else:
        parts.append('<p class="muted">no timing in the metadata</p>')
    if meta.get("machine"):
        parts.append(_table(flatten(meta["machine"]), ["machine", "value"]))

    page = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(str(name))}</title>'
            f"<style>{_CSS}</style></head><body>{''.join(parts)}</body></html>\n")
    return page, warnings_out


def write_report(result, out, series=None, title: str | None = None) -> dict:
    """Write the HTML report of a results folder (or loaded result) to ``out``; returns a summary dict."""
    res = load(result) if isinstance(result, (str, os.PathLike)) else result
    page, warns = report_html(res, series=series, title=title)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    tmp.write_text(page, encoding="utf-8")
    os.replace(tmp, out)
    return {"out": str(out), "bytes": len(page), "status": res.status, "warnings": warns}
