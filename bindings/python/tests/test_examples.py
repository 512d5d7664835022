"""The examples in bindings/python/examples run and print what they should, and
README.md shows each word for word (in the fenced block after the line
"<!-- example: bindings/python/examples/NAME -->"; MCPC_README names another file)."""

from __future__ import annotations

import os
from pathlib import Path
import shlex
import subprocess
import sys

import pytest

from conftest import REPO

EXAMPLES = REPO / "bindings" / "python" / "examples"
# The interpreter the examples run in: this one, unless MCPC_TEST_PYTHON_CMD names a
# command (an emulated interpreter, whose binary cannot be run directly, needs one).
PYTHON_CMD = shlex.split(os.environ.get("MCPC_TEST_PYTHON_CMD", "")) or [sys.executable]


def run_example(name: str) -> str:
    p = subprocess.run(PYTHON_CMD + [str(EXAMPLES / name)], cwd=str(REPO), capture_output=True, text=True,
                       timeout=60, env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_hello() -> None:
    out = run_example("hello.py").splitlines()
    assert "tool: echo {'text': {'type': 'string'}}" in out
    assert "structured: {'sum': 5}" in out
    assert 'text: {"sum":5}' in out
    assert "tool failed: no luck" in out
    assert any(line.startswith('timed out: tools/call "slow": timed out after ') for line in out)


def test_async_calls() -> None:
    out = run_example("async_calls.py").splitlines()
    assert out == ["sums: [0, 2, 4, 6, 8]", "slow: cancelled", "echo: hi"]


def test_seam() -> None:
    assert run_example("seam.py").splitlines() == ["echo: over the seam"]


def test_hosts() -> None:
    out = run_example("hosts.py").splitlines()
    assert out[0] == "added: 3"
    assert sorted(out[1:4]) == ["server: broken failed", "server: calc ready", "server: notes ready"]
    assert out[4:] == ["tools: 26 ['calc__add', 'notes__echo']", "sum: {'sum': 5}",
                       'unknown: no tool named "broken__echo" in the catalog']


def test_input() -> None:
    assert run_example("input.py").splitlines() == ["mcpc-demo asks: name?", "wants_input: hello Ada"]


def readme_block(readme: str, marker: str) -> "str | None":
    lines = readme.splitlines()
    try:
        i = lines.index(marker)
    except ValueError:
        return None
    j = i + 1
    if j >= len(lines) or not lines[j].startswith("```"):
        return None
    k = lines.index("```", j + 1)
    return "\n".join(lines[j + 1:k])


@pytest.mark.parametrize("name", ["hello.py", "async_calls.py", "seam.py", "hosts.py", "input.py"])
def test_readme_shows_the_example(name: str) -> None:
    readme = Path(os.environ.get("MCPC_README") or REPO / "README.md").read_text()
    block = readme_block(readme, "<!-- example: bindings/python/examples/%s -->" % name)
    assert block is not None, "README.md has no block marked for %s" % name
    assert block == (EXAMPLES / name).read_text().rstrip("\n")
