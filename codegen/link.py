"""python -m structgen.codegen.link LIBRARY HOOKS: fail when the built library leaves a function of the
project (or of the runtime) undefined, saying which manifest entry declared it and how to define it.

CMake runs it right after linking the project's ops library. A hook the manifest declares and no
source defines then stops the build with `native_functions.yaml:LINE: myops::impl::f (...) is
declared by the manifest but defined nowhere — ...` instead of a library that loads fine and
fails at import. HOOKS is the generator's hooks.txt, which names the namespaces checked: the
project's and the runtime's. torch's, libc's and OpenMP's symbols are found at load.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def undefined(library: Path, namespaces: list[str]) -> list[str]:
    """The functions of ``namespaces`` that ``library`` uses but does not define (qualified names,
    in order)."""
    prefixes = tuple(f"{n}::" for n in namespaces)
    listed = subprocess.run(
        ["nm", "-D", "--undefined-only", "-C", str(library)], capture_output=True, text=True, check=True
    )
    names = []
    for line in listed.stdout.splitlines():
        # "                 U myops::impl::f(at::Tensor const&)"
        symbol = line.split(maxsplit=1)[-1].strip()
        if symbol.startswith(prefixes):
            names.append(symbol.split("(", 1)[0])
    return list(dict.fromkeys(names))


def namespaces(hooks_file: Path) -> list[str]:
    """The namespaces hooks.txt says to check."""
    return [
        line.split("\t")[1] for line in hooks_file.read_text().splitlines() if line.startswith("namespace\t")
    ]


def report(symbols: list[str], hooks_file: Path) -> list[str]:
    declared = {}
    for line in hooks_file.read_text().splitlines():
        if line and not line.startswith(("#", "namespace\t")):
            symbol, where, what = line.split("\t")
            declared[symbol] = (where, what)
    lines = []
    for symbol in symbols:
        if symbol in declared:
            where, what = declared[symbol]
            lines.append(
                f"{where}: {symbol} ({what}) is declared by the manifest but defined nowhere — define it "
                "under csrc/ops/ (structgen signature <op> prints its exact signature)"
            )
        else:
            lines.append(f"{symbol} is called but defined nowhere — define it, or remove its use")
    return lines


def main(argv: list[str]) -> int:
    library, hooks_file = Path(argv[0]), Path(argv[1])
    lines = report(undefined(library, namespaces(hooks_file)), hooks_file)
    for line in lines:
        print(line, file=sys.stderr)
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
