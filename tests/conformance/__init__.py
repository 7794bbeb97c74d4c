"""The conformance suite: every structured op held to the bar PyTorch's OpInfo tests and
torch.library.opcheck hold built-in ops to.

    spec.py       what the suite knows about an op (codegen's SuiteSpec) and its sources compiled
    samples.py    inputs: shapes, layouts, dtypes, scalar arguments, extremes, hypothesis draws
    checks.py     the checks, registered with the parameters each runs with
    batching.py   the vmap check (structops.vmap against a loop over the batch)
    emulation.py  the op's CUDA path run by the CPU emulator (torch.ops.structops_emu)
    test_conformance.py   one test per (op, check, device, dtype)
"""
