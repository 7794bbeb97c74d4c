"""The dtypes the generator knows, one row each. Every other table of dtype names, groups and C++
spellings in the generator is a view of this one, so a dtype is added in one place."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dtype:
    name: str  # torch's name, as the manifest writes it
    group: str  # floating | complex | integral | bool (the manifest's dtype groups)
    scalar_type: str  # the c10::ScalarType enumerator
    cpu_type: str  # the element type of the generated CPU kernels
    cuda_type: str | None  # of the generated CUDA device code; None: no CUDA kernel takes it
    launch_code: str | None  # the structgen::Dtype enumerator (structgen/pointwise/launch.h)
    aliases: tuple[str, ...] = ()  # other names a rule may use


DTYPES = (
    Dtype("float16", "floating", "Half", "c10::Half", "__half", "Float16", ("half",)),
    Dtype("bfloat16", "floating", "BFloat16", "c10::BFloat16", "__nv_bfloat16", "BFloat16"),
    Dtype("float32", "floating", "Float", "float", "float", "Float32", ("float",)),
    Dtype("float64", "floating", "Double", "double", "double", "Float64", ("double",)),
    Dtype("complex64", "complex", "ComplexFloat", "c10::complex<float>", None, "ComplexFloat"),
    Dtype("complex128", "complex", "ComplexDouble", "c10::complex<double>", None, "ComplexDouble"),
    Dtype("uint8", "integral", "Byte", "uint8_t", "uint8_t", "UInt8"),
    Dtype("int8", "integral", "Char", "int8_t", "int8_t", "Int8"),
    Dtype("int16", "integral", "Short", "int16_t", "int16_t", "Int16"),
    Dtype("int32", "integral", "Int", "int32_t", "int32_t", "Int32"),
    Dtype("int64", "integral", "Long", "int64_t", "int64_t", "Int64", ("long",)),
    Dtype("bool", "bool", "Bool", "bool", "bool", "Bool"),
)

NAMES = tuple(d.name for d in DTYPES)
GROUPS = {
    g: tuple(d.name for d in DTYPES if d.group == g) for g in ("floating", "complex", "integral", "bool")
}
# Every name a rule may write (`dtype: {out: long}`), aliases after their dtype.
RULE_NAMES = tuple(n for d in DTYPES for n in (d.name, *d.aliases))
_BY_NAME = {n: d for d in DTYPES for n in (d.name, *d.aliases)}
UNKNOWN_DTYPE_FIX = f"use {', '.join(GROUPS)} or one of: {', '.join(NAMES)}"


def dtype(name: str) -> Dtype:
    """The dtype of a name or alias; KeyError for an unknown one."""
    return _BY_NAME[name]


def scalar_type(name: str) -> str:
    """The C++ constant of a dtype name or alias: ``at::kFloat``."""
    return f"at::k{_BY_NAME[name].scalar_type}"


def expand(items: list) -> tuple[str, ...]:
    """Dtype names and groups -> the dtypes, in table order; KeyError(item) for an unknown one."""
    names: set[str] = set()
    for item in items:
        if item in GROUPS:
            names.update(GROUPS[item])
        elif item in NAMES:
            names.add(item)
        else:
            raise KeyError(item)
    return tuple(d for d in NAMES if d in names)
