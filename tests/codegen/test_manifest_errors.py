"""Malformed manifests: each stops with file:line: op: problem — fix, exit status 2, no output."""

import textwrap

import pytest
import yaml
from structgen.codegen.errors import SpecError
from structgen.codegen.gen import generate
from structgen.codegen.manifest import load_manifest

from tests.codegen.manifest_helpers import load_error, run_cli, write_manifest

NEG_OUT = (
    "- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  dispatch: {CPU:"
    " neg_out_cpu}\n  meta: custom\n"
)
ADD_OUT = (
    "- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)\n "
    " structured: True\n  dispatch: {CPU: add_out_cpu}\n  meta: custom\n"
)

CASES = {
    "unknown_key": (
        "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: neg_cpu}\n  colour: red\n",
        (
            "native_functions.yaml:3: neg(Tensor self) -> Tensor: unknown key 'colour' — use only: func,"
            " structured, structured_delegate, precomputed, dispatch, tags, variants, doc, tests, meta,"
            " pointwise, scan, triangle, kernels, out_dtype, derivatives, scalar_of, torch_differs,"
            " composite, spellings, python_name"
        ),
    ),
    "pytorch_only_key": (
        "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: neg_cpu}\n  autogen: neg.out\n",
        (
            "native_functions.yaml:3: neg(Tensor self) -> Tensor: 'autogen' is a PyTorch key that the"
            " generator does not support — remove it"
        ),
    ),
    "duplicate_key": (
        "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n  dispatch: {CPU: b}\n",
        "native_functions.yaml:3: duplicate key 'dispatch' (first given on line 2) — keep one of the two",
    ),
    "duplicate_schema": (
        (
            "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n- func: neg(Tensor self) -> Tensor\n "
            " dispatch: {CPU: b}\n"
        ),
        (
            "native_functions.yaml:3: neg(Tensor self) -> Tensor: operator 'neg' is declared twice (first on"
            " line 1) — give the overloads distinct names or remove one"
        ),
    ),
    "delegate_to_missing": (
        NEG_OUT + "- func: neg(Tensor self) -> Tensor\n  structured_delegate: neg.outt\n",
        (
            "native_functions.yaml:5: neg(Tensor self) -> Tensor: structured_delegate 'neg.outt' names no"
            " out= overload — name one of: neg.out"
        ),
    ),
    "delegate_to_functional": (
        (
            "- func: neg.x(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n- func: neg(Tensor self) -> Tensor\n"
            "  structured_delegate: neg.x\n"
        ),
        (
            "native_functions.yaml:3: neg(Tensor self) -> Tensor: structured_delegate 'neg.x' names no out="
            " overload — name one of: (none declared)"
        ),
    ),
    "delegate_not_structured": (
        (
            "- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch: {CPU: a}\n"
            "- func: neg(Tensor self) -> Tensor\n  structured_delegate: neg.out\n"
        ),
        (
            "native_functions.yaml:3: neg(Tensor self) -> Tensor: structured_delegate 'neg.out' is not"
            " structured — add 'structured: True' to neg.out"
        ),
    ),
    "out_without_out_argument": (
        "- func: add.out(Tensor self, Tensor other) -> Tensor\n  structured: True\n  dispatch: {CPU: a}\n",
        (
            "native_functions.yaml:1: add.out(Tensor self, Tensor other) -> Tensor: an out= overload must"
            " take its outputs as keyword-only 'Tensor(a!)' arguments — end the arguments with ', *,"
            " Tensor(a!) out' and return 'Tensor(a!)'"
        ),
    ),
    "out_not_returned": (
        (
            "- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor\n  structured: True\n  dispatch: {CPU:"
            " a}\n"
        ),
        (
            "native_functions.yaml:1: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor: an out= overload"
            " must return its out arguments — write '-> Tensor(a!)'"
        ),
    ),
    "inplace_self_not_written": (
        NEG_OUT + "- func: neg_(Tensor self) -> Tensor\n  structured_delegate: neg.out\n",
        (
            "native_functions.yaml:5: neg_(Tensor self) -> Tensor: inplace overload 'neg_' must take"
            " 'Tensor(a!) self' — annotate self as written-to: 'Tensor(a!) self'"
        ),
    ),
    "inplace_returns_other": (
        NEG_OUT + "- func: neg_(Tensor(a!) self) -> Tensor\n  structured_delegate: neg.out\n",
        (
            "native_functions.yaml:5: neg_(Tensor(a!) self) -> Tensor: an inplace overload must return self —"
            " write '-> Tensor(a!)'"
        ),
    ),
    "unknown_dispatch_key": (
        "- func: neg(Tensor self) -> Tensor\n  dispatch: {XLA: neg_xla}\n",
        (
            "native_functions.yaml:2: neg(Tensor self) -> Tensor: unknown dispatch key 'XLA' — use one of:"
            " CPU, CUDA, Meta"
        ),
    ),
    "kernel_name_not_identifier": (
        "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: neg-cpu}\n",
        (
            "native_functions.yaml:2: neg(Tensor self) -> Tensor: kernel name for CPU must be a C++"
            " identifier, got 'neg-cpu' — name the function defined in csrc/, e.g. 'add_out_cpu'"
        ),
    ),
    "structured_with_meta_kernel": (
        (
            "- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  dispatch:"
            " {CPU: a, Meta: b}\n"
        ),
        (
            "native_functions.yaml:3: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!): the Meta kernel"
            " of a structured op is generated from its meta function — remove 'Meta' from dispatch"
        ),
    ),
    "structured_without_impl": (
        "- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n",
        (
            "native_functions.yaml:2: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!): a structured op"
            " needs an impl for CPU or CUDA — add e.g. 'dispatch: [CPU]' and define the impl 'structgen"
            " signature neg' prints in csrc/ops/<family>/cpu.cpp"
        ),
    ),
    "delegate_with_dispatch": (
        NEG_OUT
        + "- func: neg(Tensor self) -> Tensor\n  structured_delegate: neg.out\n  dispatch: {CPU: x}\n",
        (
            "native_functions.yaml:7: neg(Tensor self) -> Tensor: an entry with 'structured_delegate' gets"
            " its kernels from the delegate — remove 'dispatch' here"
        ),
    ),
    "no_kernel": (
        "- func: neg(Tensor self) -> Tensor\n  doc: negation\n",
        (
            "native_functions.yaml:1: neg(Tensor self) -> Tensor: entry has no kernel — add 'structured:"
            " True' + 'dispatch', 'structured_delegate: <op>.out', 'dispatch', or 'composite: <call>'"
        ),
    ),
    "unknown_type": (
        "- func: neg(Tensor self, Tensr other) -> Tensor\n  dispatch: {CPU: a}\n",
        (
            "native_functions.yaml:1: neg(Tensor self, Tensr other) -> Tensor: invalid schema: column 18:"
            " expected a known type (Tensor, int, SymInt, float, bool, str, Scalar, ...), found 'Tensr"
            " other)' — follow PyTorch's schema syntax (see native_functions.yaml in PyTorch)"
        ),
    ),
    "non_canonical_schema": (
        "- func: neg(Tensor  self)->Tensor\n  dispatch: {CPU: a}\n",
        (
            "native_functions.yaml:1: neg(Tensor  self)->Tensor: invalid schema: schema is not in canonical"
            " form; write it as 'neg(Tensor self) -> Tensor' — follow PyTorch's schema syntax (see"
            " native_functions.yaml in PyTorch)"
        ),
    ),
    "unknown_tag": (
        "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n  tags: [pointwize]\n",
        (
            "native_functions.yaml:3: neg(Tensor self) -> Tensor: unknown tag 'pointwize' — use torch's tags:"
            " inplace_view, pt2_compliant_tag, view_copy, dynamic_output_shape, data_dependent_output,"
            " generated, nondeterministic_seeded, nondeterministic_bitwise, needs_exact_strides,"
            " needs_contiguous_strides, needs_fixed_stride_order, flexible_layout,"
            " maybe_aliasing_or_mutating, core, pointwise, reduction, cudagraph_unsafe, inplace, out"
        ),
    ),
    "precomputed_unknown_argument": (
        (
            "- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  dispatch:"
            " {CPU: a}\n  precomputed:\n  - dim -> int dim\n"
        ),
        (
            "native_functions.yaml:4: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!): precomputed"
            " replaces 'dim', which is not an argument — use one of: out, self"
        ),
    ),
    "delegate_arguments_differ": (
        ADD_OUT
        + "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=2) -> Tensor\n  structured_delegate:"
        " add.out\n",
        (
            "native_functions.yaml:5: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=2) -> Tensor:"
            " arguments differ from the delegate's (Tensor self, Tensor other, Scalar alpha=1) — use the out="
            " overload's arguments without the out arguments"
        ),
    ),
    # A variant's schema the generated wrappers cannot express: each used to generate C++ that
    # g++ refuses (or that returns a reference to a local, or lies to torch about aliasing).
    "delegate_returns_not_a_tensor": (
        NEG_OUT + "- func: neg(Tensor self) -> int\n  structured_delegate: neg.out\n",
        (
            "native_functions.yaml:5: neg(Tensor self) -> int: returns 'int' where 'neg.out' writes"
            " 'Tensor(a!) out': a functional variant returns the new Tensor it allocates for each out"
            " argument — write '-> Tensor'"
        ),
    ),
    "delegate_returns_an_alias": (
        NEG_OUT + "- func: neg(Tensor self) -> Tensor(a)\n  structured_delegate: neg.out\n",
        (
            "native_functions.yaml:5: neg(Tensor self) -> Tensor(a): returns 'Tensor(a)' where 'neg.out'"
            " writes 'Tensor(a!) out': a functional variant returns the new Tensor it allocates for each"
            " out argument — write '-> Tensor'"
        ),
    ),
    "delegate_argument_annotated_as_a_view": (
        NEG_OUT + "- func: neg(Tensor(a) self) -> Tensor\n  structured_delegate: neg.out\n",
        (
            "native_functions.yaml:5: neg(Tensor(a) self) -> Tensor: argument 'Tensor(a) self' is 'Tensor"
            " self' in 'neg.out' — write 'Tensor self' (a structured op's variants return new tensors, not"
            " views)"
        ),
    ),
    "delegate_returns_one_wrong_of_two": (
        (
            "- func: amm.out(Tensor self, *, Tensor(a!) min, Tensor(b!) max) -> (Tensor(a!) min, Tensor(b!)"
            " max)\n  structured: True\n  dispatch: {CPU: a}\n  meta: custom\n"
            "- func: amm(Tensor self) -> (Tensor min, int max)\n  structured_delegate: amm.out\n"
        ),
        (
            "native_functions.yaml:5: amm(Tensor self) -> (Tensor min, int max): returns 'int max' where"
            " 'amm.out' writes 'Tensor(b!) max': a functional variant returns the new Tensor it allocates"
            " for each out argument — write '-> (Tensor min, Tensor max)'"
        ),
    ),
    "inplace_of_two_outputs": (
        (
            "- func: amm.out(Tensor self, *, Tensor(a!) min, Tensor(b!) max) -> (Tensor(a!) min, Tensor(b!)"
            " max)\n  structured: True\n  dispatch: {CPU: a}\n  meta: custom\n"
            "- func: amm_(Tensor(a!) self) -> Tensor(a!)\n  structured_delegate: amm.out\n"
        ),
        (
            "native_functions.yaml:5: amm_(Tensor(a!) self) -> Tensor(a!): an inplace variant writes the"
            " op's output into self, but 'amm.out' writes 2 (min, max) — remove the inplace variant"
        ),
    ),
    "inplace_self_not_first": (
        (
            "- func: sub.out(Tensor other, Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
            "  structured: True\n  dispatch: {CPU: a}\n  meta: custom\n"
            "- func: sub_(Tensor other, Tensor(a!) self) -> Tensor(a!)\n  structured_delegate: sub.out\n"
        ),
        (
            "native_functions.yaml:5: sub_(Tensor other, Tensor(a!) self) -> Tensor(a!): inplace overload"
            " 'sub_' must take self first, the tensor it writes — move 'self' to the front of the"
            " arguments (in the out= overload too)"
        ),
    ),
    "inplace_self_optional": (
        (
            "- func: neg.out(Tensor? self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
            "  dispatch: {CPU: a}\n  meta: custom\n"
            "- func: neg_(Tensor(a!)? self) -> Tensor(a!)?\n  structured_delegate: neg.out\n"
        ),
        (
            "native_functions.yaml:5: neg_(Tensor(a!)? self) -> Tensor(a!)?: inplace overload 'neg_' writes"
            " the structured op's output into self, which must be a Tensor, not a 'Tensor?' — make self a"
            " Tensor, or remove the inplace overload"
        ),
    ),
    "inplace_returns_another_type": (
        "- func: neg_(Tensor(a!)[] self) -> Tensor(a!)\n  dispatch: {CPU: a}\n",
        (
            "native_functions.yaml:1: neg_(Tensor(a!)[] self) -> Tensor(a!): an inplace overload must"
            " return self — write '-> Tensor(a!)[]'"
        ),
    ),
    "structured_out_optional": (
        (
            "- func: neg.out(Tensor self, *, Tensor(a!)? out) -> Tensor(a!)?\n  structured: True\n"
            "  dispatch: {CPU: a}\n  meta: custom\n"
        ),
        (
            "native_functions.yaml:1: neg.out(Tensor self, *, Tensor(a!)? out) -> Tensor(a!)?: out argument"
            " 'out' is a 'Tensor?': the generated wrappers write a Tensor per out argument, or one Tensor[]"
            " — write 'Tensor(a!) out'"
        ),
    ),
    "out_returns_another_type": (
        (
            "- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)[]\n  structured: True\n"
            "  dispatch: {CPU: a}\n  meta: custom\n"
        ),
        (
            "native_functions.yaml:1: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)[]: an out="
            " overload must return its out arguments — write '-> Tensor(a!)'"
        ),
    ),
    "list_out_functional_returns_alias": (
        (
            "- func: split.out(Tensor self, int[] sizes, *, Tensor(a!)[] out) -> ()\n  structured: True\n"
            "  dispatch: {CPU: a}\n  meta: custom\n"
            "- func: split(Tensor self, int[] sizes) -> Tensor(a)[]\n  structured_delegate: split.out\n"
        ),
        (
            "native_functions.yaml:5: split(Tensor self, int[] sizes) -> Tensor(a)[]: 'split.out' writes a"
            " Tensor(a!)[] output, so its variant must be functional and return 'Tensor[]' — write"
            " 'split(Tensor self, int[] sizes) -> Tensor[]' (no inplace variant)"
        ),
    ),
    # Names the generated autograd C++ gives an argument's saved copy and forward-mode tangent.
    "argument_named_like_a_saved_copy": (
        "- func: neg(Tensor self_, Tensor self) -> Tensor\n  dispatch: {CPU: a}\n",
        (
            "native_functions.yaml:1: neg(Tensor self_, Tensor self) -> Tensor: argument name 'self_' is the"
            " name the generated C++ gives a value of 'self' — rename the argument"
        ),
    ),
    "argument_named_like_a_tangent": (
        "- func: neg(Tensor self, Tensor self_t) -> Tensor\n  dispatch: {CPU: a}\n",
        (
            "native_functions.yaml:1: neg(Tensor self, Tensor self_t) -> Tensor: argument name 'self_t' is"
            " the name the generated C++ gives a value of 'self' — rename the argument"
        ),
    ),
    "delegate_base_name_differs": (
        NEG_OUT + "- func: abs(Tensor self) -> Tensor\n  structured_delegate: neg.out\n",
        (
            "native_functions.yaml:5: abs(Tensor self) -> Tensor: 'abs' cannot delegate to 'neg.out': base"
            " names differ — delegate to a 'abs.out' overload"
        ),
    ),
    "method_variant": (
        "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n  variants: function, method\n",
        (
            "native_functions.yaml:3: neg(Tensor self) -> Tensor: variants 'function, method' is not"
            " supported — generated ops are functions only; write 'variants: function' or omit it"
        ),
    ),
    "not_a_list": (
        "func: neg(Tensor self) -> Tensor\n",
        (
            "native_functions.yaml:1: the manifest must be a YAML list of entries — start each entry with '-"
            " func: ...'"
        ),
    ),
    "invalid_yaml": (
        "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n  tags: [core]]\n  doc: x\n",
        (
            "native_functions.yaml:3: invalid YAML: did not find expected key — fix the YAML syntax"
            if yaml.__with_libyaml__  # libyaml's words (codegen.load parses with it where PyYAML has it)
            else "native_functions.yaml:3: invalid YAML: expected <block end>, but found ']' — fix the YAML"
            " syntax"
        ),
    ),
    # The file ends inside a bracket or a quote: the line it opens on, not the end of the stream
    # (a line past the last).
    "invalid_yaml_unclosed_bracket": (
        "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a\n",
        (
            "native_functions.yaml:2: invalid YAML: did not find expected ',' or '}' while parsing a flow"
            " mapping — fix the YAML syntax: the file ends inside it"
            if yaml.__with_libyaml__
            else "native_functions.yaml:2: invalid YAML: expected ',' or '}', but got '<stream end>' while"
            " parsing a flow mapping — fix the YAML syntax: the file ends inside it"
        ),
    ),
    "invalid_yaml_unclosed_quote": (
        '- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n  doc: "negation\n\n',
        (
            "native_functions.yaml:3: invalid YAML: found unexpected end of stream while scanning a quoted"
            " scalar — fix the YAML syntax: the file ends inside it"
        ),
    ),
    "missing_func": (
        "- dispatch: {CPU: a}\n",
        "native_functions.yaml:1: entry has no 'func' — add 'func: name.overload(args) -> returns'",
    ),
    "two_functional_variants": (
        NEG_OUT + "- func: neg(Tensor self) -> Tensor\n  structured_delegate: neg.out\n"
        "- func: neg.again(Tensor self) -> Tensor\n  structured_delegate: neg.out\n",
        (
            "native_functions.yaml:7: neg.again(Tensor self) -> Tensor: 'neg.out' already has a functional"
            " variant ('neg', line 5) — keep one functional and one inplace variant per structured op"
        ),
    ),
    "out_dtype_unknown": (
        (
            "- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
            "  dispatch: {CPU: neg_out_cpu}\n  meta: {shape: {out: self}}\n  out_dtype: cast\n"
        ),
        (
            "native_functions.yaml:5: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!): unknown"
            " out_dtype 'cast' — use one of: castable, exact, dtype_argument"
        ),
    ),
    "out_dtype_without_dtype_argument": (
        (
            "- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
            "  dispatch: {CPU: neg_out_cpu}\n  meta: {shape: {out: self}}\n  out_dtype: dtype_argument\n"
        ),
        (
            "native_functions.yaml:5: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!): 'out_dtype:"
            " dtype_argument' needs a 'ScalarType? dtype' argument — add '*, ScalarType? dtype=None' to the"
            " schema, or use 'castable' or 'exact'"
        ),
    ),
    "out_dtype_unstructured": (
        "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: neg_cpu}\n  out_dtype: exact\n",
        (
            "native_functions.yaml:3: neg(Tensor self) -> Tensor: 'out_dtype' needs 'structured: True' — put"
            " it on the structured out= overload"
        ),
    ),
    "tests_unknown_key": (
        (
            "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n  tests: {reference: torch.neg,"
            " sample: 3}\n"
        ),
        (
            "native_functions.yaml:3: neg(Tensor self) -> Tensor: unknown tests key 'sample' — use only:"
            " reference, grad_reference, bits_reference, domain, args, dtypes, skip, cuda_skip, tolerance,"
            " extremes, errors, samples, scaffold, hostile, opinfo, vmap_loops"
        ),
    ),
    "tests_scaffold_not_a_bool": (
        (
            "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n  tests: {reference: torch.neg,"
            " scaffold: 1}\n"
        ),
        (
            "native_functions.yaml:3: neg(Tensor self) -> Tensor: 'tests.scaffold' must be true or false —"
            " remove it once the op is written"
        ),
    ),
    "tests_without_reference": (
        "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n  tests: {domain: positive}\n",
        (
            "native_functions.yaml:3: neg(Tensor self) -> Tensor: 'tests' needs a 'reference' — name a torch"
            " function, e.g. 'reference: torch.add'"
        ),
    ),
    "tests_unknown_dtype": (
        (
            "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n  tests: {reference: torch.neg,"
            " dtypes: [float]}\n"
        ),
        (
            "native_functions.yaml:3: neg(Tensor self) -> Tensor: unknown dtype 'float' in tests.dtypes — use"
            " one of: float32, float64, float16, bfloat16, complex64, int64, int32, int16, int8, uint8, bool"
        ),
    ),
    "tests_args_unknown_argument": (
        (
            "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n  tests: {reference: torch.neg, args:"
            " {alpha: [2]}}\n"
        ),
        (
            "native_functions.yaml:3: neg(Tensor self) -> Tensor: tests.args names 'alpha', which is not an"
            " argument — use one of: self"
        ),
    ),
    "tests_skip_without_reason": (
        (
            "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n  tests: {reference: torch.neg, skip:"
            " [bool]}\n"
        ),
        (
            "native_functions.yaml:3: neg(Tensor self) -> Tensor: 'tests.skip' must map each dtype to its"
            ' reason — write e.g. {bool: "not defined"}'
        ),
    ),
    "type_without_cpp_mapping": (
        "- func: neg(Tensor self, QScheme q) -> Tensor\n  dispatch: {CPU: a}\n",
        (
            "native_functions.yaml:1: neg(Tensor self, QScheme q) -> Tensor: type 'QScheme' has no C++"
            " mapping in the generator — use a type the generator maps to C++ (see codegen/api/cpp.py)"
        ),
    ),
    "list_out_returns_its_list": (
        (
            "- func: split.out(Tensor self, int[] sizes, *, Tensor(a!)[] out) -> Tensor(a!)[]\n  structured:"
            " True\n  dispatch: {CPU: a}\n  meta: custom\n"
        ),
        (
            "native_functions.yaml:1: split.out(Tensor self, int[] sizes, *, Tensor(a!)[] out) ->"
            " Tensor(a!)[]: an out= overload with a Tensor(a!)[] output returns nothing (PyTorch's"
            " convention) — write '-> ()'"
        ),
    ),
    "list_out_next_to_another_out": (
        (
            "- func: split.out(Tensor self, int[] sizes, *, Tensor(a!)[] out, Tensor(b!) rest) -> ()\n "
            " structured: True\n  dispatch: {CPU: a}\n  meta: custom\n"
        ),
        (
            "native_functions.yaml:1: split.out(Tensor self, int[] sizes, *, Tensor(a!)[] out, Tensor(b!)"
            " rest) -> (): a Tensor(a!)[] output must be the op's only output, got 2 outputs — split the op,"
            " or return the other results in the list"
        ),
    ),
    "list_out_functional_returns_tensor": (
        (
            "- func: split.out(Tensor self, int[] sizes, *, Tensor(a!)[] out) -> ()\n  structured: True\n"
            "  dispatch: {CPU: a}\n  meta: custom\n- func: split(Tensor self, int[] sizes) -> Tensor\n"
            "  structured_delegate: split.out\n"
        ),
        (
            "native_functions.yaml:5: split(Tensor self, int[] sizes) -> Tensor: 'split.out' writes a"
            " Tensor(a!)[] output, so its variant must be functional and return 'Tensor[]' — write"
            " 'split(Tensor self, int[] sizes) -> Tensor[]' (no inplace variant)"
        ),
    ),
    "dynamic_output_shape_with_rule": (
        (
            "- func: nz.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  dispatch:"
            " {CPU: a}\n  meta: {shape: {out: self}}\n  tags: [dynamic_output_shape]\n"
        ),
        (
            "native_functions.yaml:1: nz.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!): a"
            " 'dynamic_output_shape' op's output size depends on data, which a meta rule cannot compute —"
            " write 'meta: custom' (the hand-written meta function may read the data) and give the functional"
            " a fake impl (torch.library.register_fake) in the package's Python"
        ),
    ),
    "dynamic_output_shape_untagged_variant": (
        (
            "- func: nz.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  dispatch:"
            " {CPU: a}\n  meta: custom\n  tags: [dynamic_output_shape]\n- func: nz(Tensor self) -> Tensor\n "
            " structured_delegate: nz.out\n"
        ),
        (
            "native_functions.yaml:6: nz(Tensor self) -> Tensor: 'nz.out' is tagged dynamic_output_shape but"
            " this variant is not — add 'tags: [dynamic_output_shape]' to every variant of the op"
        ),
    ),
    "kernels_without_key": (
        (
            "- func: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
            '  dispatch: {CPU: mm_cpu}\n  meta: {shape: {self: "[n, k]", mat2: "[k, m]", out: "[n, m]"}}\n'
            "  kernels:\n    CPU:\n    - {name: a, kernel: a}\n    - {name: b, kernel: b}\n"
        ),
        (
            "native_functions.yaml:5: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!):"
            " 'kernels' needs a tuning 'key': a list of ints in the rule language — add e.g. 'key:"
            ' "[bucket_pow2(numel(out))]"\''
        ),
    ),
    "kernels_one_variant": (
        (
            "- func: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
            '  dispatch: {CPU: mm_cpu}\n  meta: {shape: {self: "[n, k]", mat2: "[k, m]", out: "[n, m]"}}\n'
            '  kernels:\n    key: "[n]"\n    CPU:\n    - {name: a, kernel: a}\n'
        ),
        (
            "native_functions.yaml:7: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!):"
            " kernels.CPU must list two or more variants — one kernel needs no 'kernels' key"
        ),
    ),
    "kernels_unknown_device": (
        (
            "- func: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
            '  dispatch: {CPU: mm_cpu}\n  meta: {shape: {self: "[n, k]", mat2: "[k, m]", out: "[n, m]"}}\n'
            '  kernels:\n    key: "[n]"\n    CUDA:\n    - {name: a, kernel: a}\n    - {name: b, kernel: b}\n'
        ),
        (
            "native_functions.yaml:7: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!):"
            " kernels.CUDA: the op has no CUDA impl to choose variants for — add a CUDA kernel to 'dispatch',"
            " or remove kernels.CUDA"
        ),
    ),
    "kernels_duplicate_name": (
        (
            "- func: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
            '  dispatch: {CPU: mm_cpu}\n  meta: {shape: {self: "[n, k]", mat2: "[k, m]", out: "[n, m]"}}\n'
            '  kernels:\n    key: "[n]"\n    CPU:\n    - {name: a, kernel: a}\n    - {name: a, kernel: b}\n'
        ),
        (
            "native_functions.yaml:7: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!):"
            " kernels.CPU: variant name 'a' is used twice — give each variant its own name"
        ),
    ),
    "kernels_unbound_key": (
        (
            "- func: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n "
            ' dispatch: {CPU: mm_cpu}\n  meta: {shape: {self: "[n, k]", mat2: "[k, m]", out: "[n, m]"}}\n '
            ' kernels:\n    key: "[bucket_pow2(q)]"\n    CPU:\n    - {name: a, kernel: a}\n    - {name: b,'
            " kernel: b}\n"
        ),
        (
            "native_functions.yaml:6: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!): 'q'"
            " is not bound: it is neither an argument nor a dim of a pattern — bind it in a pattern (e.g."
            " 'self: \"[..., q]\"') or use an argument"
        ),
    ),
    "kernels_condition_not_bool": (
        (
            "- func: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n "
            ' dispatch: {CPU: mm_cpu}\n  meta: {shape: {self: "[n, k]", mat2: "[k, m]", out: "[n, m]"}}\n '
            ' kernels:\n    key: "[n]"\n    CPU:\n    - {name: a, kernel: a, when: "numel(self)"}\n    -'
            " {name: b, kernel: b}\n"
        ),
        (
            "native_functions.yaml:8: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!): the"
            " condition 'numel(self)' must be a bool, got an int — test e.g. given(rounding_mode) or a"
            " comparison"
        ),
    ),
    "kernels_params_on_handwritten": (
        (
            "- func: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n "
            ' dispatch: {CPU: mm_cpu}\n  meta: {shape: {self: "[n, k]", mat2: "[k, m]", out: "[n, m]"}}\n '
            ' kernels:\n    key: "[n]"\n    CPU:\n    - {name: a, params: {grain: 4}}\n    - {name: b,'
            " kernel: b}\n"
        ),
        (
            "native_functions.yaml:8: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!):"
            " kernels.CPU.a: 'params' configure generated kernels; this op's kernels are hand-written — write"
            " a hook per variant ('kernel: <name>') and share code in C++"
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_manifest_message(tmp_path, name):
    text, expected = CASES[name]
    assert str(load_error(tmp_path, text)) == expected


def test_cli_exit_status_and_nothing_written(tmp_path):
    text, expected = CASES["delegate_to_missing"]
    proc, out = run_cli(tmp_path, text)
    assert proc.returncode == 2
    assert proc.stderr.strip() == expected
    assert not out.exists()


def test_bad_manifest_leaves_previous_output_untouched(tmp_path):
    good = write_manifest(
        tmp_path,
        NEG_OUT + "- func: neg(Tensor self) -> Tensor\n  structured_delegate: neg.out\n"
        '  derivatives: {self: "-grad"}\n',
    )
    out = tmp_path / "generated"
    generate(load_manifest(good), out, shards=2)
    before = {p: p.read_text() for p in out.rglob("*") if p.is_file()}
    bad = write_manifest(
        tmp_path,
        textwrap.dedent(NEG_OUT) + "- func: neg(Tensor self) -> Tensor\n  structured_delegate: nope.out\n",
    )
    with pytest.raises(SpecError):
        generate(load_manifest(bad), out, shards=2)
    assert {p: p.read_text() for p in out.rglob("*") if p.is_file()} == before


def test_dispatch_list_names_the_impls_after_the_out_overload(tmp_path):
    text = (
        "- func: scale.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
        "  dispatch: [CPU, CUDA]\n  meta: custom\n"
    )
    (fn,) = load_manifest(write_manifest(tmp_path, text)).functions
    assert [(k.value, name) for k, name in fn.dispatch] == [
        ("CPU", "scale_out_cpu"),
        ("CUDA", "scale_out_cuda"),
    ]


def test_dispatch_list_with_an_unknown_key(tmp_path):
    text = (
        "- func: scale.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  dispatch:"
        " [GPU]\n"
    )
    error = load_error(tmp_path, text)
    assert (error.line, error.problem) == (3, "unknown dispatch key 'GPU'")
