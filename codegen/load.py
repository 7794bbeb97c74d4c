"""Read the manifest YAML, keeping the line of every mapping and key.

PyYAML's plain loader drops positions and silently lets a repeated key win; both are wrong for a
file people edit by hand, so this loader records lines and rejects duplicate keys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from codegen.errors import SpecError


class LineDict(dict):
    """A YAML mapping that remembers where it and each of its keys start (1-based lines)."""

    line: int = 0
    key_lines: dict[Any, int]

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


def _loader_class(path: str) -> type[yaml.SafeLoader]:
    class LineLoader(yaml.SafeLoader):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> LineDict:
            self.flatten_mapping(node)
            key_lines: dict[Any, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                if key in key_lines:
                    raise SpecError(
                        path, line, None,
                        f"duplicate key '{key}' (first given on line {key_lines[key]})",
                        "keep one of the two",
                    )
                key_lines[key] = line
            mapping = LineDict(super().construct_mapping(node, deep=True))
            mapping.line = node.start_mark.line + 1
            mapping.key_lines = key_lines
            return mapping

    LineLoader.add_constructor(
        yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, LineLoader.construct_mapping
    )
    return LineLoader


def load_yaml(text: str, path: str) -> Any:
    """Parse YAML text; syntax errors become SpecError at the offending line."""
    try:
        return yaml.load(text, Loader=_loader_class(path))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        raise SpecError(path, line, None, f"invalid YAML: {e.problem}", "fix the YAML syntax") from None


def read_manifest_entries(path: Path, display_path: str | None = None) -> list[LineDict]:
    """Return the manifest's top-level list of entries, each a LineDict."""
    shown = display_path or path.name
    data = load_yaml(path.read_text(), shown)
    if data is None:
        return []
    if not isinstance(data, list):
        raise SpecError(shown, 1, None, "the manifest must be a YAML list of entries",
                        "start each entry with '- func: ...'")
    for item in data:
        if not isinstance(item, LineDict):
            line = getattr(item, "line", 1)
            raise SpecError(shown, line, None, f"entry is a {type(item).__name__}, not a mapping",
                            "write each entry as '- func: <schema>' followed by its keys")
    return data
