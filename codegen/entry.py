"""One manifest entry (``- func:``), every key checked, into a NativeFunction.

The keys mean what they mean in PyTorch's native_functions.yaml; ``doc``, ``meta``, ``pointwise``,
``kernels``, ``tests`` and ``out_dtype`` are ours; ``derivatives`` is what PyTorch writes in
derivatives.yaml. Each problem is a SpecError naming the file,
the line of the offending key and the entry's schema.
"""

from __future__ import annotations

import dataclasses

from structgen.codegen import composite, kernel_keys, python_names, spellings
from structgen.codegen.api.names import (
    CPP_KEYWORDS,
)
from structgen.codegen.autograd.formulas import parse_derivatives
from structgen.codegen.conformance import parse_tests
from structgen.codegen.entry_checks import check_entry, key_error
from structgen.codegen.errors import SpecError
from structgen.codegen.load import LineDict
from structgen.codegen.model.composite import Composite
from structgen.codegen.model.kernels import MultiKernel
from structgen.codegen.model.native import DispatchKey, Location, NativeFunction, Precomputed
from structgen.codegen.model.rule import Rule
from structgen.codegen.model.schema import (
    Argument,
    FunctionSchema,
    ListType,
    OperatorName,
    SchemaSyntaxError,
)
from structgen.codegen.multi_kernel import parse_kernels
from structgen.codegen.pointwise.model import elementwise_defaults, parse_pointwise
from structgen.codegen.rules.check import RuleError, check_tuning
from structgen.codegen.rules.model import parse_rule

# Keys of PyTorch's manifest that the generator implements, plus its own additions.
SUPPORTED_KEYS = (
    "func",
    "structured",
    "structured_delegate",
    "precomputed",
    "dispatch",
    "tags",
    "variants",
    "doc",
    "tests",
    "meta",
    "pointwise",
    "scan",
    "triangle",
    "kernels",
    "out_dtype",
    "derivatives",
    "scalar_of",
    "torch_differs",
    "composite",
    "spellings",
    "python_name",
)
# What an out= (or inplace self) of another dtype than the result's gets (`out_dtype:`):
# castable: the result is cast into it when torch.can_cast allows (TensorIterator's rule);
# exact: it must have the result dtype; dtype_argument: its dtype stands for a missing `dtype=`
# (torch.sum(x, out=t) sums in t's dtype), a given one must equal it.
OUT_DTYPE_RULES = ("castable", "exact", "dtype_argument")
# Keys PyTorch knows that the generator does not implement yet: named so the error can say so.
PYTORCH_ONLY_KEYS = (
    "structured_inherits",
    "autogen",
    "python_module",
    "category_override",
    "manual_kernel_registration",
    "manual_cpp_binding",
    "device_guard",
    "device_check",
    "cpp_no_default_args",
    "use_const_ref_for_mutable_tensors",
    "ufunc_inner_loop",
    "has_composite_implicit_autograd_kernel",
    "abstract",
)

# at::Tag values of torch 2.11..2.13 (torchgen/packaged/ATen/native/tags.yaml); a test keeps
# this list in step with the installed torch. "inplace" and "out" (torch 2.12+) are named only so
# the error can say that the generator does not use them: written overloads get Functionalize kernels
# instead (csrc/runtime/functionalize.cpp), which torch.compile needs on every torch version.
KNOWN_TAGS = (
    "inplace_view",
    "pt2_compliant_tag",
    "view_copy",
    "dynamic_output_shape",
    "data_dependent_output",
    "generated",
    "nondeterministic_seeded",
    "nondeterministic_bitwise",
    "needs_exact_strides",
    "needs_contiguous_strides",
    "needs_fixed_stride_order",
    "flexible_layout",
    "maybe_aliasing_or_mutating",
    "core",
    "pointwise",
    "reduction",
    "cudagraph_unsafe",
    "inplace",
    "out",
)


# ---------------------------------------------------------------------------------------------
# Single entries


_err = key_error


def _parse_precomputed(path: str, entry: LineDict, op: str, schema: FunctionSchema) -> Precomputed | None:
    raw = entry.get("precomputed")
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise _err(
            path,
            entry,
            "precomputed",
            op,
            "'precomputed' must be a list of strings",
            "write e.g. '- dim -> int[] reduced_dims = dims(self, dim)' or '- bool is_contiguous'",
        )
    arg_names = {a.name for a in schema.arguments.all}
    replace: list[tuple[str, tuple[Argument, ...]]] = []
    add: list[Argument] = []
    rules: list[tuple[str, str]] = []
    for item in raw:
        item, assign, rule = item.partition("=")  # a declaration has no default, so no '='
        lhs, arrow, rhs = item.partition("->")
        try:
            if assign:
                declared = _parse_arg_list((rhs if arrow else lhs).strip())
                if len(declared) != 1:
                    raise SchemaSyntaxError(
                        f"'{item.strip()} = {rule.strip()}' gives one rule to several values"
                    )
                rules.append((declared[0].name, rule.strip()))
            if arrow:
                name = lhs.strip()
                if name not in arg_names:
                    raise _err(
                        path,
                        entry,
                        "precomputed",
                        op,
                        f"precomputed replaces '{name}', which is not an argument",
                        f"use one of: {', '.join(sorted(arg_names))}",
                    )
                replace.append((name, _parse_arg_list(rhs.strip())))
            else:
                add.extend(_parse_arg_list(item.strip()))
        except SchemaSyntaxError as e:
            raise _err(
                path,
                entry,
                "precomputed",
                op,
                f"bad precomputed value '{item}': {e}",
                "write values as '<type> <name>', e.g. 'int[] reduced_dims', each with its rule after '='",
            ) from None
    return Precomputed(tuple(replace), tuple(add), tuple(rules))


def _parse_arg_list(text: str) -> tuple[Argument, ...]:
    args = []
    for part in text.split(","):
        arg = Argument.parse(part.strip())
        if arg.default is not None:
            raise SchemaSyntaxError(f"'{part.strip()}' is not '<type> <name>'")
        args.append(arg)
    return tuple(args)


def _parse_dispatch(
    path: str, entry: LineDict, op: str, schema: FunctionSchema
) -> tuple[tuple[DispatchKey, str], ...]:
    """``dispatch: [CPU, CUDA]``: kernels named ``<overload>_cpu``, ``<overload>_cuda`` (the
    out= overload's unambiguous name); or PyTorch's mapping of keys to kernel names."""
    raw = entry.get("dispatch")
    if raw is None:
        return ()
    if isinstance(raw, list) and all(isinstance(k, str) for k in raw):
        raw = {k: f"{schema.name.unambiguous}_{k.strip().lower()}" for k in raw}
    if not isinstance(raw, dict):
        raise _err(
            path,
            entry,
            "dispatch",
            op,
            "'dispatch' must list dispatch keys or map them to kernel names",
            "write e.g. 'dispatch: [CPU, CUDA]' (kernels <overload>_cpu, <overload>_cuda) or "
            "'dispatch: {CPU: my_kernel}'",
        )
    pairs: list[tuple[DispatchKey, str]] = []
    for keys, kernel in raw.items():
        for key in str(keys).split(","):  # PyTorch's "CPU, CUDA: kernel" shorthand
            key = key.strip()
            try:
                dk = DispatchKey(key)
            except ValueError:
                raise _err(
                    path,
                    entry,
                    "dispatch",
                    op,
                    f"unknown dispatch key '{key}'",
                    f"use one of: {', '.join(k.value for k in DispatchKey)}",
                ) from None
            keyword = isinstance(kernel, str) and kernel in CPP_KEYWORDS
            if not isinstance(kernel, str) or not kernel.isidentifier() or keyword:
                raise _err(
                    path,
                    entry,
                    "dispatch",
                    op,
                    f"kernel name for {key} must be a C++ identifier, got {kernel!r}"
                    + (" (a C++ keyword)" if keyword else ""),
                    "name the function defined in csrc/, e.g. 'add_out_cpu'",
                )
            if dk in dict(pairs):
                raise _err(
                    path,
                    entry,
                    "dispatch",
                    op,
                    f"dispatch key '{key}' is given twice",
                    "keep one kernel per dispatch key",
                )
            pairs.append((dk, kernel))
    return tuple(pairs)


def _parse_func(path: str, entry: LineDict) -> tuple[str, FunctionSchema]:
    """Every key known (or PyTorch's, refused by name), and the schema of ``func``."""
    raw_func = entry.get("func")
    op = raw_func if isinstance(raw_func, str) else None
    for key in entry:
        if key in SUPPORTED_KEYS:
            continue
        if key in PYTORCH_ONLY_KEYS:
            raise _err(
                path,
                entry,
                key,
                op,
                f"'{key}' is a PyTorch key that the generator does not support",
                "remove it",
            )
        raise _err(path, entry, key, op, f"unknown key '{key}'", f"use only: {', '.join(SUPPORTED_KEYS)}")
    if raw_func is None:
        raise _err(
            path, entry, None, None, "entry has no 'func'", "add 'func: name.overload(args) -> returns'"
        )
    if not isinstance(raw_func, str):
        raise _err(
            path,
            entry,
            "func",
            None,
            "'func' must be a schema string",
            "write e.g. 'func: neg(Tensor self) -> Tensor'",
        )
    try:
        return raw_func, FunctionSchema.parse(raw_func)
    except SchemaSyntaxError as e:
        raise _err(
            path,
            entry,
            "func",
            op,
            f"invalid schema: {e}",
            "follow PyTorch's schema syntax (see native_functions.yaml in PyTorch)",
        ) from None


def _parse_structured(path: str, entry: LineDict, op: str) -> tuple[bool, OperatorName | None]:
    """``structured`` and ``structured_delegate``."""
    structured = entry.get("structured", False)
    if not isinstance(structured, bool):
        raise _err(
            path,
            entry,
            "structured",
            op,
            f"'structured' must be true or false, got {structured!r}",
            "write 'structured: True'",
        )
    delegate_raw = entry.get("structured_delegate")
    if delegate_raw is None:
        return structured, None
    try:
        return structured, OperatorName.parse(str(delegate_raw))
    except SchemaSyntaxError:
        raise _err(
            path,
            entry,
            "structured_delegate",
            op,
            f"'structured_delegate: {delegate_raw}' is not an operator name",
            "name the out= overload, e.g. 'structured_delegate: add.out'",
        ) from None


def _parse_tags(path: str, entry: LineDict, op: str) -> list[str]:
    """``tags`` (torch's), and ``variants``, which may only say function."""
    tags = entry.get("tags", [])
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.split(",")]
    if not isinstance(tags, list):
        raise _err(path, entry, "tags", op, "'tags' must be a list", "write e.g. 'tags: [pointwise]'")
    for tag in tags:
        if tag not in KNOWN_TAGS:
            raise _err(
                path, entry, "tags", op, f"unknown tag '{tag}'", f"use torch's tags: {', '.join(KNOWN_TAGS)}"
            )
    if any(t in ("inplace", "out") for t in tags):
        raise _err(
            path,
            entry,
            "tags",
            op,
            "tags 'inplace' and 'out' are not used: the schema says which arguments are written",
            "remove them from 'tags'",
        )
    variants = entry.get("variants", "function")
    if variants != "function":
        raise _err(
            path,
            entry,
            "variants",
            op,
            f"variants '{variants}' is not supported",
            "generated ops are functions only; write 'variants: function' or omit it",
        )
    return tags


def _parse_doc(path: str, entry: LineDict, op: str) -> str:
    doc = entry.get("doc", "")
    if not isinstance(doc, str):
        raise _err(path, entry, "doc", op, "'doc' must be a string", "write the docstring as text")
    control = next((c for c in doc if (c < " " and c not in "\n\t") or c == "\x7f"), None)
    if control is not None:
        raise _err(
            path,
            entry,
            "doc",
            op,
            f"'doc' contains the control character {control!r}",
            "remove it (a docstring may hold newlines and tabs)",
        )
    return doc


def _pointwise_dispatch(
    path: str, entry: LineDict, op: str, schema: FunctionSchema, structured: bool, dispatch
) -> tuple[tuple[DispatchKey, str], ...]:
    """A pointwise op's kernels: generated from its formula, on the structured out= overload."""
    if not structured:
        raise _err(
            path,
            entry,
            "pointwise",
            op,
            "'pointwise' needs 'structured: True'",
            "put the formula on the structured out= overload",
        )
    if dispatch:
        raise _err(
            path,
            entry,
            "dispatch",
            op,
            "the kernels of a pointwise op are generated from its formula",
            "remove 'dispatch'",
        )
    if entry.get("meta") == "custom":
        raise _err(
            path,
            entry,
            "meta",
            op,
            "a pointwise op's meta function comes from its rule",
            "remove 'meta: custom' (the elementwise defaults apply) or give a rule",
        )
    return _generated_impls(schema)


def _generated_impls(schema: FunctionSchema) -> tuple[tuple[DispatchKey, str], ...]:
    """The CPU and CUDA impls the generator writes (a pointwise formula's, a scan's)."""
    kernel = schema.name.unambiguous
    return ((DispatchKey.CPU, f"{kernel}_cpu"), (DispatchKey.CUDA, f"{kernel}_cuda"))


def _parse_meta(
    path: str,
    entry: LineDict,
    op: str,
    schema: FunctionSchema,
    structured: bool,
    precomputed: Precomputed | None,
) -> tuple[Rule | None, bool]:
    """The rule of ``meta:`` (a pointwise op's defaults where it is left out), and whether the
    meta function is hand-written (``meta: custom``)."""
    defaults = elementwise_defaults(schema, entry.line_of("pointwise")) if "pointwise" in entry else None
    if "meta" not in entry and defaults is None:
        return None, False
    if not structured:
        raise _err(
            path,
            entry,
            "meta",
            op,
            "'meta' needs 'structured: True'",
            "move the meta rule to the structured out= overload",
        )
    rules = dict(precomputed.rules) if precomputed else {}
    declared = (
        tuple((a.name, str(a.type), rules.get(a.name)) for a in precomputed.all_values) if precomputed else ()
    )
    rule = parse_rule(path, entry, op, schema, declared, defaults)
    if rule is None and rules:
        raise _err(
            path,
            entry,
            "precomputed",
            op,
            f"precomputed value '{next(iter(rules))}' has a rule, but the meta function is hand-written "
            "(meta: custom), which computes it",
            "remove the '= ...' rule",
        )
    return rule, rule is None


def parse_entry(path: str, entry: LineDict) -> NativeFunction:
    raw_func, schema = _parse_func(path, entry)
    structured, delegate = _parse_structured(path, entry, raw_func)
    tags = _parse_tags(path, entry, raw_func)
    doc = _parse_doc(path, entry, raw_func)
    precomputed = _parse_precomputed(path, entry, raw_func, schema)
    dispatch = _parse_dispatch(path, entry, raw_func, schema)
    if "pointwise" in entry:
        dispatch = _pointwise_dispatch(path, entry, raw_func, schema, structured, dispatch)
    rule, custom = _parse_meta(path, entry, raw_func, schema, structured, precomputed)
    if (runtime_kernel := kernel_keys.parse(path, entry, raw_func, schema, rule, precomputed)) is not None:
        dispatch = _generated_impls(schema)
    fn = NativeFunction(
        func=schema,
        loc=Location(path, entry.line),
        structured=structured,
        structured_delegate=delegate,
        precomputed=precomputed,
        dispatch=dispatch,
        tags=tuple(tags),
        doc=doc.strip(),
        tests=parse_tests(path, entry, raw_func, {a.name for a in schema.arguments.all}),
        rule=rule,
        meta_custom=custom,
        pointwise=(
            parse_pointwise(path, entry, raw_func, schema, rule) if "pointwise" in entry and rule else None
        ),
        runtime_kernel=runtime_kernel,
        kernels=_parse_kernels(path, entry, raw_func, schema, rule, precomputed, dispatch, structured),
        out_dtype=_parse_out_dtype(path, entry, raw_func, schema, structured, tuple(tags)),
        derivatives=parse_derivatives(path, entry, raw_func, schema),
        scalar_of=OperatorName.parse(str(entry["scalar_of"])) if "scalar_of" in entry else None,
        torch_differs=_parse_torch_differs(path, entry, raw_func, schema),
        composite=_parse_composite(path, entry, raw_func),
        spellings=spellings.parse(path, entry, raw_func, schema),
        python_name=python_names.parse(path, entry, raw_func),
    )
    check_entry(path, entry, fn)
    return fn


def _parse_composite(path: str, entry: LineDict, op: str) -> tuple[Composite, ...] | None:
    raw = entry.get("composite")
    if raw is None:
        return None
    for key in (
        "structured",
        "structured_delegate",
        "dispatch",
        "pointwise",
        "meta",
        "kernels",
        "derivatives",
    ):
        if key in entry:
            raise _err(
                path,
                entry,
                key,
                op,
                f"'{key}' does not go with 'composite' (the target's kernels and derivatives serve the call)",
                f"remove '{key}'",
            )
    try:
        return composite.parse_cases(raw)
    except composite.CompositeError as e:
        raise _err(path, entry, "composite", op, f"composite: {e.problem}", e.fix) from None


def _parse_torch_differs(
    path: str, entry: LineDict, op: str, schema: FunctionSchema
) -> tuple[tuple[str, str], ...]:
    """`torch_differs: {overload: why}`: PyTorch overloads of this op that the project lacks or
    declares with another schema, each with its reason (tests/codegen/test_torch_parity.py)."""
    raw = entry.get("torch_differs")
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise _err(
            path, entry, "torch_differs", op, "'torch_differs' must be a mapping", "write {overload: reason}"
        )
    base = schema.name.name.base
    result = []
    for name, why in raw.items():
        try:
            parsed = OperatorName.parse(str(name))
        except SchemaSyntaxError:
            parsed = None
        if parsed is None or parsed.name.base != base:
            raise _err(
                path,
                entry,
                "torch_differs",
                op,
                f"torch_differs: '{name}' is not an overload of '{base}'",
                f"name torch's overloads of {base} (e.g. {base}.out)",
            )
        if not isinstance(why, str) or not why.strip():
            raise _err(
                path,
                entry,
                "torch_differs",
                op,
                f"torch_differs: '{name}' has no reason",
                "say why the op differs from torch there",
            )
        result.append((str(name), why.strip()))
    return tuple(result)


def _parse_out_dtype(
    path: str, entry: LineDict, op: str, schema: FunctionSchema, structured: bool, tags: tuple[str, ...]
) -> str:
    """Default: TensorIterator's castable outs for pointwise and reduction ops, exact elsewhere
    (torch's mm, gather, softmax, pooling, ... demand their own result dtype)."""
    if "out_dtype" not in entry:
        return "castable" if {"pointwise", "reduction"} & set(tags) else "exact"
    rule = entry["out_dtype"]
    if not structured:
        raise _err(
            path,
            entry,
            "out_dtype",
            op,
            "'out_dtype' needs 'structured: True'",
            "put it on the structured out= overload",
        )
    if rule not in OUT_DTYPE_RULES:
        raise _err(
            path,
            entry,
            "out_dtype",
            op,
            f"unknown out_dtype {rule!r}",
            f"use one of: {', '.join(OUT_DTYPE_RULES)}",
        )
    if rule == "dtype_argument":
        if not any(a.name == "dtype" and str(a.type) == "ScalarType?" for a in schema.arguments.all):
            raise _err(
                path,
                entry,
                "out_dtype",
                op,
                "'out_dtype: dtype_argument' needs a 'ScalarType? dtype' argument",
                "add '*, ScalarType? dtype=None' to the schema, or use 'castable' or 'exact'",
            )
        if len(schema.arguments.out) != 1 or isinstance(schema.arguments.out[0].type, ListType):
            raise _err(
                path,
                entry,
                "out_dtype",
                op,
                "'out_dtype: dtype_argument' needs exactly one Tensor output",
                "use 'castable' or 'exact'",
            )
    return rule


def _parse_kernels(
    path: str,
    entry: LineDict,
    op: str,
    schema: FunctionSchema,
    rule: Rule | None,
    precomputed: Precomputed | None,
    dispatch: tuple[tuple[DispatchKey, str], ...],
    structured: bool,
) -> MultiKernel | None:
    if "kernels" not in entry:
        return None
    line = entry.line_of("kernels")
    if not structured or rule is None:
        raise SpecError(
            path,
            line,
            op,
            "'kernels' needs a structured op with a meta rule (its tuning key is "
            "written in the rule language)",
            "put 'kernels' on the structured out= overload, which needs 'meta:'",
        )
    if any(isinstance(o.type, ListType) for o in schema.arguments.out):
        raise SpecError(
            path, line, op, "'kernels' does not support Tensor(a!)[] outputs yet", "give the op one kernel"
        )
    written = [a.name for a in schema.arguments.non_out if a.is_write]
    if written:
        raise SpecError(
            path,
            line,
            op,
            f"'kernels' does not support ops that write inputs ({', '.join(written)}) yet: "
            "timing would need clones of them",
            "give the op one kernel",
        )
    mk = parse_kernels(
        path,
        entry,
        op,
        tuple(k.value for k, _ in dispatch if k is not DispatchKey.Meta),
        "pointwise" in entry,
    )
    replaced = {name for name, _ in precomputed.replace} if precomputed else set()
    values = tuple((a.name, str(a.type)) for a in precomputed.all_values) if precomputed else ()
    outs = tuple(o.name for o in schema.arguments.out)
    tuning = []
    try:
        for device, variants in mk.devices:
            conditions = tuple((v.when, v.line) for v in variants)
            tuning.append(
                (device, check_tuning(rule, replaced, values, outs, mk.key, conditions, mk.key_line))
            )
    except RuleError as e:
        raise SpecError(path, e.line or line, op, e.problem, e.fix) from None
    if any(v.kernel for _, variants in mk.devices for v in variants) and not mk.sources:
        raise SpecError(
            path,
            line,
            op,
            "'kernels' with hand-written variants needs 'sources': the files or folders under csrc/ "
            "their code is in (each variant's source hash, the autotune cache key, covers them)",
            "add e.g. 'sources: [ops/<family>]' (the family folder: cpu* files count for CPU "
            "variants, cuda* files for CUDA ones, the rest for both)",
        )
    return dataclasses.replace(mk, tuning=tuple(tuning))
