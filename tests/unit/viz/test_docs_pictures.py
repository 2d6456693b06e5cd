"""The README's pictures exist, stay small, and docs/visualisation.md names the command that made each."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_every_readme_picture_exists_is_small_and_has_its_producing_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^\]]*\]\((docs/images/[^)\s]+)\)", readme)
    assert len(pictures) >= 3
    table = (ROOT / "docs" / "visualisation.md").read_text(encoding="utf-8")
    for rel in pictures:
        path = ROOT / rel
        assert path.is_file(), rel
        assert path.stat().st_size < 600_000, (rel, path.stat().st_size)
        name = rel.removeprefix("docs/")
        row = next((ln for ln in table.splitlines() if ln.startswith(f"| `{name}` |")), None)
        assert row is not None and "trackdyn" in row, f"docs/visualisation.md names no producing command for {rel}"
