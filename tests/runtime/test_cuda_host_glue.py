"""The CUDA host glue (csrc/ops/*/cuda_host.cpp, csrc/runtime/autotune/cuda_host.cpp and the
generated wrappers_cuda_* / kernels_cuda_host_*) is compiled only against a CUDA build of torch,
which CI does not have; nvcc checks the device code, and this test parses the host glue with
g++ -fsyntax-only against the installed torch's headers and the CUDA toolkit's, so a host-glue
mistake fails here rather than on the first GPU machine.

A CPU wheel ships c10/cuda but not its generated c10/cuda/impl/cuda_cmake_macros.h; a stand-in
defining what a shared-library build defines is put on the include path."""

import shutil
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch.utils.cpp_extension

ROOT = Path(__file__).resolve().parents[2]
# It builds or starts processes of its own: under xdist its tests run one after another in one
# worker, with the other such files (tools/test.sh).
pytestmark = pytest.mark.xdist_group("own_processes")


def _cuda_include() -> Path | None:
    nvcc = shutil.which("nvcc")
    candidates = [Path(nvcc).resolve().parent.parent / "include"] if nvcc else []
    candidates.append(Path("/usr/local/cuda/include"))
    return next((c for c in candidates if (c / "cuda_runtime.h").exists()), None)


@pytest.fixture(scope="module")
def glue(tmp_path_factory) -> tuple[list[str], Path]:
    """g++ include flags, and the folder of the generated sources."""
    cuda = _cuda_include()
    if shutil.which("g++") is None or cuda is None:
        pytest.skip("needs g++ and the CUDA toolkit's headers")
    tmp = tmp_path_factory.mktemp("glue")
    gen = tmp / "gen"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen",
            "--manifest",
            str(ROOT / "structops" / "native_functions.yaml"),
            "--out-dir",
            str(gen),
            "--shards",
            "4",
        ],
        cwd=ROOT,
        check=True,
    )
    stub = tmp / "stub"
    (stub / "c10/cuda/impl").mkdir(parents=True)
    (stub / "c10/cuda/impl/cuda_cmake_macros.h").write_text(
        "#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n"
    )
    torch_includes = torch.utils.cpp_extension.include_paths()
    flags = [f"-I{ROOT / 'csrc/include'}", f"-I{ROOT / 'csrc'}", f"-I{gen / 'include'}"]
    flags += [f"-I{p}" for p in torch_includes] + [
        f"-I{stub}",
        f"-I{cuda}",
        f"-I{sysconfig.get_paths()['include']}",
    ]
    return flags, gen / "src"


def test_host_glue_compiles(glue):
    flags, gen_src = glue
    files = (
        sorted(ROOT.glob("csrc/**/cuda_host*.cpp"))
        + sorted(gen_src.glob("wrappers_cuda_*.cpp"))
        + sorted(gen_src.glob("kernels_cuda_host_*.cpp"))
        + sorted(gen_src.glob("multi_kernel_cuda_*.cpp"))
    )
    assert files

    def check(path: Path) -> tuple[Path, subprocess.CompletedProcess]:
        cmd = [
            "g++",
            "-std=c++20",
            "-fsyntax-only",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-Wno-unknown-pragmas",
            "-Wno-unused-parameter",
            *flags,
            str(path),
        ]
        return path, subprocess.run(cmd, capture_output=True, text=True, check=False)

    with ThreadPoolExecutor(2) as pool:
        failures = [f"{p.name}:\n{r.stderr[-3000:]}" for p, r in pool.map(check, files) if r.returncode != 0]
    assert not failures, "\n".join(failures)
