"""The functions a derivative formula may call: one row each, with the kinds of its arguments,
its result and its C++ spelling (codegen/autograd/cpp.py prints calls from this table; the
checker in codegen/autograd/formulas.py checks calls against it; docs/autograd.md lists it).

Kinds: ``tensor`` (a tensor value), ``value`` (a tensor or a scalar), ``scalar``, ``bool``,
``like`` (the name of a tensor argument whose shape, dtype and device are meant: backward saves
those, not the tensor), ``likes`` (the same of a Tensor[] argument, element by element),
``tensors`` (a Tensor[] argument), ``tensor?`` (a Tensor? argument), ``ints`` (an int[] argument, or int?:
the dims of a reduction), ``int``, ``mask`` (``grad_input_mask``: which of the inputs a formula
of several inputs must give), ``any`` (any argument, passed as it is). A result ``tensors`` is
one gradient per input of a formula of several, or per element of a Tensor[] input. Elementwise functions
(exp, where, ...) are ATen's; the others are the runtime's backward helpers, hand-written once in
its autograd.h.
"""

from __future__ import annotations

from structgen.codegen.api.names import RUNTIME
from structgen.codegen.model.autograd import Function


def _elementwise(name: str, cpp: str | None = None) -> Function:
    return Function(name, ("value",), "tensor", cpp or f"at::{name}", f"torch.{name}", tensorize=True)


_H = f"{RUNTIME.namespace}::autograd::"

FUNCTIONS: dict[str, Function] = {
    f.name: f
    for f in (
        *(
            _elementwise(n)
            for n in (
                "exp",
                "exp2",
                "expm1",
                "log",
                "log2",
                "log1p",
                "sqrt",
                "rsqrt",
                "sin",
                "cos",
                "tan",
                "tanh",
                "sigmoid",
                "erf",
                "erfc",
                "abs",
                "sign",
                "floor",
                "ceil",
                "round",
                "trunc",
                "isnan",
                "isinf",
            )
        ),
        Function("normcdf", ("value",), "tensor", "at::special_ndtr", "torch.special.ndtr", tensorize=True),
        Function("zeros_like", ("tensor",), "tensor", "at::zeros_like", "torch.zeros_like"),
        Function(
            "nonneg_real",
            ("value",),
            "cond",
            _H + "nonneg_real",
            "x >= 0 for a real x; for a complex one, x real and >= 0 (pow's exponent gradient)",
        ),
        Function(
            "not_implemented",
            ("str", "str"),
            "tensor",
            _H + "not_implemented",
            "raises torch's 'the derivative for <input> is not implemented' (an input written "
            "`not_implemented`)",
        ),
        Function("conj", ("value",), "value", _H + "conj", "the complex conjugate (a real value as it is)"),
        Function("pow", ("value", "value"), "tensor", "at::pow", "torch.pow"),
        Function("pow_scalar", ("tensor", "scalar"), "tensor", "at::pow", "torch.pow with a Scalar exponent"),
        Function("max", ("value", "value"), "tensor", _H + "maximum", "torch.maximum (a scalar side clamps)"),
        Function("min", ("value", "value"), "tensor", _H + "minimum", "torch.minimum (a scalar side clamps)"),
        Function("trunc_div", ("value", "value"), "tensor", _H + "trunc_div", "division rounded toward 0"),
        Function("fma", ("value", "value", "value"), "tensor", _H + "fma", "a * b + c", tensorize=True),
        Function("clamp", ("tensor", "any", "any"), "tensor", "at::clamp", "torch.clamp (Scalar? bounds)"),
        Function("mm", ("tensor", "tensor"), "tensor", "at::mm", "torch.mm"),
        Function("bmm", ("tensor", "tensor"), "tensor", "at::bmm", "torch.bmm"),
        Function("matmul", ("tensor", "tensor"), "tensor", "at::matmul", "torch.matmul"),
        Function("mT", ("tensor",), "tensor", _H + "mT", "the last two dims swapped"),
        *(
            Function(name, params, result, _H + name, doc, gradients=gives[0] if gives else 0)
            for name, params, result, doc, *gives in (
                (
                    "unreduce",
                    ("tensor", "like", "ints", "bool"),
                    "tensor",
                    "a reduction's gradient spread back over its input",
                ),
                (
                    "mean_backward",
                    ("tensor", "like", "ints", "bool"),
                    "tensor",
                    "mean's: unreduce divided by the count",
                ),
                (
                    "extremum_backward",
                    ("tensor", "tensor", "tensor", "ints", "bool"),
                    "tensor",
                    "amax/amin's: shared among the ties",
                ),
                (
                    "prod_backward",
                    ("tensor", "tensor", "tensor", "ints", "bool"),
                    "tensor",
                    "prod's: the product of the others (zeros too)",
                ),
                ("var_backward", ("tensor", "tensor", "ints", "scalar?", "bool"), "tensor", "var's"),
                (
                    "std_backward",
                    ("tensor", "tensor", "tensor", "ints", "scalar?", "bool"),
                    "tensor",
                    "std's",
                ),
                (
                    "logsumexp_backward",
                    ("tensor", "tensor", "tensor", "ints", "bool"),
                    "tensor",
                    "logsumexp's",
                ),
                (
                    "norm_backward",
                    ("tensor", "tensor", "scalar?", "tensor", "ints", "bool"),
                    "tensor",
                    "a p-norm's",
                ),
                (
                    "cumsum_backward",
                    ("tensor", "like", "scalar"),
                    "tensor",
                    "cumsum's: the reversed cumulative sum",
                ),
                (
                    "softmax_backward",
                    ("tensor", "tensor", "scalar", "like"),
                    "tensor",
                    "softmax's, from its output",
                ),
                (
                    "log_softmax_backward",
                    ("tensor", "tensor", "scalar", "like"),
                    "tensor",
                    "log_softmax's, from its output",
                ),
                (
                    "var_jvp",
                    ("tensor", "tensor", "ints", "scalar?", "bool"),
                    "tensor",
                    "var's tangent (forward mode)",
                ),
                (
                    "std_jvp",
                    ("tensor", "tensor", "tensor", "ints", "scalar?", "bool"),
                    "tensor",
                    "std's tangent, 0 where std is 0",
                ),
                (
                    "logsumexp_jvp",
                    ("tensor", "tensor", "tensor", "ints", "bool"),
                    "tensor",
                    "logsumexp's tangent: sum(softmax * tangent)",
                ),
                (
                    "extremum_jvp",
                    ("tensor", "tensor", "tensor", "ints", "bool"),
                    "tensor",
                    "amax/amin's tangent: the mean over the ties",
                ),
                (
                    "linear_jvp",
                    ("tensor", "tensor", "tensor?", "tensor", "tensor"),
                    "tensor",
                    "linear's tangent: dx W^T + x dW^T + db",
                ),
                (
                    "softmax_jvp",
                    ("tensor", "tensor", "scalar"),
                    "tensor",
                    "softmax's tangent, from its output",
                ),
                (
                    "log_softmax_jvp",
                    ("tensor", "tensor", "scalar"),
                    "tensor",
                    "log_softmax's tangent, from its output",
                ),
                (
                    "mse_loss_jvp",
                    ("tensor", "tensor", "tensor", "tensor", "scalar"),
                    "tensor",
                    "mse_loss's tangent, reduced as the loss",
                ),
                (
                    "prod_jvp",
                    ("tensor", "tensor", "tensor", "ints", "bool"),
                    "tensor",
                    "prod's tangent: the product of the others times the tangent, summed",
                ),
                (
                    "norm_jvp",
                    ("tensor", "tensor", "scalar?", "tensor", "ints", "bool"),
                    "tensor",
                    "a p-norm's tangent",
                ),
                (
                    "cdist_jvp",
                    ("tensor", "tensor", "tensor", "tensor", "scalar", "tensor"),
                    "tensor",
                    "cdist's tangent: the p-norm's of each pair's difference",
                ),
                (
                    "layer_norm_jvp",
                    ("tensor", "tensor?", "tensor?", "tensor", "ints", "tensor?", "tensor", "tensor"),
                    "tensor",
                    "layer_norm's output's tangent, from its statistics",
                ),
                (
                    "dropout_backward",
                    ("tensor", "tensor", "any", "any"),
                    "tensor",
                    "dropout's gradient and tangent: t * mask / (1 - p) (0 for p = 1; t * mask untrained)",
                ),
                (
                    "rms_norm_jvp",
                    ("tensor", "tensor?", "tensor", "ints", "tensor?", "any", "tensor"),
                    "tensor",
                    "rms_norm's output's tangent, from its rstd",
                ),
                (
                    "batch_norm_jvp",
                    (
                        "tensor",
                        "tensor?",
                        "tensor?",
                        "tensor",
                        "tensor?",
                        "tensor?",
                        "tensor?",
                        "tensor",
                        "tensor",
                        "bool",
                        "scalar",
                    ),
                    "tensor",
                    "batch_norm's output's tangent (training: the batch's statistics move too)",
                ),
                (
                    "embedding_bag_jvp",
                    ("tensor", "tensor?", "tensor", "tensor", "tensor", "tensor", "scalar", "tensor?")
                    + ("bool",),
                    "tensor",
                    "embedding_bag's tangent: the bags of the tangents' rows",
                ),
                ("max_pool2d_jvp", ("tensor", "tensor"), "tensor", "the tangent at each output's index"),
                ("max_pool3d_jvp", ("tensor", "tensor"), "tensor", "the tangent at each output's index"),
                (
                    "binary_cross_entropy_jvp",
                    ("tensor", "tensor", "tensor", "tensor", "tensor?", "scalar", "tensor"),
                    "tensor",
                    "binary_cross_entropy's tangent",
                ),
                (
                    "cross_entropy_jvp",
                    ("tensor", "tensor", "tensor", "tensor", "tensor?", "scalar", "scalar", "scalar")
                    + ("tensor",),
                    "tensor",
                    "cross_entropy's tangent (class indices or probabilities)",
                ),
                (
                    "layer_norm_backward",
                    ("tensor", "tensor", "ints", "tensor", "tensor", "tensor?", "tensor?", "mask"),
                    "tensors",
                    "input, weight, bias (ATen's native_layer_norm_backward)",
                    3,
                ),
                (
                    "rms_norm_backward",
                    ("tensor", "tensor", "ints", "tensor", "tensor?", "any", "mask"),
                    "tensors",
                    "input, weight (differentiable: double backward and hessian hold)",
                    2,
                ),
                (
                    "batch_norm_backward",
                    (
                        "tensor",
                        "tensor",
                        "tensor?",
                        "tensor?",
                        "tensor?",
                        "tensor",
                        "tensor",
                        "bool",
                        "scalar",
                        "mask",
                    ),
                    "tensors",
                    "input, weight, bias (ATen's native_batch_norm_backward)",
                    3,
                ),
                (
                    "matmul_backward",
                    ("tensor", "tensor", "tensor", "mask"),
                    "tensors",
                    "self, other of torch.matmul (1-D and broadcast batch dims)",
                    2,
                ),
                (
                    "linear_weight_backward",
                    ("tensor", "tensor", "like"),
                    "tensor",
                    "linear's weight: grad^T input over the batch dims",
                ),
                (
                    "cdist_backward",
                    ("tensor", "tensor", "tensor", "scalar", "tensor", "mask"),
                    "tensors",
                    "x1, x2 of cdist",
                    2,
                ),
                ("cat_backward", ("tensor", "likes", "scalar"), "tensors", "each element's slice of grad"),
                ("stack_backward", ("tensor", "likes", "scalar"), "tensors", "each element's slice of grad"),
                (
                    "split_backward",
                    ("tensors", "like", "ints", "scalar"),
                    "tensor",
                    "the pieces' gradients laid end to end (zeros for an unused piece)",
                ),
                (
                    "embedding_bag_backward",
                    (
                        "tensor",
                        "tensor",
                        "tensor",
                        "tensor",
                        "tensor",
                        "bool",
                        "scalar",
                        "tensor?",
                        "bool",
                        "mask",
                    ),
                    "tensors",
                    "weight, per_sample_weights of embedding_bag",
                    2,
                ),
                (
                    "index_select_backward",
                    ("tensor", "like", "scalar", "tensor"),
                    "tensor",
                    "grad added at the indices",
                ),
                (
                    "gather_backward",
                    ("tensor", "like", "scalar", "tensor"),
                    "tensor",
                    "grad scattered (added) to the indices",
                ),
                (
                    "take_backward",
                    ("tensor", "like", "tensor"),
                    "tensor",
                    "grad put (added) at the flat indices",
                ),
                (
                    "embedding_backward",
                    ("tensor", "tensor", "like"),
                    "tensor",
                    "grad rows added to the weight rows",
                ),
                (
                    "masked_select_backward",
                    ("tensor", "like", "tensor"),
                    "tensor",
                    "grad where the mask is true",
                ),
                (
                    "max_pool2d_backward",
                    ("tensor", "tensor", "ints", "ints", "ints", "ints", "bool", "tensor"),
                    "tensor",
                    "ATen's max_pool2d_with_indices_backward",
                ),
                (
                    "max_pool3d_backward",
                    ("tensor", "tensor", "ints", "ints", "ints", "ints", "bool", "tensor"),
                    "tensor",
                    "ATen's max_pool3d_with_indices_backward",
                ),
                (
                    "avg_pool2d_backward",
                    ("tensor", "tensor", "ints", "ints", "ints", "bool", "bool", "any"),
                    "tensor",
                    "ATen's avg_pool2d_backward",
                ),
                (
                    "mse_loss_backward",
                    ("tensor", "tensor", "tensor", "scalar", "mask"),
                    "tensors",
                    "self, target",
                    2,
                ),
                (
                    "binary_cross_entropy_backward",
                    ("tensor", "tensor", "tensor", "tensor?", "scalar", "mask"),
                    "tensors",
                    "self, target",
                    2,
                ),
                (
                    "cross_entropy_backward",
                    ("tensor", "tensor", "tensor", "tensor?", "scalar", "scalar", "scalar", "mask"),
                    "tensors",
                    "self, target (probabilities)",
                    2,
                ),
                (
                    "scaled_dot_product_attention_backward",
                    ("tensor", "tensor", "tensor", "tensor", "tensor?", "bool", "any", "tensor", "tensor")
                    + ("mask",),
                    "tensors",
                    "query, key, value, attn_mask (a float one's: the scores')",
                    4,
                ),
                (
                    "scaled_dot_product_attention_jvp",
                    ("tensor", "tensor", "tensor", "tensor?", "tensor", "tensor", "tensor", "tensor?", "bool")
                    + ("any", "tensor", "tensor"),
                    "tensor",
                    "attention's output's tangent",
                ),
            )
        ),
        Function(
            "sum_to",
            ("tensor", "like"),
            "tensor",
            _H + "sum_to",
            "a gradient in the form of the input `like`: summed over the dims broadcasting added or "
            "expanded, in like's dtype",
        ),
    )
}
# where(c, a, b), select(mode, v1, e1, ...) and the operators are the checker's own.
SPECIAL = ("where", "select")
