"""find_package(structgen <version>): the generator's CMake package states codegen/version.py's
version, and a project that asks for an incompatible one is refused at configure time, before
anything of the generator runs. (A compatible request builds: structops' own CMakeLists.txt, the
example's and every new project's find it.)"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from structgen.codegen.__main__ import CMAKE_DIR
from structgen.codegen.version import GENERATOR_VERSION

MAJOR, MINOR = (int(p) for p in GENERATOR_VERSION.split(".")[:2])
# A newer major or minor version; in 0.x an older minor version too (0.x minors may break).
INCOMPATIBLE = [f"{MAJOR + 1}.0", f"{MAJOR}.{MINOR + 1}"] + ([f"0.{MINOR - 1}"] if MAJOR == 0 < MINOR else [])


def _configure(tmp_path: Path, requested: str) -> subprocess.CompletedProcess:
    cmake = shutil.which("cmake", path=str(Path(sys.executable).parent)) or shutil.which("cmake")
    assert cmake is not None, "no cmake: tools/setup.sh installs it (every build needs it)"
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.25)\n"
        "project(asks LANGUAGES NONE)\n"
        f'find_package(structgen {requested} CONFIG QUIET PATHS "{CMAKE_DIR.as_posix()}" NO_DEFAULT_PATH)\n'
        'message(STATUS "found=${structgen_FOUND} considered=${structgen_CONSIDERED_VERSIONS}")\n'
    )
    return subprocess.run(
        [cmake, "-S", str(tmp_path), "-B", str(tmp_path / "build")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("requested", INCOMPATIBLE)
def test_an_incompatible_version_is_refused(tmp_path, requested):
    r = _configure(tmp_path, requested)
    assert r.returncode == 0, r.stderr
    assert "found=0 " in r.stdout, r.stdout
    assert f"considered={GENERATOR_VERSION}" in r.stdout  # the version it read from version.py


def test_a_cmake_package_whose_generator_the_python_does_not_import_is_refused(tmp_path):
    """A copy of the CMake package elsewhere (another checkout or install) would run this Python's
    generator against its own runtime: the configure step stops, naming both folders."""
    other = tmp_path / "other"
    shutil.copytree(CMAKE_DIR, other / "cmake")
    (other / "codegen").mkdir()
    shutil.copy(CMAKE_DIR.parent / "codegen" / "version.py", other / "codegen")  # the version it states
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.25)\nproject(p LANGUAGES CXX)\n"
        f'find_package(structgen {MAJOR}.{MINOR} CONFIG REQUIRED PATHS "{(other / "cmake").as_posix()}" '
        "NO_DEFAULT_PATH)\n"
    )
    cmake = shutil.which("cmake", path=str(Path(sys.executable).parent)) or shutil.which("cmake")
    r = subprocess.run(
        [cmake, "-S", str(project), "-B", str(project / "build"), f"-DPython_EXECUTABLE={sys.executable}"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    message = " ".join(r.stderr.split())
    assert r.returncode != 0
    assert f"this structgen CMake package is {other.resolve()}" in message, r.stderr
    assert f"imports the generator from {CMAKE_DIR.parent.resolve()}" in message, r.stderr
