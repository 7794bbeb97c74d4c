"""Names of the generated C++ and Python: functions, structs, files, locals. One place, so the
emitters and the manifest checker agree; a leaf module (it imports nothing of the generator)."""

from __future__ import annotations

from dataclasses import dataclass


# The runtime every generated package is built on: its C++ namespace, the folder of its headers
# (<RUNTIME_INCLUDE/structured.h>) and its Python package. The one place the generator names it; a
# project's own names are its header's (codegen/project.py).
@dataclass(frozen=True)
class Runtime:
    namespace: str  # C++: <namespace>::autograd::..., and what generated code sees unqualified
    include: str  # headers: <include/structured.h>
    python: str  # the Python package of _dispatch, rules, vmap, ...
    macro: str  # the prefix of its build macros: <macro>_CUDA_EMULATION


RUNTIME = Runtime(namespace="structgen", include="structgen", python="structgen", macro="STRUCTGEN")

# C++20's keywords and alternative tokens: an argument of one of these names is spelled with a
# trailing underscore in C++ (cpp_name); a kernel of one of these names is an error (manifest.py).
_CPP_KEYWORD_TEXT = """
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
    char32_t class compl concept const consteval constexpr constinit const_cast continue co_await
    co_return co_yield decltype default delete do double dynamic_cast else enum explicit export
    extern false float for friend goto if inline int long mutable namespace new noexcept not not_eq
    nullptr operator or or_eq private protected public register reinterpret_cast requires return
    short signed sizeof static static_assert static_cast struct switch template this thread_local
    throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t while
    xor xor_eq
"""
CPP_KEYWORDS = frozenset(_CPP_KEYWORD_TEXT.split())

# Names the generated C++ declares or calls unqualified in functions whose parameters are an op's
# arguments (codegen/templates/*.j2, rules/cpp.py): an argument of the same name would be
# redeclared or would shadow them. Locals that PyTorch's own argument names would clash with
# (meta, inputs, target, key, s, rank) are spelled with GENERATED_PREFIX, which no argument may
# start with; names derived from the op's own names are in generated_names.
GENERATED_PREFIX = "so_"
GENERATED_LOCALS = frozenset(
    {
        # wrappers.cpp.j2
        "check_devices",
        "allocate",
        "prepare_out",
        "check_inplace",
        "OutputTarget",
        "OutputTargets",
        "NamedTensor",
        "OutDtype",
        # meta.cpp.j2 and rules/cpp.py
        "op",
        "TensorSpec",
        "elementwise_strides",
        "at",
        "i",
        # multi_kernel.cpp.j2
        "eligible",
        "run",
        "pick",
        "variant",
        # kernels_cpu.cpp.j2, kernels_cuda_host.cpp.j2, pointwise_formula.j2; impl parameters
        "f",
        "T",
        "scalar_t",
        "guard",
        "launch",
        "error",
        "common_dtype",
        "compute_dtype",
    }
)


def generated_names(
    outputs: tuple[str, ...], precomputed: tuple[str, ...], dims: tuple[str, ...], arguments: tuple[str, ...]
) -> dict[str, str]:
    """Locals the generated C++ derives from an op's names, each with the name it comes from."""
    derived = {}
    for o in outputs:
        derived.update(
            {f"{o}_shape": o, f"{o}_dtypes": o, f"{o}_strides": o, f"target_{o}": o, f"scratch_{o}": o}
        )
    derived.update({f"{p}_value": p for p in precomputed})
    for d in dims:
        derived.update({f"d_{d}": d, f"d_{d}_site": d, f"len_{d}": d})
    derived.update({f"has_{a}": a for a in arguments})
    # autograd.cpp.j2 (dest/autograd.py): a saved argument, its shape and dtype, a Tensor[]'s
    # length, and in forward mode its primal and tangent
    derived.update({f"{a}{suffix}": a for a in arguments for suffix in ("_", "_meta", "_count", "_p", "_t")})
    return derived


def cpp_name(name: str) -> str:
    return f"{name}_" if name in CPP_KEYWORDS else name


def meta_function(group: str) -> str:
    """The meta function of structured op ``group`` (generated from its rule, or hand-written):
    structgen::meta::<group>."""
    return group


def meta_result_struct(group: str) -> str:
    return f"{group}_meta"


def wrapper(key: str, overload: str) -> str:
    """The dispatcher kernel of one overload (its unambiguous name) for dispatch key ``key``."""
    return f"wrapper_{key}_{overload}"


def group_header(group: str) -> str:
    """Per-op declaration header, so editing one op recompiles only what includes it; relative to
    the project's include prefix (templates write <{{ project.include_prefix }}/{{ header }}>)."""
    return f"ops/{group}.h"


def variant_kernel(impl: str, variant: str) -> str:
    """A generated kernel variant's function (manifest ``kernels:`` with ``params``): ``<impl>__<name>``."""
    return f"{impl}__{variant}"
