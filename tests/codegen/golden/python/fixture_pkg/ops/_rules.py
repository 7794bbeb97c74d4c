# @generated from native_functions.yaml by codegen/templates/rules.py.j2 (generator 0.6.0) — DO NOT EDIT.
# Regenerate with: python -m structgen.codegen (run by the CMake build)
"""The manifest's meta rules for describe() and sharding (structgen.rules).

Per structured op with a rule: its index-space function, printed from the rule's IR by
codegen/rules/python.py (each output's dims, with the input axes each dim stands for), and what
describe() needs to call it. Shapes, dtypes, strides and errors come from the compiled meta
function; these functions only say where each dim comes from.
"""

# ruff: noqa

NAMESPACE = 'fixture_ops'


def index_add_Tensor(so, self, other, alpha):
    so_out = so.broadcast([('self', self), ('other', other)])
    return {'out': so_out}


def index_bmm_out(so, self, mat2):
    # self: [b, n, k]
    so_dims = self.dims()
    so_at = 0
    d_b = so.bind('b', so_dims[so_at])
    so_at += 1
    d_n = so.bind('n', so_dims[so_at])
    so_at += 1
    d_k = so.bind('k', so_dims[so_at])
    so_at += 1
    # mat2: [b, k, m]
    so_dims = mat2.dims()
    so_at = 0
    so.same(d_b, so_dims[so_at])
    so_at += 1
    so.same(d_k, so_dims[so_at])
    so_at += 1
    d_m = so.bind('m', so_dims[so_at])
    so_at += 1
    so_out = [so.dim(d_b), so.dim(d_n), so.dim(d_m)]
    return {'out': so_out}


def index_amax(so, self, dim, keepdim):
    so_out = so.reduce(('self', 'dim', 'keepdim'), self, dim, keepdim, empty='ALL')
    return {'out': so_out}


def index_scaled_act(so, self, other, alpha, mode):
    so_out = so.broadcast([('self', self), ('other', other)])
    return {'out': so_out}


def index_scaled_tanh(so, self, alpha):
    so_out = [*so.dim_list(self.dims())]
    return {'out': so_out}


def index__scaled_tanh_backward_self(so, grad, self, alpha):
    so_out = so.broadcast([('grad', grad), ('self', self)])
    return {'out': so_out}


def index_cumprod(so, self, dim):
    so_out = [*so.dim_list(self.dims())]
    so.mark('scanned', self, so.dims(('self', 'dim'), self, dim, empty='ALL'))
    return {'out': so_out}


def index_tril(so, self, diagonal):
    # self: [*batch, m, n]
    so_dims = self.dims()
    len_batch = so.length(so_dims) - (2)
    so_at = 0
    d_batch = so.bind('batch', so_dims[so_at : so_at + len_batch])
    so_at += len_batch
    d_m = so.bind('m', so_dims[so_at])
    so_at += 1
    d_n = so.bind('n', so_dims[so_at])
    so_at += 1
    so_out = [*so.dim_list(d_batch), so.dim(d_m), so.dim(d_n)]
    so.mark('diagonal', self, so.trailing(('self', '2'), self, 2), offset='diagonal')
    return {'out': so_out}


RULES = {
    'add_Tensor': {
        "namespace": NAMESPACE,
        "op": 'add',
        "functional": 'add.Tensor',
        "args": (('self', 'tensor'), ('other', 'tensor'), ('alpha', 'scalar')),
        "outputs": ('out',),
        "list_outputs": (),
        "combine": None,
        "vmap_as": None,
        "affine": None,
        "index": index_add_Tensor,
    },
    'bmm_out': {
        "namespace": NAMESPACE,
        "op": 'bmm',
        "functional": None,
        "args": (('self', 'tensor'), ('mat2', 'tensor')),
        "outputs": ('out',),
        "list_outputs": (),
        "combine": None,
        "vmap_as": None,
        "affine": None,
        "index": index_bmm_out,
    },
    'amax': {
        "namespace": NAMESPACE,
        "op": 'amax',
        "functional": 'amax.default',
        "args": (('self', 'tensor'), ('dim', 'ints'), ('keepdim', 'bool')),
        "outputs": ('out',),
        "list_outputs": (),
        "combine": None,
        "vmap_as": None,
        "affine": None,
        "index": index_amax,
    },
    'scaled_act': {
        "namespace": NAMESPACE,
        "op": 'scaled_act',
        "functional": 'scaled_act.default',
        "args": (('self', 'tensor'), ('other', 'tensor'), ('alpha', 'scalar'), ('mode', 'str')),
        "outputs": ('out',),
        "list_outputs": (),
        "combine": None,
        "vmap_as": None,
        "affine": None,
        "index": index_scaled_act,
    },
    'scaled_tanh': {
        "namespace": NAMESPACE,
        "op": 'scaled_tanh',
        "functional": 'scaled_tanh.default',
        "args": (('self', 'tensor'), ('alpha', 'scalar')),
        "outputs": ('out',),
        "list_outputs": (),
        "combine": None,
        "vmap_as": None,
        "affine": None,
        "index": index_scaled_tanh,
    },
    '_scaled_tanh_backward_self': {
        "namespace": NAMESPACE,
        "op": '_scaled_tanh_backward_self',
        "functional": '_scaled_tanh_backward_self.default',
        "args": (('grad', 'tensor'), ('self', 'tensor'), ('alpha', 'scalar')),
        "outputs": ('out',),
        "list_outputs": (),
        "combine": None,
        "vmap_as": None,
        "affine": None,
        "index": index__scaled_tanh_backward_self,
    },
    'cumprod': {
        "namespace": NAMESPACE,
        "op": 'cumprod',
        "functional": 'cumprod.default',
        "args": (('self', 'tensor'), ('dim', 'int')),
        "outputs": ('out',),
        "list_outputs": (),
        "combine": 'mul',
        "vmap_as": None,
        "affine": None,
        "index": index_cumprod,
    },
    'tril': {
        "namespace": NAMESPACE,
        "op": 'tril',
        "functional": 'tril.default',
        "args": (('self', 'tensor'), ('diagonal', 'int')),
        "outputs": ('out',),
        "list_outputs": (),
        "combine": None,
        "vmap_as": None,
        "affine": None,
        "index": index_tril,
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
    'scaled_tanh.default': 'scaled_tanh',
    'scaled_tanh.out': 'scaled_tanh',
    '_scaled_tanh_backward_self.default': '_scaled_tanh_backward_self',
    '_scaled_tanh_backward_self.out': '_scaled_tanh_backward_self',
    'cumprod.default': 'cumprod',
    'cumprod.out': 'cumprod',
    'tril.default': 'tril',
    'tril.out': 'tril',
}

# Functional overloads without a rule (a hand-written meta function): structgen.vmap loops.
LOOPED = (
    'aminmax.default',
)
