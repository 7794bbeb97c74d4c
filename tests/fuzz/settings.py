"""The fuzzers' budget: bounded and seeded in CI, long and random with STRUCTOPS_FUZZ=long.

STRUCTOPS_FUZZ=long         many cases, a fresh seed per run (printed in every failure)
STRUCTOPS_FUZZ_SEED=N       the seed (CI: 0)
STRUCTOPS_FUZZ_CASES=N      the number of cases per fuzz test
STRUCTOPS_FUZZ_ONLY=I       run case I alone (what a failure report says to reproduce it)
"""

import os
import random

LONG = os.environ.get("STRUCTOPS_FUZZ") == "long"
SEED = int(os.environ.get("STRUCTOPS_FUZZ_SEED") or (random.SystemRandom().randrange(2**31) if LONG else 0))
ONLY = os.environ.get("STRUCTOPS_FUZZ_ONLY")


def case_indices(ci: int, long: int) -> range:
    """The cases to run: STRUCTOPS_FUZZ_ONLY, else the CI or long budget (STRUCTOPS_FUZZ_CASES)."""
    if ONLY is not None:
        return range(int(ONLY), int(ONLY) + 1)
    return range(int(os.environ.get("STRUCTOPS_FUZZ_CASES") or (long if LONG else ci)))


def case_rng(name: str, index: int) -> random.Random:
    """The RNG of one case: the same (seed, test, index) always draws the same case."""
    return random.Random(f"{SEED}/{name}/{index}")


def reproduce(test: str, index: int) -> str:
    return f"STRUCTOPS_FUZZ_SEED={SEED} STRUCTOPS_FUZZ_ONLY={index} pytest {test}"
