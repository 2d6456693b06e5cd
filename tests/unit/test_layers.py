"""The package's layers (``[tool.importlinter]`` in pyproject.toml): no module imports from a layer above its own.

Run the contract alone with ``python -m pytest -m layers tests/unit/test_layers.py``
(or ``lint-imports`` at the repository root).
"""

import os
import pkgutil
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
import tomli_w

import trackdyn

pytest.importorskip("importlinter", reason="import-linter is in the test extra: pip install -e '.[test]'")

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(trackdyn.__file__).resolve().parent

pytestmark = pytest.mark.layers


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]


def _lint(cwd: Path, config: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    """``lint-imports`` with ``config``, in a fresh interpreter (no cache: nothing written next to the code)."""
    code = textwrap.dedent(f"""
        import sys
        from importlinter.cli import lint_imports
        sys.exit(lint_imports(config_filename={str(config)!r}, no_cache=True, no_logo=True))
    """)
    env = None if pythonpath is None else {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def _layer_modules(contract) -> set[str]:
    return {m.strip() for layer in contract["layers"] for m in layer.replace(":", "|").split("|")}


def test_layers_contract_is_kept():
    """(a) The installed source keeps the layers contract."""
    if Path(trackdyn.__file__).resolve().parents[1] != ROOT / "src":
        pytest.skip("trackdyn is not imported from this checkout's src/ (not an editable install)")
    r = _lint(ROOT, ROOT / "pyproject.toml")
    assert r.returncode == 0, f"lint-imports found imports against the layers:\n{r.stdout}\n{r.stderr}"
    assert "1 kept, 0 broken" in r.stdout


def test_every_top_level_module_has_a_layer():
    """A new top-level module or package must be placed in the contract (else nothing checks it)."""
    (contract,) = _config()["contracts"]
    listed = _layer_modules(contract)
    present = {f"trackdyn.{m.name}" for m in pkgutil.iter_modules([str(SRC)])}
    assert present - listed == set(), "give these modules a layer in pyproject.toml [tool.importlinter]"
    assert listed - present == set(), "the contract lists modules that no longer exist"


def test_an_upward_import_breaks_the_contract(tmp_path):
    """(b) The check can fail: ``math`` (bottom layer) importing ``cli`` (top) is reported."""
    src = tmp_path / "src"
    shutil.copytree(SRC, src / "trackdyn", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))
    with open(src / "trackdyn" / "math" / "__init__.py", "a", encoding="utf-8") as fh:
        fh.write("\nfrom trackdyn.cli import main  # noqa: E402,F401  (an upward import: breaks the layers)\n")
    config = tmp_path / "pyproject.toml"
    config.write_text(tomli_w.dumps({"tool": {"importlinter": _config()}}), encoding="utf-8")

    r = _lint(tmp_path, config, pythonpath=src)
    assert r.returncode != 0, r.stdout
    assert "BROKEN" in r.stdout
    assert "trackdyn.math is not allowed to import trackdyn.cli" in r.stdout, r.stdout
    assert "trackdyn.math -> trackdyn.cli" in r.stdout, r.stdout


@pytest.mark.parametrize("module", sorted(p.stem for p in (ROOT / "src" / "trackdyn" / "testing").glob("benchmarks*.py")))
def test_each_benchmark_module_imports_first(module):
    """Each ``trackdyn.testing.benchmarks*`` module imports on its own in a fresh interpreter (bench scripts import
    ``benchmarks_vehicle`` before ``benchmarks``; a name imported from a partly initialised module broke them)."""
    r = subprocess.run([sys.executable, "-c", f"import trackdyn.testing.{module}"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
