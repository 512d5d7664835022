"""The examples in bindings/python/examples (README.md shows them word for word;
tests/bindings/readme_check.sh checks the copies) run and print what they should."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO

EXAMPLES = REPO / "bindings" / "python" / "examples"


def run_example(name: str) -> str:
    p = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=str(REPO), capture_output=True, text=True,
                       timeout=60, env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_hello() -> None:
    out = run_example("hello.py").splitlines()
    assert "tool: echo {'text': {'type': 'string'}}" in out
    assert "structured: {'sum': 5}" in out
    assert 'text: {"sum":5}' in out
    assert "tool failed: no luck" in out
    assert 'timed out: tools/call "slow": timed out after 200 ms' in out


def test_async_calls() -> None:
    out = run_example("async_calls.py").splitlines()
    assert out == ["sums: [0, 2, 4, 6, 8]", "slow: cancelled", "echo: hi"]


def test_seam() -> None:
    assert run_example("seam.py").splitlines() == ["echo: over the seam"]
