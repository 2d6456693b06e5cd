"""`trackdyn sweep --fidelity`: the track model of every point, validated before anything runs."""

import subprocess
import sys

SWEEP = 'vehicle = "m113"\nevent = "step-climb"\n[grid]\n"sprocket.dx" = [0.0, 0.1]\n'


def test_fidelity_option_is_validated_before_the_cluster_starts(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(SWEEP)
    p = subprocess.run([sys.executable, "-m", "trackdyn.cli.main", "sweep", str(f), "--fidelity", "cardboard",
                        "--out", str(tmp_path / "o")], capture_output=True, text=True, timeout=300)
    assert p.returncode == 1
    from trackdyn.formulations.contract import formulation_names

    assert f"--fidelity = 'cardboard': choose one of {formulation_names()}" in p.stderr
    assert not (tmp_path / "o").exists()


def test_fidelity_option_overrides_the_file(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import trackdyn.experiments.sweep as SW
    from trackdyn.cli.main import app

    seen = {}

    def fake_run_sweep(spec, out, **kw):
        seen["fidelity"] = spec.fidelity
        return {"points": 2, "ok": 2, "failed": 0, "skipped": 0, "ran": 2, "wall_time_s": 0.0, "workers": 1,
                "scheduler": None, "table": "t", "figures": [], "failures": {}, "missing": 0}

    monkeypatch.setattr(SW, "run_sweep", fake_run_sweep)
    f = tmp_path / "s.toml"
    f.write_text(SWEEP)
    r = CliRunner().invoke(app, ["sweep", str(f), "--fidelity", "massless", "--out", str(tmp_path / "o"), "--json"])
    assert r.exit_code == 0, r.output
    assert seen["fidelity"] == "massless"
