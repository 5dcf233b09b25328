"""The README's pytest snippet works as written, from any working directory (issue 19)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TINY = """
name = "tiny"
[group]
consumers = 1
brokers = 1
topics = { t0 = 1 }
[expect]
verdict = "holds"
"""


def _snippet() -> str:
    readme = (ROOT / "README.md").read_text()
    after = readme[readme.index("one pytest test per scenario file (`groupcheck.testing`)") :]
    match = re.search(r"```python\n(.*?)```", after, re.S)
    assert match is not None
    return match.group(1)


def test_the_readme_pytest_snippet_runs_from_any_directory(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "specs").mkdir()
    (project / "specs" / "tiny.toml").write_text(TINY)
    test_file = project / "tests" / "test_scenarios.py"
    test_file.write_text(_snippet())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd in (project, project / "tests", elsewhere):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--rootdir",
                str(project),
                str(test_file),
            ],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, (cwd, proc.stdout[-2000:], proc.stderr[-2000:])
        assert "1 passed" in proc.stdout, proc.stdout
