"""Helpers the manifest- and rule-error tests share: write a manifest, expect its SpecError."""

import subprocess
import sys
from pathlib import Path

import pytest
from structgen.codegen.errors import SpecError
from structgen.codegen.gen import generate
from structgen.codegen.manifest import load_manifest

ROOT = Path(__file__).resolve().parents[2]


def write_manifest(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "native_functions.yaml"
    path.write_text(text)
    return path


def load_error(tmp_path: Path, text: str) -> SpecError:
    """The SpecError the manifest stops with; generation must write nothing."""
    path = write_manifest(tmp_path, text)
    out = tmp_path / "generated"
    with pytest.raises(SpecError) as e:
        generate(load_manifest(path), out, shards=2)
    assert not out.exists(), "nothing may be written when the manifest is bad"
    return e.value


def run_cli(tmp_path: Path, text: str) -> tuple[subprocess.CompletedProcess, Path]:
    """``python -m structgen.codegen`` on the manifest ``text``: the process and its output folder."""
    path = write_manifest(tmp_path, text)
    out = tmp_path / "generated"
    proc = subprocess.run(
        [sys.executable, "-m", "structgen.codegen", "--manifest", str(path), "--out-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return proc, out
