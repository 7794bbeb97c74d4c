"""Print a rule's IR (model/rule_ir.py) as a Python function that computes each output's dims with
their provenance: which input axes every dim stands for, at which offset and stride. That is the
op's index space and each tensor's index projection function (structgen.rules.describe).

Only the shape part is printed. describe() runs the compiled meta function for the same call
first, so the dtypes, strides and every error come from C++; the function runs on arguments the
meta function accepted, so it checks nothing, and describe() asserts its sizes equal the meta
function's. Locals: ``so`` the runtime (structgen.rules.Runtime), ``d_<name>`` a bound name,
``so_*`` the rest; arguments keep their names (the manifest reserves ``d_<dim>`` and ``so_``).
"""

from __future__ import annotations

from structgen.codegen.model import rule_ir as ir


def expr(e: ir.Expr) -> str:
    """A Python expression of ``e``: an int or a Dim for ints, a list of Dims for shapes."""
    if isinstance(e, ir.Arg):
        return e.name
    if isinstance(e, ir.Bound):
        return f"d_{e.name}"
    if isinstance(e, ir.IntLit):
        return str(e.value)
    if isinstance(e, ir.BoolLit):
        return str(e.value)
    if isinstance(e, ir.Unary):
        return f"(-so.int({expr(e.operand)}))" if e.op == "-" else f"(not {expr(e.operand)})"
    if isinstance(e, ir.Binary):
        a, b = expr(e.lhs), expr(e.rhs)
        if e.op in ("and", "or"):
            return f"({a} {e.op} {b})"
        if e.shapes:
            return f"(so.sizes({a}) {e.op} so.sizes({b}))"
        if e.op in ("//", "%"):
            return f"so.{'floordiv' if e.op == '//' else 'mod'}(so.int({a}), so.int({b}))"
        return f"(so.int({a}) {e.op} so.int({b}))"
    if isinstance(e, ir.Compare):  # numbers only: dtypes are compared in checks, which C++ runs
        a, b = (f"so.int({expr(x)})" if x.kind == "int" else expr(x) for x in (e.lhs, e.rhs))
        return f"({a} {e.op} {b})"
    if isinstance(e, ir.Select):
        return f"({expr(e.then)} if {expr(e.test)} else {expr(e.otherwise)})"
    if isinstance(e, ir.SizesOf):
        return f"{expr(e.tensor)}.dims()"
    if isinstance(e, ir.ShapeLiteral):
        items = [
            f"*so.dim_list({expr(i.value)})" if isinstance(i, ir.Splice) else f"so.dim({expr(i)})"
            for i in e.items
        ]
        return f"[{', '.join(items)}]"
    if isinstance(e, ir.Given):
        return f"({expr(e.arg)} is not None)"
    assert isinstance(e, ir.Call), e
    if e.fn == "int":  # Python's int() truncates toward zero, as Scalar.toLong()
        return f"int({expr(e.args[0])})"
    args = "".join(f", {expr(a)}" for a in e.args)
    options = "".join(f", {k}={v!r}" for k, v in e.options)
    if e.fn == "broadcast":
        return f"so.broadcast([{', '.join(f'({label!r}, {expr(a)})' for label, a in zip(e.labels, e.args))}])"
    return f"so.{e.fn}({tuple(e.labels)!r}{args}{options})"


def pattern(p: ir.MatchPattern) -> list[str]:
    """Bind the names a pattern introduces to the input's dims; a name bound before gains these
    axes as more origins (equal sizes: the meta function checked them)."""
    lines = [f"# {p.arg}: {p.text}"]
    for b in p.declares:
        if b.kind == "elems":
            lines.append(f"d_{b.name} = []")
    body: list[str] = []
    groups = [it for it in p.items if isinstance(it, ir.GroupItem)]
    fixed = str(len(p.items) - len(groups))
    for g in groups:
        if g.argument is not None:
            body.append(f"len_{g.name} = so.length({g.name})")
            fixed += f" + len_{g.name}"
        elif g.length is not None:
            body.append(f"len_{g.name} = so.group_length(so.int({expr(g.length)}), so.length(so_dims))")
            fixed += f" + len_{g.name}"
    free = next((g for g in groups if g.free), None)
    if free is not None:
        body.append(f"len_{free.name} = so.length(so_dims) - ({fixed})")
    body.append("so_at = 0")
    many = p.kind == "tensors"
    for it in p.items:
        if isinstance(it, ir.AnyDim | ir.LiteralDim):
            body.append("so_at += 1")
        elif isinstance(it, ir.DimItem):
            value = "so_dims[so_at]"
            if it.per_element:
                body.append(f"d_{it.name}.append(so.collect({value}))")
            else:
                body.append(_bind(it.name, it.first, many, value))
            body.append("so_at += 1")
        else:
            value = f"so_dims[so_at : so_at + len_{it.name}]"
            if it.argument is None:
                body.append(_bind(it.name, it.first, many, value))
            body.append(f"so_at += len_{it.name}")
    if many:
        lines.append(f"for so_i, so_t in so.elements({p.arg}):")
        lines.append("    so_dims = so_t.dims()")
    elif p.kind == "tensor?":
        lines.append(f"if {p.arg} is not None:")
        lines.append(f"    so_dims = {p.arg}.dims()")
    else:
        lines.append(f"so_dims = {p.arg}.dims()")
        return lines + body
    lines.extend(f"    {line}" for line in body)
    return lines


def _bind(name: str, first: bool, many: bool, value: str) -> str:
    """A name's first occurrence binds it (element 0 of a Tensor[]); later ones add their axes."""
    bind = f"so.bind({name!r}, {value})"
    if first and not many:
        return f"d_{name} = {bind}"
    if first:
        return f"d_{name} = {bind} if so_i == 0 else so.same(d_{name}, {value})"
    return f"so.same(d_{name}, {value})"


def _shape_equality(s: ir.Statement) -> bool:
    return isinstance(s, ir.Check) and isinstance(s.test, ir.Binary) and s.test.shapes and s.test.op == "=="


def function_name(group: str) -> str:
    return f"index_{group}"


def index_function(group: str, args: tuple[str, ...], meta: ir.MetaIR) -> str:
    """``def index_<group>(so, <args>)`` returning each output's dims (a list of dim lists for a
    Tensor(a!)[] output); ``so.mark`` records the axes meta.index declares whole or scanned, and
    those over which meta.positions says an output holds positions."""
    name = function_name(group)
    lines = [f"def {name}(so, {', '.join(args)}):" if args else f"def {name}(so):"]
    body: list[str] = []
    for s in meta.statements:
        if isinstance(s, ir.MatchPattern):
            body.extend(pattern(s))
        elif isinstance(s, ir.OutputShape):
            body.append(f"so_{s.out} = {expr(s.shape)}")
        elif _shape_equality(s):
            # A checked `a == b` of shapes: aligned dims are one index dim (addmm's bias and [n, m]).
            assert isinstance(s, ir.Check) and isinstance(s.test, ir.Binary)
            body.append(f"so.link({expr(s.test.lhs)}, {expr(s.test.rhs)})")
    for ik in meta.index:
        output = f", {ik.output!r}" if ik.output else ""
        offset = f", offset={ik.offset!r}" if ik.offset else ""
        body.append(f"so.mark({ik.kind!r}, {ik.tensor}, {expr(ik.axes)}{output}{offset})")
    body.append("return {" + ", ".join(f"{o!r}: so_{o}" for o in meta.outputs) + "}")
    lines.extend(f"    {line}" for line in body)
    return "\n".join(lines)
