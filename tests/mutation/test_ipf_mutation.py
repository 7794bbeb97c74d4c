"""The sharding check must be able to fail: a planted wrong index space or IPF is caught.

Each case patches structgen.rules for one run of the conformance suite's sharding check on a real
op, so the planted bug reaches run_sharded exactly as a wrong rule or a wrong describe() would.
"""

import dataclasses

import pytest
from structgen import rules
from structgen.conformance.checks import CHECKS
from structgen.conformance.spec import load_specs


@pytest.fixture(scope="module")
def specs():
    return {spec.name: spec for spec in load_specs()}


def _forget_index_kinds(monkeypatch):
    """meta.index ignored: softmax's whole dim and cumsum's scanned dim look parallel."""
    monkeypatch.setattr(rules.Runtime, "mark", lambda self, kind, t, axes, output=None: None)


def _forget_positions(monkeypatch):
    """meta.positions ignored: max_pool's indices stay positions in each tile's region."""
    original = rules.Runtime.mark
    monkeypatch.setattr(
        rules.Runtime,
        "mark",
        lambda self, kind, t, axes, output=None: (
            None if kind == "positions" else original(self, kind, t, axes)
        ),
    )


def _window_without_padding(monkeypatch):
    """A pooling window's IPF starts at s*o instead of s*o - p: the tiles read shifted rows."""
    original = rules.Runtime.window

    def window(labels, n, k, s, p, d, ceil_mode):
        dim = original(labels, n, k, s, p, d, ceil_mode)
        dim.origins = [dataclasses.replace(o, offset=0) for o in dim.origins]
        return dim

    monkeypatch.setattr(rules.Runtime, "window", staticmethod(window))


def _combine(wrong: str):
    """The op's combine declared as ``wrong`` (mean as add: the tiles' means summed)."""

    def plant(monkeypatch):
        original = rules.describe
        monkeypatch.setattr(
            rules, "describe", lambda *a, **k: dataclasses.replace(original(*a, **k), combine=wrong)
        )

    return plant


def _shift_other(monkeypatch):
    """other's IPF reads one row further than it should."""
    original = rules._ipf

    def shifted(t, space):
        ipf = original(t, space)
        if t.name != "other" or not ipf.offset:
            return ipf
        return dataclasses.replace(ipf, offset=(ipf.offset[0] + 1, *ipf.offset[1:]))

    monkeypatch.setattr(rules, "_ipf", shifted)


def _reduced_as_parallel(monkeypatch):
    """matmul's k (read by both operands, in no output) taken for a parallel dim."""
    original = rules.describe

    def describe(*args, **kwargs):
        d = original(*args, **kwargs)
        space = tuple(dataclasses.replace(i, kind="parallel") for i in d.index_space)
        return dataclasses.replace(d, index_space=space)

    monkeypatch.setattr(rules, "describe", describe)


PLANTED = {
    "softmax_int": _forget_index_kinds,
    "log_softmax_int": _forget_index_kinds,
    "cumsum": _forget_index_kinds,
    "add_Tensor": _shift_other,
    "matmul": _reduced_as_parallel,
    "max_pool2d_with_indices": _forget_positions,
    "avg_pool2d": _window_without_padding,
    "mean_dim": _combine("add"),
    "argmax": _combine("max"),
    "logsumexp": _combine("add"),
}


@pytest.mark.parametrize("op", PLANTED)
def test_the_sharding_check_passes_unplanted(specs, op):
    CHECKS["sharding"].run(specs[op], "cpu", "float32")


@pytest.mark.parametrize("op", PLANTED)
def test_a_planted_index_space_bug_is_caught(specs, op, monkeypatch):
    PLANTED[op](monkeypatch)
    with pytest.raises((AssertionError, RuntimeError, pytest.fail.Exception)):
        CHECKS["sharding"].run(specs[op], "cpu", "float32")
