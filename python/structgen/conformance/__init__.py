"""The conformance suite: every structured op of a generated package held to the bar PyTorch's
OpInfo tests and torch.library.opcheck hold built-in ops to (plugin.py says how to run it).

    spec.py       what the suite knows about an op (codegen's SuiteSpec) and its sources compiled
    samples.py    inputs: shapes, layouts, dtypes, scalar arguments, extremes, hypothesis draws
    checks.py     the checks, registered with the parameters each runs with
    batching.py   the vmap check (structgen.vmap against a loop over the batch)
    emulation.py  the op's CUDA path run by the CPU emulator (torch.ops.<project>_emu)
    test_conformance.py   one test per (op, check, device, dtype)
"""
