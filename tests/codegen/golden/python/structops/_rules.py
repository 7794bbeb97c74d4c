# @generated from native_functions.yaml by codegen/templates/rules.py.j2 — DO NOT EDIT.
# Regenerate with: python -m codegen (run by the CMake build)
"""The manifest's meta rules as data, for the Python mirror (structops.rules).

Each rule is the parsed AST of native_functions.yaml's `meta:` key; structops.rules evaluates
it on concrete shapes (describe(), index projection functions, sharding). Keyed by the
structured op's name; OVERLOADS maps every torch.ops overload to its op.
"""

RULES = {
    'add_Tensor': {
        "op": 'add',
        "functional": 'add.Tensor',
        "args": (('self', 'tensor'), ('other', 'tensor'), ('alpha', 'scalar')),
        "inputs": (),
        "outputs": (('out', ('call', 'broadcast', (('name', 'self'), ('name', 'other')), ()), ('call', 'promote', (('name', 'self'), ('name', 'other')), ()), ('call', 'like', (('name', 'self'), ('name', 'other')), ())),),
        "checks": ((('call', 'alpha_check', (('name', 'alpha'), ('name', 'out')), ()), 'alpha_check(alpha, out)'),),
        "allowed": (),
        "promoted": ('self', 'other'),
        "combine": None,
    },
    'bmm_out': {
        "op": 'bmm',
        "functional": None,
        "args": (('self', 'tensor'), ('mat2', 'tensor')),
        "inputs": (('self', 'tensor', ('pattern', (('dim', 'b', False), ('dim', 'n', False), ('dim', 'k', False))), '[b, n, k]'), ('mat2', 'tensor', ('pattern', (('dim', 'b', False), ('dim', 'k', False), ('dim', 'm', False))), '[b, k, m]')),
        "outputs": (('out', ('list', (('name', 'b'), ('name', 'n'), ('name', 'm'))), ('call', 'promote', (('name', 'self'), ('name', 'mat2')), ()), None),),
        "checks": ((('binop', 'or', ('binop', '>', ('name', 'k'), ('num', 0)), ('binop', '==', ('name', 'n'), ('num', 0))), '(k > 0) or (n == 0)'),),
        "allowed": (),
        "promoted": ('self', 'mat2'),
        "combine": None,
    },
    'amax': {
        "op": 'amax',
        "functional": 'amax.default',
        "args": (('self', 'tensor'), ('dim', 'ints'), ('keepdim', 'bool')),
        "inputs": (),
        "outputs": (('out', ('call', 'reduce', (('name', 'self'), ('name', 'dim'), ('name', 'keepdim')), ()), ('call', 'reduction', (('name', 'self'),), (('kind', ('name', 'SAME')),)), None),),
        "checks": (),
        "allowed": (),
        "combine": None,
    },
    'scaled_act': {
        "op": 'scaled_act',
        "functional": 'scaled_act.default',
        "args": (('self', 'tensor'), ('other', 'tensor'), ('alpha', 'scalar'), ('mode', 'str')),
        "inputs": (),
        "outputs": (('out', ('call', 'broadcast', (('name', 'self'), ('name', 'other')), ()), ('call', 'promote', (('name', 'self'), ('name', 'other')), (('kind', ('name', 'INT_TO_FLOAT')),)), ('call', 'like', (('name', 'self'), ('name', 'other')), ())),),
        "checks": (),
        "allowed": ((None, ('float16', 'bfloat16', 'float32', 'float64', 'uint8', 'int8', 'int16', 'int32', 'int64', 'bool')),),
        "promoted": ('self', 'other'),
        "combine": None,
    },
}

OVERLOADS = {
    'add.Tensor': 'add_Tensor',
    'add_.Tensor': 'add_Tensor',
    'add.out': 'add_Tensor',
    'bmm.out': 'bmm_out',
    'amax.default': 'amax',
    'amax.out': 'amax',
    'scaled_act.default': 'scaled_act',
    'scaled_act.out': 'scaled_act',
}
