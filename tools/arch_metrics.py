"""Architecture metrics of the generator (codegen/), so an issue's before/after figures come from one
command: `.venv/bin/python tools/arch_metrics.py`.

1. floors: the static import graph among codegen's modules (relative imports resolved; imports inside
   functions count, and are listed apart) with its strongly connected components collapsed: floors =
   levels of the DAG's longest path (importing no codegen module: floor 1); upward imports = edges
   inside a component (cycles). `from pkg import name` is an edge to pkg.name where that is a module,
   else to pkg; a parent package's __init__ is not an implied edge.
2. load path: sys.setprofile over load_manifest(structops/native_functions.yaml) (what `structgen`
   runs before rendering), keeping frames of codegen/ files and named functions only (no <genexpr>,
   <listcomp>, <lambda>, <module>); the distinct (file, function) in order of first call (the call
   tree's depth-first order). stops = functions, files = their files, returns = moves into a file the
   sequence had already left.
3. largest functions: def line to end_lineno (decorators not counted); nested functions count on their
   own and inside their parent.
4. f-strings holding C++: an f-string (ast.JoinedStr, format specs not counted) whose literal text
   holds `::` (std::, at::, c10::, torch:: included), `;`, `->`, `const `, `auto `, `#include`, a
   `{` or `}`, or a reference declarator (`T&` not `&&`). A heuristic: a message with `;` or `->` counts.
5. duplicates: the `duplicates` command on PATH over codegen/ (pairs of places sharing 6+ lines).
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODEGEN = ROOT / "codegen"
PACKAGE = "structgen.codegen"
MANIFEST = ROOT / "structops" / "native_functions.yaml"
CPP = re.compile(r"::|;|->|\bconst |\bauto |#include|[{}]|[\w>]&(?!&)")


def fill(text: str, first: str) -> str:
    """Wrapped to 110 columns; a no-break space keeps a separator on the line of the name before it."""
    wrapped = textwrap.fill(text, 110, initial_indent=first, subsequent_indent=" " * len(first))
    return wrapped.replace("\xa0", " ")


def modules() -> dict[str, Path]:
    """Every codegen module by its dotted name (packages by their own name, as Python imports them)."""
    found = {}
    for path in sorted(CODEGEN.rglob("*.py")):
        parts = path.relative_to(CODEGEN).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        found[".".join((PACKAGE, *parts))] = path
    return found


def short(name: str) -> str:
    """A module's name without the package prefix, for compact lines."""
    return name[len(PACKAGE) + 1 :] or "__init__"


def imported(name: str, path: Path, node: ast.Import | ast.ImportFrom, mods: dict) -> set[str]:
    """The codegen modules one import statement names (relative imports resolved against `name`)."""
    if isinstance(node, ast.Import):
        targets = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = name if path.name == "__init__.py" else name.rpartition(".")[0]
            package = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
            base = f"{package}.{base}" if base else package
        targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
    found = set()
    for target in targets:
        while target and target not in mods:  # `import a.b.c` where c is not a module
            target = target.rpartition(".")[0]
        if target.startswith(PACKAGE) and target != name:
            found.add(target)
    return found


def import_graph(mods: dict[str, Path]) -> tuple[dict[str, set[str]], set[tuple[str, str]]]:
    """The import edges, and those made by an import inside a function (lazy ones)."""
    graph, lazy = {m: set() for m in mods}, set()
    for name, path in mods.items():
        tree = ast.parse(path.read_text())
        defs = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
        in_function = {id(n) for f in defs for n in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets = imported(name, path, node, mods)
                graph[name] |= targets
                lazy |= {(name, t) for t in targets} if id(node) in in_function else set()
    return graph, lazy


def components(graph: dict[str, set[str]]) -> dict[str, str]:
    """Each module's strongly connected component, named by its first member (plain reachability)."""
    reach = {}
    for start in graph:
        seen, todo = set(), [start]
        while todo:
            for w in graph[todo.pop()] - seen:
                seen.add(w)
                todo.append(w)
        reach[start] = seen
    return {v: min([v, *(w for w in reach[v] if v in reach[w])]) for v in graph}


def floors(graph: dict[str, set[str]], comp: dict[str, str]) -> dict[str, int]:
    """The floor of each module: 1 + the highest floor its component imports from another one."""
    members: dict[str, list[str]] = {}
    for m, c in comp.items():
        members.setdefault(c, []).append(m)
    level: dict[str, int] = {}

    def floor_of(c: str) -> int:
        if c not in level:
            below = {comp[t] for m in members[c] for t in graph[m]} - {c}
            level[c] = 1 + max((floor_of(b) for b in below), default=0)
        return level[c]

    return {m: floor_of(c) for m, c in comp.items()}


def report_floors() -> None:
    """Section 1: floors, the modules on each, upward (cyclic) and lazy imports."""
    mods = modules()
    graph, lazy = import_graph(mods)
    comp = components(graph)
    level = floors(graph, comp)
    upward = sorted((a, b) for a in graph for b in graph[a] if comp[a] == comp[b])
    print(f"== floors: {max(level.values())}  ({len(mods)} modules, {sum(map(len, graph.values()))} edges)")
    for n in range(1, max(level.values()) + 1):
        names = ", ".join(short(m) for m in sorted(mods) if level[m] == n)
        print(fill(names, f"  {n:2}: "))
    print(f"upward imports (edges inside a cycle): {len(upward)}")
    for a, b in upward:
        print(f"  {short(a)} -> {short(b)}" + ("  (inside a function)" if (a, b) in lazy else ""))
    print(f"imports inside functions: {len(lazy)}")
    for a, b in sorted(lazy):
        print(f"  {short(a)} -> {short(b)}")


def trace_load() -> list[tuple[str, str]]:
    """The distinct codegen (file, function) pairs that loading the manifest calls, in first-call order."""
    import structgen.codegen
    from structgen.codegen.manifest import load_manifest

    seen: dict[tuple[str, str], None] = {}
    root = str(Path(structgen.codegen.__file__).parent) + "/"  # where this Python imports it from

    def profile(frame, event, _arg) -> None:
        code = frame.f_code
        if event == "call" and code.co_filename.startswith(root) and not code.co_name.startswith("<"):
            seen.setdefault((code.co_filename[len(root) :], code.co_qualname), None)

    sys.setprofile(profile)
    try:
        load_manifest(MANIFEST)
    finally:
        sys.setprofile(None)
    return list(seen)


def report_load_path() -> None:
    """Section 2: how often loading a manifest goes back into a file it has left."""
    calls = trace_load()
    if not calls:  # structgen.codegen imported from elsewhere than this checkout (not an editable install)
        print("\n== load path: no call traced under codegen/ (is structgen installed editable from here?)")
        return
    files = [f for f, _ in calls]
    hops = [f for i, f in enumerate(files) if i == 0 or f != files[i - 1]]
    returns = sum(1 for i, f in enumerate(hops) if f in hops[:i])
    print(
        f"\n== load path ({MANIFEST.relative_to(ROOT)}): stops {len(calls)}, files {len(set(files))}, "
        f"returns {returns}"
    )
    print(fill("\xa0> ".join(hops), "  "))


def functions() -> list[tuple[int, str, str]]:
    """Every def in codegen/ as (lines, file:line, qualified name)."""
    found, scopes = [], (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for path in sorted(CODEGEN.rglob("*.py")):
        todo: list[tuple[ast.AST, str]] = [(ast.parse(path.read_text()), "")]
        while todo:
            node, prefix = todo.pop()
            for child in ast.iter_child_nodes(node):
                name = prefix + child.name if isinstance(child, scopes) else prefix
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    where = f"{path.relative_to(CODEGEN).as_posix()}:{child.lineno}"
                    found.append((child.end_lineno - child.lineno + 1, where, name))
                todo.append((child, name + "." if isinstance(child, scopes) else prefix))
    return sorted(found, key=lambda f: (-f[0], f[1]))


def report_functions() -> None:
    """Section 3: the longest functions, the places a change is hardest to review."""
    found = functions()
    print(f"\n== largest functions ({len(found)} defs, {sum(1 for f in found if f[0] > 100)} over 100 lines)")
    for lines, where, name in found[:12]:
        print(f"  {lines:4}  {where:34} {name}")


def cpp_fstrings(path: Path) -> int:
    """How many f-strings of one file hold C++ text (see CPP); format specs are not counted."""
    tree = ast.parse(path.read_text())
    specs = {id(n.format_spec) for n in ast.walk(tree) if isinstance(n, ast.FormattedValue) and n.format_spec}
    return sum(
        1
        for n in ast.walk(tree)
        if isinstance(n, ast.JoinedStr)
        and id(n) not in specs
        and CPP.search("".join(v.value for v in n.values if isinstance(v, ast.Constant)))
    )


def report_fstrings() -> None:
    """Section 4: C++ written inline in Python f-strings rather than in templates."""
    per_file = {p.relative_to(CODEGEN).as_posix(): cpp_fstrings(p) for p in sorted(CODEGEN.rglob("*.py"))}
    per_dir: Counter[str] = Counter()
    for rel, n in per_file.items():
        top = rel.split("/")[0]
        per_dir[top if top in ("rules", "pointwise", "autograd", "dest") else "other"] += n
    print(f"\n== f-strings holding C++: {sum(per_file.values())}")
    print("  " + ", ".join(f"{d} {per_dir[d]}" for d in ("rules", "pointwise", "autograd", "dest", "other")))
    top = sorted(((n, f) for f, n in per_file.items() if n), key=lambda t: (-t[0], t[1]))[:10]
    print(fill(", ".join(f"{f}\xa0{n}" for n, f in top), "  top files: "))


def report_duplicates() -> None:
    """Section 5: what the `duplicates` command finds repeated within codegen/."""
    if shutil.which("duplicates") is None:
        print("\n== duplicates: not on PATH")
        return
    command = ["duplicates", "--repo", str(CODEGEN), "--most", "200", "--seconds", "120"]
    out = subprocess.run(command, capture_output=True, text=True, check=False).stdout.splitlines()
    pairs = re.match(r"(\d+) pairs", out[0] if out else "")
    rows = [line for line in out if re.match(r"D\d+ ", line)]
    more = sum(int(m) for line in rows for m in re.findall(r"\(\+(\d+) more runs\)", line))
    print(f"\n== duplicates: {pairs[1] if pairs else 0} pairs, {len(rows) + more} runs")
    for line in out[:1] + [line for line in out if line.startswith(("left out:", "incomplete:"))]:
        print(f"  {line}")


if __name__ == "__main__":
    for report in (report_floors, report_load_path, report_functions, report_fstrings, report_duplicates):
        report()
