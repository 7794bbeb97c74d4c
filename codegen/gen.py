"""Orchestration: manifest -> every generated file, through the FileManager."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from codegen.api import names
from codegen.dest import (
    autograd,
    composites,
    multi_kernel,
    pointwise_kernels,
    python_api,
    registration,
    rules_data,
    structured,
)
from codegen.files import FileManager
from codegen.native import DispatchKey, Manifest
from codegen.workers import run_jobs

# Keys with wrapper shards, and the file stem of each. CUDA shards are compiled only when the
# installed torch has CUDA (ARCHITECTURE decision 6).
WRAPPER_KEYS = (DispatchKey.CPU, DispatchKey.Meta, DispatchKey.CUDA)
OPS_HEADER_DIR = "include/structops/ops"


def fixed_outputs(shards: int) -> list[str]:
    """Files whose names do not depend on the manifest: what CMake compiles and installs."""
    files = ["src/registration.cpp", "src/composites.cpp"]
    files += [f"src/meta_{i}.cpp" for i in range(shards)]
    for key in WRAPPER_KEYS:
        files += [f"src/wrappers_{key.value.lower()}_{i}.cpp" for i in range(shards)]
    files += [f"src/autograd_{i}.cpp" for i in range(shards)]
    for stem in ("multi_kernel_cpu_{}.cpp", "multi_kernel_cuda_{}.cpp", CPU_HOST_FILE):
        files += ["src/" + stem.format(i) for i in range(shards)]
    files += ["python/structops/_ops.py", "python/structops/_ops.pyi", "python/structops/_rules.py"]
    return files


def op_headers(manifest: Manifest) -> list[str]:
    return [_header_file(h) for h in structured.all_headers(manifest)]


# The CPU host glue of the pointwise kernels, in shards (pointwise_kernels.cpu_host_shards).
CPU_HOST_FILE = "kernels_cpu_host_{}.cpp"
# The files of one pointwise op's kernels (a translation unit per op and device).
KERNEL_FILES = ("src/kernels_cpu_{}.cpp", "src/kernels_cuda_{}.cu", "src/kernels_cuda_host_{}.cpp")


def kernel_files(manifest: Manifest) -> list[str]:
    groups = pointwise_kernels.pointwise_groups(manifest)
    return [f.format(group.name) for group in groups for f in KERNEL_FILES]


def _header_file(header: structured.OpHeader) -> str:
    return f"include/{names.group_header(header.group)}"


def all_outputs(manifest: Manifest, shards: int) -> list[str]:
    """Every generated file. CMake declares them all as byproducts of the codegen step, so
    ninja re-checks each one after codegen runs and recompiles exactly their dependents."""
    return (
        fixed_outputs(shards)
        + kernel_files(manifest)
        + op_headers(manifest)
        + [OUTPUTS_CMAKE, VARIANT_SOURCES_CMAKE, HOOKS_TXT]
    )


# Written only when the set of outputs changes; CMake re-configures when it does.
OUTPUTS_CMAKE = "outputs.cmake"
# What the build hashes into each kernel variant's source hash (cmake/autotune_build.cmake).
VARIANT_SOURCES_CMAKE = "variant_sources.cmake"
# The hand-written hooks and their manifest entries, for the link step's report (codegen/link.py).
HOOKS_TXT = "hooks.txt"


def _wrappers(manifest: Manifest, fm: FileManager, shards: int) -> None:
    for key, key_shards in structured.wrapper_shards(manifest, WRAPPER_KEYS, shards).items():
        for i, shard in enumerate(key_shards):
            fm.render(f"src/wrappers_{key.value.lower()}_{i}.cpp", "wrappers.cpp.j2", shard=shard)


def _autograd(manifest: Manifest, fm: FileManager, shards: int) -> None:
    for i, autograd_shard in enumerate(autograd.autograd_shards(manifest, shards)):
        fm.render(f"src/autograd_{i}.cpp", "autograd.cpp.j2", shard=autograd_shard)


def _python(manifest: Manifest, fm: FileManager, shards: int) -> None:
    functions = python_api.python_functions(manifest)
    fm.render("python/structops/_ops.py", "ops.py.j2", functions=functions)
    fm.render("python/structops/_ops.pyi", "ops.pyi.j2", functions=functions)


def _pointwise_kernels(manifest: Manifest, fm: FileManager, shards: int) -> None:
    units = pointwise_kernels.kernel_units(manifest)
    for unit in units:
        cpu, cuda, cuda_host = (f.format(unit.stem) for f in KERNEL_FILES)
        fm.render(cpu, "kernels_cpu.cpp.j2", unit=unit)
        fm.render(cuda, "kernels_cuda.cu.j2", unit=unit)
        fm.render(cuda_host, "kernels_cuda_host.cpp.j2", unit=unit)
    for i, shard_units in enumerate(pointwise_kernels.cpu_host_shards(units, shards)):
        fm.render("src/" + CPU_HOST_FILE.format(i), "kernels_cpu_host.cpp.j2", units=shard_units)


def _headers(manifest: Manifest, fm: FileManager, shards: int) -> None:
    headers = structured.all_headers(manifest)
    for header in headers:
        fm.render(_header_file(header), "op_declarations.h.j2", header=header)
    fm.render(
        OUTPUTS_CMAKE,
        "outputs.cmake.j2",
        files=fixed_outputs(shards) + kernel_files(manifest) + [_header_file(h) for h in headers],
    )


def _registration(manifest: Manifest, fm: FileManager, shards: int) -> None:
    fm.render(
        "src/registration.cpp",
        "registration.cpp.j2",
        defs=registration.defs(manifest),
        no_derivative=registration.no_derivative(manifest),
        functionalizations=registration.functionalizations(manifest),
    )


def _meta(manifest: Manifest, fm: FileManager, shards: int) -> None:
    for i, meta_shard in enumerate(structured.meta_shards(manifest, shards)):
        fm.render(f"src/meta_{i}.cpp", "meta.cpp.j2", shard=meta_shard)


def _rules(manifest: Manifest, fm: FileManager, shards: int) -> None:
    fm.render(
        "python/structops/_rules.py",
        "rules.py.j2",
        rules=rules_data.all_rule_data(manifest),
        looped=rules_data.looped_functionals(manifest),
    )


def _composites(manifest: Manifest, fm: FileManager, shards: int) -> None:
    fm.render("src/composites.cpp", "composites.cpp.j2", calls=composites.composite_calls(manifest))


def _multi_kernel(manifest: Manifest, fm: FileManager, shards: int) -> None:
    fm.render(
        VARIANT_SOURCES_CMAKE, "variant_sources.cmake.j2", variants=multi_kernel.variant_sources(manifest)
    )
    for key in (DispatchKey.CPU, DispatchKey.CUDA):
        for i, chooser_shard in enumerate(multi_kernel.chooser_shards(manifest, key, shards)):
            fm.render(
                f"src/multi_kernel_{key.value.lower()}_{i}.cpp", "multi_kernel.cpp.j2", shard=chooser_shard
            )


def _hooks(manifest: Manifest, fm: FileManager, shards: int) -> None:
    fm.render(HOOKS_TXT, "hooks.txt.j2", ops=structured.all_hooks(manifest))


Section = Callable[[Manifest, FileManager, int], None]
# What renders each group of files, independent of the others. Longest first (on the synthetic
# manifest of tools/bench_codegen.py), so that workers claiming them in turn end together.
SECTIONS: tuple[Section, ...] = (
    _wrappers,
    _autograd,
    _pointwise_kernels,
    _python,
    _headers,
    _registration,
    _meta,
    _rules,
    _composites,
    _multi_kernel,
    _hooks,
)


def render_all(manifest: Manifest, fm: FileManager, shards: int, workers: int = 1) -> None:
    """Render every output into ``fm``, the sections spread over ``workers`` processes."""

    def section_files(section: Section) -> dict[str, str | None]:
        part = fm.part()
        section(manifest, part, shards)
        part.settle()  # in the worker: compares with the disk in parallel, sends less back
        return part.planned

    for planned in run_jobs([partial(section_files, s) for s in SECTIONS], workers):
        fm.merge(planned)
    missing = set(fixed_outputs(shards)) - set(fm.planned)
    if missing:
        raise RuntimeError(f"codegen bug: fixed outputs not rendered: {sorted(missing)}")


def generate(manifest: Manifest, out_dir: Path, shards: int, workers: int = 1) -> list[str]:
    """Render everything (in ``workers`` processes where forking is safe), then write what
    changed: a failure leaves ``out_dir`` as it was."""
    fm = FileManager(out_dir, Path(manifest.path).name)
    render_all(manifest, fm, shards, workers)
    return fm.commit(owned_dirs=(OPS_HEADER_DIR,))
