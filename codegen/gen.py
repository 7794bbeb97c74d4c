"""Orchestration: manifest -> every generated file, through the FileManager."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from structgen.codegen.api import names
from structgen.codegen.dest import (
    autograd,
    composites,
    lowerings,
    multi_kernel,
    pointwise_kernels,
    python_api,
    registration,
    rules_data,
    runtime_kernels,
    structured,
)
from structgen.codegen.files import FileManager
from structgen.codegen.model.native import DispatchKey, Manifest
from structgen.codegen.model.project import Project
from structgen.codegen.workers import run_jobs

# Keys with wrapper shards, and the file stem of each. CUDA shards are compiled only when the
# installed torch has CUDA (ARCHITECTURE decision 6).
WRAPPER_KEYS = (DispatchKey.CPU, DispatchKey.Meta, DispatchKey.CUDA)


class OutputKind(enum.Enum):
    """How the build treats a generated file: the one registry CMake's file lists come from
    (``python -m structgen.codegen --cmake-outputs``), so no build script classifies files by name."""

    GLUE = "GLUE"  # dispatcher glue: torch's library and autograd headers, its own precompiled header
    KERNELS = "KERNELS"  # CPU pointwise kernels: no torch header
    OPS = "OPS"  # meta functions, choosers, kernels' CPU host glue: the ops library's own files
    CUDA_HOST = "CUDA_HOST"  # CUDA host glue: CUDA torch, or the CPU emulator's build
    CUDA_DEVICE = "CUDA_DEVICE"  # device code: nvcc, or the emulator as C++
    HEADERS = "HEADERS"
    PYTHON = "PYTHON"  # installed into the project's package
    BUILD = "BUILD"  # read by the build itself


@dataclass(frozen=True)
class Output:
    path: str  # relative to the output folder
    kind: OutputKind
    # Files that compile as one translation unit (CMake's UNITY_GROUP): each glue file pays ~4 s
    # for the dispatcher's pending template instantiations, once per unit.
    unity_group: str | None = None


def ops_header_dir(project: Project) -> str:
    return f"include/{project.include_prefix}/ops"


# The generated Python modules, in the project's package folder.
PYTHON_FILES = ("_ops.py", "_ops.pyi", "_rules.py", "_lowerings.py")
# The CPU host glue of the pointwise kernels, in shards (pointwise_kernels.cpu_host_shards).
CPU_HOST_FILE = "kernels_cpu_host_{}.cpp"
# The files of one pointwise op's kernels (a translation unit per op and device), and their kinds.
KERNEL_FILES = (
    ("src/kernels_cpu_{}.cpp", OutputKind.KERNELS),
    ("src/kernels_cuda_{}.cu", OutputKind.CUDA_DEVICE),
    ("src/kernels_cuda_host_{}.cpp", OutputKind.CUDA_HOST),
)
# Written only when the set of outputs changes; CMake re-configures when it does.
OUTPUTS_CMAKE = "outputs.cmake"
# What the build hashes into each kernel variant's source hash (cmake/autotune_build.cmake).
VARIANT_SOURCES_CMAKE = "variant_sources.cmake"
# The hand-written hooks and their manifest entries, for the link step's report (codegen/link.py).
HOOKS_TXT = "hooks.txt"


def _fixed(project: Project, shards: int) -> list[Output]:
    """Files whose names do not depend on the manifest's ops."""
    glue, ops, cuda_host = OutputKind.GLUE, OutputKind.OPS, OutputKind.CUDA_HOST
    files = [
        Output("src/registration.cpp", glue, "registration"),
        Output("src/composites.cpp", glue, "registration"),
    ]
    files += [Output(f"src/meta_{i}.cpp", ops) for i in range(shards)]
    for key in WRAPPER_KEYS:
        for i in range(shards):
            path = f"src/wrappers_{key.value.lower()}_{i}.cpp"
            # A shard's CPU and Meta wrappers (names carry the key) compile as one unit.
            files.append(
                Output(path, cuda_host) if key is DispatchKey.CUDA else Output(path, glue, f"wrappers_{i}")
            )
    files += [Output(f"src/autograd_{i}.cpp", glue) for i in range(shards)]  # the largest: a unit each
    files += [Output(f"src/multi_kernel_cpu_{i}.cpp", ops) for i in range(shards)]
    files += [Output(f"src/multi_kernel_cuda_{i}.cpp", cuda_host) for i in range(shards)]
    files += [Output("src/" + CPU_HOST_FILE.format(i), ops) for i in range(shards)]
    files += [Output(f"{project.python_dir}/{name}", OutputKind.PYTHON) for name in PYTHON_FILES]
    files += [Output(f, OutputKind.BUILD) for f in (OUTPUTS_CMAKE, VARIANT_SOURCES_CMAKE, HOOKS_TXT)]
    return files


def fixed_outputs(project: Project, shards: int) -> list[str]:
    """Files whose names do not depend on the manifest's ops: what CMake compiles and installs."""
    return [o.path for o in _fixed(project, shards)]


def outputs(manifest: Manifest, shards: int) -> list[Output]:
    """Every generated file with its kind. CMake declares them all as byproducts of the codegen
    step, so ninja re-checks each one after codegen runs and recompiles exactly their dependents."""
    kernels = [
        Output(path.format(group.name), kind)
        for group in pointwise_kernels.pointwise_groups(manifest)
        for path, kind in KERNEL_FILES
    ]
    headers = [
        Output(_header_file(manifest.project, h), OutputKind.HEADERS)
        for h in structured.all_headers(manifest)
    ]
    return _fixed(manifest.project, shards) + kernels + _runtime_kernel_files(manifest) + headers


def _runtime_kernel_files(manifest: Manifest) -> list[Output]:
    """The files of the ops whose kernels are the runtime's, where the manifest has any (a
    project without them compiles none)."""
    if not runtime_kernels.runtime_kernel_groups(manifest):
        return []
    return [
        Output(runtime_kernels.CPU_FILE, OutputKind.OPS),
        Output(runtime_kernels.CUDA_FILE, OutputKind.CUDA_DEVICE),
        Output(runtime_kernels.CUDA_HOST_FILE, OutputKind.CUDA_HOST),
    ]


def all_outputs(manifest: Manifest, shards: int) -> list[str]:
    return [o.path for o in outputs(manifest, shards)]


def _header_file(project: Project, header: structured.OpHeader) -> str:
    return f"include/{project.include_prefix}/{names.group_header(header.group)}"


def cmake_outputs(manifest: Manifest, shards: int) -> dict[str, object]:
    """outputs.cmake's context: each kind's files, and the unity groups."""
    files = outputs(manifest, shards)
    groups: dict[str, list[str]] = {}
    for o in files:
        if o.unity_group:
            groups.setdefault(o.unity_group, []).append(o.path)
    return {
        "files": [o.path for o in files],
        "kinds": [(k.value, [o.path for o in files if o.kind is k]) for k in OutputKind],
        "groups": list(groups.items()),
    }


def _wrappers(manifest: Manifest, fm: FileManager, shards: int) -> None:
    for key, key_shards in structured.wrapper_shards(manifest, WRAPPER_KEYS, shards).items():
        for i, shard in enumerate(key_shards):
            fm.render(f"src/wrappers_{key.value.lower()}_{i}.cpp", "wrappers.cpp.j2", shard=shard)


def _autograd(manifest: Manifest, fm: FileManager, shards: int) -> None:
    for i, autograd_shard in enumerate(autograd.autograd_shards(manifest, shards)):
        fm.render(f"src/autograd_{i}.cpp", "autograd.cpp.j2", shard=autograd_shard)


def _python(manifest: Manifest, fm: FileManager, shards: int) -> None:
    functions = python_api.python_functions(manifest)
    fm.render(f"{manifest.project.python_dir}/_ops.py", "ops.py.j2", functions=functions)
    fm.render(f"{manifest.project.python_dir}/_ops.pyi", "ops.pyi.j2", functions=functions)


def _pointwise_kernels(manifest: Manifest, fm: FileManager, shards: int) -> None:
    units = pointwise_kernels.kernel_units(manifest)
    for unit in units:
        cpu, cuda, cuda_host = (path.format(unit.stem) for path, _ in KERNEL_FILES)
        fm.render(cpu, "kernels_cpu.cpp.j2", unit=unit)
        fm.render(cuda, "kernels_cuda.cu.j2", unit=unit)
        fm.render(cuda_host, "kernels_cuda_host.cpp.j2", unit=unit)
    for i, shard_units in enumerate(pointwise_kernels.cpu_host_shards(units, shards)):
        fm.render("src/" + CPU_HOST_FILE.format(i), "kernels_cpu_host.cpp.j2", units=shard_units)


def _runtime_kernels(manifest: Manifest, fm: FileManager, shards: int) -> None:
    ops = runtime_kernels.runtime_kernel_ops(manifest)
    if ops:
        fm.render(runtime_kernels.CPU_FILE, "runtime_kernels_cpu.cpp.j2", ops=ops)
        fm.render(runtime_kernels.CUDA_FILE, "runtime_kernels_cuda.cu.j2", ops=ops)
        fm.render(runtime_kernels.CUDA_HOST_FILE, "runtime_kernels_cuda_host.cpp.j2", ops=ops)


def _headers(manifest: Manifest, fm: FileManager, shards: int) -> None:
    headers = structured.all_headers(manifest)
    for header in headers:
        fm.render(_header_file(manifest.project, header), "op_declarations.h.j2", header=header)
    _outputs_cmake(manifest, fm, shards)


def _outputs_cmake(manifest: Manifest, fm: FileManager, shards: int) -> None:
    fm.render(OUTPUTS_CMAKE, "outputs.cmake.j2", **cmake_outputs(manifest, shards))


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
        f"{manifest.project.python_dir}/_rules.py",
        "rules.py.j2",
        rules=rules_data.all_rule_data(manifest),
        looped=rules_data.looped_functionals(manifest),
    )


def _lowerings(manifest: Manifest, fm: FileManager, shards: int) -> None:
    path = f"{manifest.project.python_dir}/_lowerings.py"
    fm.render(path, "lowerings.py.j2", lowerings=lowerings.lowerings(manifest))


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
    _runtime_kernels,
    _python,
    _headers,
    _registration,
    _meta,
    _rules,
    _lowerings,
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
    registered = set(all_outputs(manifest, shards))
    if registered != set(fm.planned):  # the registry (outputs) and the sections must agree
        raise RuntimeError(
            f"codegen bug: outputs not rendered: {sorted(registered - set(fm.planned))}; "
            f"rendered but not in outputs(): {sorted(set(fm.planned) - registered)}"
        )


def generate(manifest: Manifest, out_dir: Path, shards: int, workers: int = 1) -> list[str]:
    """Render everything (in ``workers`` processes where forking is safe), then write what
    changed: a failure leaves ``out_dir`` as it was."""
    fm = _file_manager(manifest, out_dir)
    render_all(manifest, fm, shards, workers)
    return fm.commit(owned_dirs=(ops_header_dir(manifest.project),))


def write_outputs_cmake(manifest: Manifest, out_dir: Path, shards: int) -> list[str]:
    """Only outputs.cmake (what CMake's configure step includes): the same text generate() writes,
    so the build's codegen run leaves it alone unless the set of outputs changed."""
    fm = _file_manager(manifest, out_dir)
    _outputs_cmake(manifest, fm, shards)
    return fm.commit()


def _file_manager(manifest: Manifest, out_dir: Path) -> FileManager:
    """The writer of ``manifest``'s files: its templates see the project's names and the runtime's."""
    return FileManager(
        out_dir, Path(manifest.path).name, {"project": manifest.project, "runtime": names.RUNTIME}
    )
