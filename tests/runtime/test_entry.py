"""structops.<name> as a C function (csrc/python/entry.cpp): every call it binds itself reaches
the overload the generated Python function reaches, with the same result or the same error;
every call it cannot decide goes to that function, so __torch_function__ still sees it."""

import inspect
import math
import pickle
import sys
import warnings

import pytest
import torch
from structgen import _dispatch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

import structops
from structops import _ops

FALLBACKS = {function.__name__: fallback for function, fallback in _dispatch._ENTRIES}
BOUND_KINDS = {"Tensor", "number", "bool", "int", "float", "ints", "ints1", "dtype", "str", "tensors"}

# One value of each parameter kind (structgen._dispatch._FITS), made fresh for every call.
VALUES = {
    "Tensor": lambda: torch.arange(1.0, 7.0).reshape(2, 3) / 7,
    "number": lambda: 2,
    "bool": lambda: True,
    "int": lambda: 1,
    "float": lambda: 0.5,
    "ints": lambda: [1],
    "ints1": lambda: (1,),
    "dtype": lambda: torch.float64,
    "str": lambda: "floor",
    "tensors": lambda: [torch.ones(2, 3), torch.zeros(2, 3)],
    "any": lambda: None,
}


class Reached(TorchDispatchMode):
    """The operators a call reaches in the dispatcher, in order."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func)
        return func(*args, **(kwargs or {}))


class Entered:
    """Whether a Python function's code ran (sys.setprofile sees its frame)."""

    def __init__(self, fn):
        self.code, self.count = fn.__code__, 0

    def _profile(self, frame, event, arg):
        if event == "call" and frame.f_code is self.code:
            self.count += 1

    def __enter__(self):
        self.previous = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc):
        sys.setprofile(self.previous)


def _calls(params):
    """Ways to call an overload: its required arguments positionally, every argument (positional
    ones positionally), and every argument by keyword."""
    required = [p for p in params if not p[3]]
    yield "required", [p for p in required if not p[4]], [p for p in required if p[4]]
    yield "all", [p for p in params if not p[4]], [p for p in params if p[4]]
    yield "keywords", [], list(params)


def _outcome(fn, positional, keyword):
    """What a call gives: ("ok", the operators it reached, its result) or ("error", type, text)."""
    args = [VALUES[p[1]]() if p[0] != "out" else torch.empty(0) for p in positional]
    kwargs = {p[0]: VALUES[p[1]]() if p[0] != "out" else torch.empty(0) for p in keyword}
    try:
        with Reached() as reached, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(0)  # a random op (dropout) draws the same bits through either binding
            result = fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return ("error", type(e), str(e))
    return ("ok", reached.ops, result)


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return (
            isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a.nan_to_num(), b.nan_to_num())
        )
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("name", sorted(FALLBACKS))
def test_an_entry_binds_as_the_python_function_does(name):
    """For each overload of each name, called three ways: the C entry and the generated Python
    function reach the same operators and give the same result or raise the same error; a call
    whose overload takes only kinds the entry converts never runs the Python function."""
    function, fallback = getattr(structops, name), FALLBACKS[name]
    assert type(function).__name__ == "builtin_function_or_method"
    for _, _, params in getattr(_ops, f"_{name}_overloads"):
        for how, positional, keyword in _calls(params):
            with Entered(fallback) as entered:
                ours = _outcome(function, positional, keyword)
            theirs = _outcome(fallback, positional, keyword)
            where = f"{name}({how}: {[p[0] for p in positional]}, {[p[0] for p in keyword]})"
            assert ours[:2] == theirs[:2] and _same(ours[2], theirs[2]), f"{where}: {ours} != {theirs}"
            given = positional + keyword
            if ours[0] == "ok" and all(p[1] in BOUND_KINDS for p in given):
                assert entered.count == 0, f"{where} ran the Python function"


def test_what_the_entry_leaves_to_the_python_function():
    """A torch function mode, a subclass with __torch_function__ (alone or in a list of tensors)
    and a number for a Tensor go to the Python function; a Parameter does not (it has no
    __torch_function__), and neither do out=None and a list of plain tensors."""
    x, y = torch.randn(2, 3), torch.randn(2, 3)

    class Seen(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.funcs = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.funcs.append(func)
            return func(*args, **(kwargs or {}))

    with Seen() as seen:
        assert torch.equal(structops.add(x, y), x + y)
    assert torch.ops.structops.add.Tensor in seen.funcs

    seen_by_subclass = []

    class Logged(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen_by_subclass.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    structops.mul(x.as_subclass(Logged), y)
    assert torch.ops.structops.mul.Tensor in seen_by_subclass
    structops.cat((x, y.as_subclass(Logged)))
    assert torch.ops.structops.cat.default in seen_by_subclass

    pieces = [torch.empty(1, 3), torch.empty(1, 3)]
    for name, call, python in [
        ("add", lambda: structops.add(2, x), True),
        ("cat", lambda: structops.cat([x, y]), False),
        ("cat", lambda: structops.cat((x, y), out=torch.empty(4, 3)), False),
        ("split_with_sizes_copy", lambda: structops.split_with_sizes_copy(x, [1, 1], out=pieces), False),
        ("add", lambda: structops.add(torch.nn.Parameter(x), y), False),
        ("add", lambda: structops.add(x, y, out=None), False),
        ("sum", lambda: structops.sum(x, 1, dtype=torch.float64), False),
    ]:
        with Entered(FALLBACKS[name]) as entered:
            call()
        assert (entered.count > 0) == python, inspect.getsource(call)


def test_an_entry_reads_numbers_as_torch_does():
    """bool, int, float and complex numbers keep their kind (a Scalar's type decides promotion);
    an int beyond int64 raises torch's OverflowError."""
    x, f = torch.tensor([1, 2], dtype=torch.int32), torch.tensor([0.5, 2.0], dtype=torch.bfloat16)
    for number in (True, 3, 2.5, 1j, math.inf):
        for t in (x, f):
            got, expected = structops.mul(t, number), torch.mul(t, number)
            assert got.dtype == expected.dtype and torch.equal(got, expected), (t.dtype, number)
        if not isinstance(number, bool | complex):
            assert torch.equal(structops.add(f, f, alpha=number), torch.add(f, f, alpha=number)), number
    with pytest.raises(OverflowError):
        torch.add(x, x, alpha=2**70)
    with pytest.raises(OverflowError):
        structops.add(x, x, alpha=2**70)


def test_an_entry_raises_torch_errors_and_warnings_at_the_callers_line():
    """A C++ error keeps torch's exception type; a C++ warning (the out= resize) is a Python
    warning attributed to the line that called structops."""
    with pytest.raises(IndexError, match="dim 3 is out of range"):
        structops.sum(torch.ones(2), 3)
    with pytest.raises(
        TypeError, match=r"add\(\): argument 'other' \(position 2\) must be Tensor or Number, not str"
    ):
        structops.add(torch.ones(2), "x")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1
        structops.add(torch.ones(2), torch.ones(2), out=torch.empty(3))
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def test_an_entry_is_a_function_users_can_inspect_and_pickle():
    """Its signature is the Python function's (of several overloads: the merged one, as below),
    its docstring too; it pickles by name (torch.add does); it keeps no Python frame between the
    caller and torch's error."""
    for name, fallback in FALLBACKS.items():
        function = getattr(structops, name)
        if str(inspect.signature(fallback)) != "(*args, **kwargs)":
            assert inspect.signature(function) == inspect.signature(fallback), name
        assert fallback.__doc__ in function.__doc__ and function.__module__ == "structops", name
        assert pickle.loads(pickle.dumps(function)) is function, name


def test_compile_traces_the_python_function_in_place_of_an_entry():
    """Dynamo cannot see inside a C function: with the Python function registered in its place,
    a compiled function of entries is one graph (fullgraph=True raises on any break)."""

    def f(x, y):
        return structops.sum(structops.add(x, y, alpha=2), 0) + structops.exp(x)

    x, y = torch.randn(3, 4), torch.randn(4)
    compiled = torch.compile(f, fullgraph=True, backend="eager")
    torch.testing.assert_close(compiled(x, y), f(x, y))


def test_signatures_say_the_parameters():
    """inspect.signature (and IDEs) see each function's parameters: one overload's as its schema
    says them; several overloads' merged, each once, as torch's documentation writes them."""
    assert str(inspect.signature(structops.amax)) == "(self, dim=(), keepdim=False, *, out=None)"
    assert str(inspect.signature(structops.add)) == "(self, other, alpha=1, *, out=None)"
    assert str(inspect.signature(structops.sum)) == "(self, dim=None, keepdim=False, *, dtype=None, out=None)"
    # var(self, unbiased) beside var(self, dim, unbiased, keepdim): no one list of positions
    assert str(inspect.signature(structops.var)) == "(*args, **kwargs)"
