"""structops' conformance suite: structgen's (structgen.conformance), run on structops' manifest
(tests/under_test.py), or on the package --manifest names.

    bash tools/test.sh tests/conformance -k add_Tensor               # one op's suite
    bash tools/test.sh tests/conformance -k "reference and float16"  # one check, one dtype, every op
"""

from structgen.conformance.test_conformance import test_conformance  # noqa: F401 - collected here
