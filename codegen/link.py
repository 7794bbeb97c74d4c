"""python -m codegen.link LIBRARY HOOKS: fail when the built library leaves a structops function
undefined, saying which manifest entry declared it and how to define it.

CMake runs it right after linking libstructops_ops.so. A hook the manifest declares and no source
defines then stops the build with `native_functions.yaml:LINE: structops::impl::f (...) is
declared by the manifest but defined nowhere — ...` instead of a library that loads fine and
fails at import. HOOKS is the generator's hooks.txt. Only structops' own symbols are checked:
torch's, libc's and OpenMP's are found when the library is loaded.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def undefined(library: Path) -> list[str]:
    """The structops functions ``library`` uses but does not define (qualified names, in order)."""
    listed = subprocess.run(
        ["nm", "-D", "--undefined-only", "-C", str(library)], capture_output=True, text=True, check=True
    )
    names = []
    for line in listed.stdout.splitlines():
        # "                 U structops::impl::f(at::Tensor const&)"
        symbol = line.split(maxsplit=1)[-1].strip()
        if symbol.startswith("structops::"):
            names.append(symbol.split("(", 1)[0])
    return list(dict.fromkeys(names))


def report(symbols: list[str], hooks_file: Path) -> list[str]:
    declared = {}
    for line in hooks_file.read_text().splitlines():
        if line and not line.startswith("#"):
            symbol, where, what = line.split("\t")
            declared[symbol] = (where, what)
    lines = []
    for symbol in symbols:
        if symbol in declared:
            where, what = declared[symbol]
            lines.append(
                f"{where}: {symbol} ({what}) is declared by the manifest but defined nowhere — define it "
                "under csrc/ops/ (python -m codegen signature <op> prints its exact signature)"
            )
        else:
            lines.append(f"{symbol} is called but defined nowhere — define it, or remove its use")
    return lines


def main(argv: list[str]) -> int:
    library, hooks_file = Path(argv[0]), Path(argv[1])
    lines = report(undefined(library), hooks_file)
    for line in lines:
        print(line, file=sys.stderr)
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
