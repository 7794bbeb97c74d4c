"""How the generated <package>.* functions call their overloads."""

import functools
import math

import torch

from structgen import _C
from structgen._after_import import when_imported

_compiling = torch.compiler.is_compiling

# (C entry, the Python function it falls back to) of every generated function.
_ENTRIES: list = []
_registered = 0  # how many of _ENTRIES register_with_dynamo() has taken


def entry(fallback, overloads, text_signature: str):
    """``fallback`` (a generated function) as a C function that binds its common calls itself
    (csrc/python/entry.cpp): torch.add's call cost instead of a Python frame and torch.ops'
    generic argument conversion. ``overloads``: (OpOverload, writes out=, parameters) as pick()
    reads them, in the order pick() tries them. Calls it does not bind go to ``fallback``, which
    Dynamo traces in its place (register_with_dynamo)."""
    fallback = _taking_numpy_names(fallback, overloads)
    native = tuple((op._schema.name, op._schema.overload_name, params) for op, _, params in overloads)
    doc = f"{fallback.__name__}({text_signature})\n--\n\n{fallback.__doc__}"
    package = fallback.__module__.rpartition(".")[0]  # <package>._ops defines it; <package>.<name> is public
    types = (torch.Tensor, torch.nn.Parameter)
    function = _C.entry(fallback.__name__, doc, fallback, native, types, package)
    _ENTRIES.append((function, fallback))
    return function


def _taking_numpy_names(fallback, overloads):
    """``fallback`` taking numpy's names of its parameters too (axis=, keepdims=), as torch's
    Python layer does, where some overload has the parameter; the C entry binds no call that
    names them, so only calls that give one pay for the renaming."""
    names = {p[0] for _, _, params in overloads for p in params}
    aliases = {a: n for a, n in _NUMPY_NAMES.items() if n in names and a not in names}
    if not aliases:
        return fallback

    @functools.wraps(fallback)
    def taking(*args, **kwargs):
        for alias in aliases.keys() & kwargs.keys():
            if aliases[alias] not in kwargs:
                kwargs[aliases[alias]] = kwargs.pop(alias)
        return fallback(*args, **kwargs)

    return taking


def register_with_dynamo() -> None:
    """torch.compile traces each entry's Python function in its place (a C function is opaque to
    Dynamo), from when torch._dynamo is imported: importing it here would cost a second. A
    generated ``_ops`` module calls this once its entries exist; each call takes the entries made
    since the one before, so every package's functions are registered once."""
    global _registered
    pending = _ENTRIES[_registered:]
    _registered = len(_ENTRIES)

    def register() -> None:
        for function, fallback in pending:
            torch.compiler.substitute_in_graph(function, skip_signature_check=True)(fallback)

    when_imported("torch._dynamo", register)


def call(op, *args, **kwargs):
    """Call ``op``; outside torch.compile, route C++ warnings to Python's warnings module.

    torch.ops calls print TORCH_WARN to stderr instead of raising a Python warning; the
    bridge in _C fixes that for eager calls. Under torch.compile the op is called plainly, so
    Dynamo traces it like any torch.ops call.
    """
    if _compiling():
        return op(*args, **kwargs)
    # OpOverload.__call__ only forwards to the C++ callable _op; calling _op saves a Python frame
    # (about 1 us of the ~4 us a small call costs).
    return _C.call_with_warnings(op._op, args, kwargs)


def spelled(name: str, argument: str, value, spellings: dict):
    """The schema's value for a text torch's Python layer takes in place of a number
    (torch.cdist's compute_mode="use_mm_for_euclid_dist" is 1); any other value as it is."""
    if not isinstance(value, str):
        return value
    if value not in spellings:
        accepted = ", ".join(repr(t) for t in spellings)
        raise ValueError(
            f"{name}(): {value!r} is not a valid value for {argument}: expected one of {accepted}"
        )
    return spellings[value]


def spelled_call(
    name: str, argument: str, position: int, spellings: dict, args: tuple, kwargs: dict
) -> tuple:
    """``args`` (and ``kwargs``, changed in place) with a spelled ``argument`` given at
    ``position`` (-1: keyword-only) or by name turned into the schema's value, for a name of
    several overloads."""
    if 0 <= position < len(args):
        return args[:position] + (spelled(name, argument, args[position], spellings),) + args[position + 1 :]
    if argument in kwargs:
        kwargs[argument] = spelled(name, argument, kwargs[argument], spellings)
    return args


def _number(v) -> bool:
    return isinstance(v, bool | int | float | complex)


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _ints(v) -> bool:
    return isinstance(v, list | tuple | torch.Size) and all(_int(i) for i in v)


# What a value must be for each parameter kind (codegen/dest/python_api.py writes the kinds):
# torch's Python argument parser's rules, so a bool is no int and a number no Tensor.
_FITS = {
    "Tensor": lambda v: isinstance(v, torch.Tensor),
    "number": _number,
    "bool": lambda v: isinstance(v, bool),
    "int": _int,
    "float": lambda v: _number(v) and not isinstance(v, complex | bool),
    "ints": _ints,
    "ints1": lambda v: _int(v) or _ints(v),  # int[1]: one int stands for a list of one
    "tensors": lambda v: isinstance(v, list | tuple) and all(isinstance(t, torch.Tensor) for t in v),
    "dtype": lambda v: isinstance(v, torch.dtype),
    "str": lambda v: isinstance(v, str),
    "any": lambda v: True,
}


def _fits(params, args, kwargs) -> bool:
    """Whether the call binds to one overload's parameters: (name, kind, optional, has default,
    keyword-only) each."""
    if len(args) > sum(1 for p in params if not p[4]):
        return False
    names = {p[0] for p in params}
    if any(k not in names for k in kwargs):
        return False
    for i, (name, kind, optional, has_default, kwarg_only) in enumerate(params):
        if not kwarg_only and i < len(args):
            if name in kwargs:
                return False
            v = args[i]
        elif name in kwargs:
            v = kwargs[name]
        else:
            if not has_default:
                return False
            continue
        if not ((optional and v is None) or _FITS[kind](v)):
            return False
    return True


_PICKED: dict = {}


def pick(name: str, overloads, args, kwargs, number_self: bool = False):
    """The overload of several a call binds to, in the manifest's order, as torch's Python layer
    picks among an operator's overloads; ``overloads``: (OpOverload, writes out=, parameters).
    Returns it (in eager mode a functional or inplace one as its C++ callable), whether it writes
    out=, and the positional arguments to call it with: with
    ``number_self`` (torch.add(2, x)), a number for the first Tensor becomes a 0-dim tensor.

    torch.ops' own packets pick by the JIT's looser rules (False binds to an int[] dim), and a
    packet left in a torch.compile graph is resolved again there, so <package>.* resolves here
    and calls the OpOverload. Eager calls cache the pick per argument types.
    """
    if _compiling():  # traced once per graph: no cache to guard on
        if torch.compiler.is_exporting():
            args = _finite_for_export(overloads, args, kwargs)
        picked = _first_fit(name, overloads, args, kwargs, number_self)
    else:
        key = _key(name, args, kwargs)
        picked = _PICKED.get(key)
        if picked is None:
            op, writes, wrap_self = _first_fit(name, overloads, args, kwargs, number_self)
            # A functional or inplace overload is called through its C++ callable (what
            # OpOverload.__call__ calls, one Python frame less); out= ones go through call().
            picked = (op if writes else op._op, writes, wrap_self)
            if len(_PICKED) > 4096:  # lists of many lengths (cat of 1..n tensors): keep it bounded
                _PICKED.clear()
            _PICKED[key] = picked
    op, writes, wrap_self = picked
    return op, writes, (_number_operand(args[0], args[1]), *args[1:]) if wrap_self else args


def _finite_for_export(overloads, args: tuple, kwargs: dict) -> tuple:
    """An infinite or NaN float for a number parameter, as a 0-dim tensor where an overload takes
    a Tensor there (where(mask, x, -inf): where.self, not where.ScalarOther), in an exported
    graph only. torch's export serializer writes such a float as the string "-Infinity", which
    AOTInductor's proxy executor reads as a JSON number for a custom op's float argument: the
    package fails to load ([json.exception.type_error.302], torch 2.11-2.13, oss_proxy_executor
    as_float). The 0-dim tensor promotes as the number would (_number_operand), so the result is
    the same; kwargs are updated in place."""
    other = next((a for a in args if isinstance(a, torch.Tensor)), None)
    swapped = {k: v for k, v in enumerate(args) if type(v) is float and not math.isfinite(v)} | {
        k: v for k, v in kwargs.items() if type(v) is float and not math.isfinite(v)
    }
    if other is None or not swapped:
        return args
    new_args = tuple(_number_operand(a, other) if i in swapped else a for i, a in enumerate(args))
    new_kwargs = {k: _number_operand(v, other) if k in swapped else v for k, v in kwargs.items()}
    if not any(_fits(params, new_args, new_kwargs) for _, _, params in overloads):
        return args  # no overload takes a tensor there: the number stays
    kwargs.update(new_kwargs)
    return new_args


def _key(name: str, args: tuple, kwargs: dict) -> tuple:
    """What a pick depends on: the types of the values and the keywords given, and of a list's
    elements (int[] or Tensor[]: sum(x, [0]) cost 4 us more than torch.sum before they were part
    of the key), flat (a list's element types end with None; keywords are strings, not types):
    0.3 us where a tuple of tuples took 0.76."""
    key = [name]
    for a in args:
        t = type(a)
        key.append(t)
        if t is list or t is tuple:
            key.extend(map(type, a))
            key.append(None)
    for k, a in kwargs.items():
        t = type(a)
        key.append(k)
        key.append(t)
        if t is list or t is tuple:
            key.extend(map(type, a))
            key.append(None)
    return tuple(key)


def _number_operand(number, other: torch.Tensor) -> torch.Tensor:
    """A number given for a Tensor, as a 0-dim CPU tensor that promotes with ``other`` as torch's
    wrapped number does: beside a tensor of its kind, of that kind's widest dtype (the number
    keeps its precision until the kernel casts it), else of the dtype the two give. Plain Python
    (torch.result_type is a graph break under torch.compile)."""
    kind = next(i for i, t in enumerate((bool, int, float, complex)) if isinstance(number, t))
    have = (
        0 if other.dtype == torch.bool else 3 if other.is_complex() else 2 if other.is_floating_point() else 1
    )
    if kind <= have:
        dtype = other.dtype if other.dim() == 0 else _WIDEST[have]
    elif kind == 3 and have == 2:  # a complex number and a real floating tensor: its complex dtype
        dtype = other.dtype.to_complex()
    else:
        dtype = torch.int64 if kind == 1 else torch.get_default_dtype()
        dtype = dtype.to_complex() if kind == 3 else dtype
    return torch.tensor(number, dtype=dtype)


_WIDEST = (torch.bool, torch.int64, torch.float64, torch.complex128)

# numpy's names of torch's parameters, which torch's Python layer takes for any function
_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}
# How torch's messages name what a parameter kind takes
_KIND_NAMES = {
    "Tensor": "Tensor",
    "number": "Number",
    "bool": "bool",
    "int": "int",
    "float": "float",
    "ints": "tuple of ints",
    "ints1": "tuple of ints",
    "tensors": "tuple of Tensors",
    "dtype": "torch.dtype",
    "str": "str",
}


def _raise_named(name: str, overloads, args, kwargs) -> None:
    """torch's TypeError for a call that binds to no overload because of one argument: a keyword
    no overload has, or a value that no overload takes at its position (a numpy array or a list
    for a Tensor) where every overload names that position alike; it names the argument, what it
    must be and what it is. Returns where no one argument is to blame (the caller lists the
    overloads, as torch does)."""
    names = {p[0] for _, _, params in overloads for p in params}
    for k in kwargs:
        if k not in names:
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
    for i, v in enumerate(args):
        at = [params[i] for _, _, params in overloads if i < len(params) and not params[i][4]]
        if len({p[0] for p in at}) != 1:
            continue  # the overloads name it differently: no one parameter to name
        if not any((optional and v is None) or _FITS[kind](v) for _, kind, optional, _, _ in at):
            kinds = " or ".join(dict.fromkeys(_KIND_NAMES.get(p[1], p[1]) for p in at))
            raise TypeError(
                f"{name}(): argument '{at[0][0]}' (position {i + 1}) must be {kinds}, not {_described(v)}"
            )


def _described(v) -> str:
    """A value's type as torch's messages give it: numpy.ndarray, list of [float]."""
    t = type(v)
    named = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"
    if isinstance(v, list | tuple) and v:
        return f"{named} of [{', '.join(dict.fromkeys(type(e).__name__ for e in v))}]"
    return named


def _first_fit(name: str, overloads, args, kwargs, number_self: bool = False):
    for op, writes, params in overloads:
        if _fits(params, args, kwargs):
            return op, writes, False
    if number_self and len(args) >= 2 and _number(args[0]) and isinstance(args[1], torch.Tensor):
        for op, writes, params in overloads:
            if params[0][1] == "Tensor" and _fits(params, (args[1], *args[1:]), kwargs):
                return op, writes, True
    _raise_named(name, overloads, args, kwargs)
    got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    expected = "\n  ".join(str(op._schema) for op, _, _ in overloads)
    raise TypeError(
        f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:"
        f"\n  {expected}"
    )
