"""FileManager: render every output first, then write only the files whose content changed.

Rendering everything before writing anything means a SpecError (or a template bug) leaves the
output folder as it was: no half-written generation. Unchanged files keep their mtime, so a
no-op regeneration recompiles nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from structgen.codegen.version import GENERATOR_VERSION

TEMPLATES = Path(__file__).parent / "templates"
REGENERATE = "python -m structgen.codegen (run by the CMake build)"

_COMMENT = {
    ".cpp": "//",
    ".h": "//",
    ".cu": "//",
    ".cuh": "//",
    ".py": "#",
    ".pyi": "#",
    ".cmake": "#",
    ".txt": "#",
}


def cpp_raw_string(text: str) -> str:
    """``text`` as a C++ raw string literal, verbatim: ``R"schema(...)schema"``, or with a numbered
    delimiter when the text itself holds ``)schema"`` (a string default may), which would end it."""
    delimiter, n = "schema", 0
    while f'){delimiter}"' in text:
        n += 1
        delimiter = f"schema{n}"
    return f'R"{delimiter}({text}){delimiter}"'


def make_environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
        auto_reload=False,  # one run: a template is not edited under it (saves a stat per render)
    )
    env.filters["pyrepr"] = repr
    env.filters["tag_enum"] = lambda tag: f"at::Tag::{tag}"
    env.filters["cpp_raw_string"] = cpp_raw_string
    return env


def banner(path: str, template: str, source: str) -> str:
    mark = _COMMENT[Path(path).suffix]
    return (
        f"{mark} @generated from {source} by codegen/templates/{template} (generator {GENERATOR_VERSION})"
        " — DO NOT EDIT.\n"
        f"{mark} Regenerate with: {REGENERATE}\n"
    )


@dataclass
class FileManager:
    out_dir: Path
    source: str  # the manifest's name, for the banner
    # What every template sees besides its own context: the project's names and the runtime's.
    names: dict[str, Any] = field(default_factory=dict)
    env: jinja2.Environment = field(default_factory=make_environment)
    # Each output's text; None once settle() found the file on disk holding it already.
    planned: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.env.globals.update(self.names)  # globals: macros imported by a template see them too

    def render(self, path: str, template: str, **context: Any) -> None:
        if path in self.planned:
            raise RuntimeError(f"codegen bug: {path} rendered twice")
        body = self.env.get_template(template).render(**context)
        self.planned[path] = banner(path, template, self.source) + body

    def part(self) -> FileManager:
        """An empty FileManager for one section's files (codegen/gen.py), on the same templates."""
        return FileManager(self.out_dir, self.source, self.names, self.env)

    def merge(self, planned: dict[str, str | None]) -> None:
        """Add a part's rendered files."""
        for path, text in planned.items():
            if path in self.planned:
                raise RuntimeError(f"codegen bug: {path} rendered twice")
            self.planned[path] = text

    def settle(self) -> None:
        """Drop the text of every file the disk already holds: it is not written again, and a
        worker's part (codegen/workers.py) sends back only what changed."""
        for rel, text in self.planned.items():
            if text is not None:
                dest = self.out_dir / rel
                if dest.exists() and dest.read_text() == text:
                    self.planned[rel] = None

    def commit(self, owned_dirs: tuple[str, ...] = ()) -> list[str]:
        """Write changed files; delete stale files in ``owned_dirs``. Returns what was written."""
        self.settle()
        written = []
        for rel, text in sorted(self.planned.items()):
            if text is None:
                continue
            dest = self.out_dir / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(dest.name + ".tmp")
            tmp.write_text(text)
            tmp.replace(dest)
            written.append(rel)
        for d in owned_dirs:
            folder = self.out_dir / d
            if not folder.is_dir():
                continue
            for f in folder.iterdir():
                if f.is_file() and f.relative_to(self.out_dir).as_posix() not in self.planned:
                    f.unlink()
        return written
