"""The README's five-line script and the notebook example, run as a user would against the
test service."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import API_TOKEN, CLIENT_DIR, Service, cli


def readme_script() -> str:
    text = (CLIENT_DIR / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "the README has no python block"
    return str(blocks[0])


def run_python(code_or_file: str | Path, service: Service, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if k not in ("GAMESOLVER_URL", "GAMESOLVER_API_TOKEN")}
    e.update(GAMESOLVER_URL=service.url, GAMESOLVER_API_TOKEN=API_TOKEN, **env)
    args = [str(code_or_file)] if isinstance(code_or_file, Path) else ["-c", code_or_file]
    return subprocess.run(
        [sys.executable, *args], env=e, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_readme_script_prints_what_the_cli_prints(service: Service, tmp_path: Path) -> None:
    script = readme_script()
    assert len(script.strip().splitlines()) == 5, script
    out = run_python(script, service, tmp_path)
    assert out.returncode == 0, out.stderr
    want = cli("analyse", "--game", "connect4", "--position", "335662333565", "--algorithm", "alphabeta")
    assert want.returncode == 0, want.stderr
    # The CLI's table: a header, one line per move (the move, its score and meaning), then the
    # summary lines.
    rows = [line.split(None, 1) for line in want.stdout.splitlines()[1:8]]
    assert [line.split(None, 1) for line in out.stdout.splitlines()] == rows
    # And what the README says it prints.
    readme = (CLIENT_DIR / "README.md").read_text(encoding="utf-8")
    shown = re.findall(r"```text\n(.*?)```", readme, re.S)[0]
    assert shown.splitlines() == out.stdout.splitlines()


def test_the_top_readme_shows_the_same_script() -> None:
    top = (CLIENT_DIR.parents[1] / "README.md").read_text(encoding="utf-8")
    section = top.split("## Python client", 1)[1]
    assert re.findall(r"```python\n(.*?)```", section, re.S)[0] == readme_script()


def test_the_notebook_example_runs_follows_and_plots(service: Service, tmp_path: Path) -> None:
    chart = tmp_path / "visits.svg"
    out = run_python(
        CLIENT_DIR / "examples" / "mcts_visits.py", service, tmp_path,
        EXAMPLE_PLAYOUTS="100000", EXAMPLE_OUT=str(chart), MPLBACKEND="Agg",
    )
    assert out.returncode == 0, out.stderr
    assert "best move" in out.stdout and "100000 playouts" in out.stdout
    # The progress bar (stderr) counted the four runs.
    assert "4/4" in out.stderr, out.stderr
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert chart.read_text().lstrip().startswith("<svg")
    else:
        assert chart.stat().st_size > 0
