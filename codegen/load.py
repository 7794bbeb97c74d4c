"""Read the manifest YAML, keeping the line of every mapping and key.

PyYAML's plain loader drops positions and silently lets a repeated key win; both are wrong for a
file people edit by hand, so this loader records lines and rejects duplicate keys. It also
rejects aliases: a few nested ones expand to gigabytes (an "alias bomb"), and a manifest has no
need for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from structgen.codegen.errors import SpecError


class LineDict(dict):
    """A YAML mapping that remembers where it and each of its keys start (1-based lines)."""

    line: int = 0
    key_lines: dict[Any, int]

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


def _line(mark: yaml.Mark | None) -> int:
    return mark.line + 1 if mark else 1


# libyaml's parser and composer (PyYAML's wheels carry it) build the node tree about 10x faster
# than the pure-Python ones; the nodes keep their lines either way.
_BASE_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _reject_aliases(node: yaml.Node | None, text: str, path: str) -> None:
    """An alias is a node the tree holds twice: refused, at the alias, before anything expands it."""
    seen: set[int] = set()
    stack = [] if node is None else [node]
    while stack:
        n = stack.pop()
        if id(n) in seen:  # the events say where the alias is (the node is the anchor's)
            alias = next(e for e in yaml.parse(text, Loader=_BASE_LOADER) if isinstance(e, yaml.AliasEvent))
            raise SpecError(
                path, _line(alias.start_mark), None, "YAML aliases are not supported", "write the value out"
            )
        seen.add(id(n))
        if isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)
        elif isinstance(n, yaml.MappingNode):
            stack.extend(v for pair in n.value for v in pair)


def _loader_class(path: str) -> type:
    class LineLoader(_BASE_LOADER):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> LineDict:
            self.flatten_mapping(node)
            key_lines: dict[Any, int] = {}
            for key_node, _ in node.value:
                line = _line(key_node.start_mark)
                if not isinstance(key_node, yaml.ScalarNode):
                    raise SpecError(
                        path,
                        line,
                        None,
                        "a mapping key must be a name, not a list or a mapping",
                        "write 'key: value'",
                    )
                key = self.construct_object(key_node, deep=True)
                if key in key_lines:
                    raise SpecError(
                        path,
                        line,
                        None,
                        f"duplicate key '{key}' (first given on line {key_lines[key]})",
                        "keep one of the two",
                    )
                key_lines[key] = line
            mapping = LineDict(super().construct_mapping(node, deep=True))
            mapping.line = _line(node.start_mark)
            mapping.key_lines = key_lines
            return mapping

    LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, LineLoader.construct_mapping)
    return LineLoader


def _reader_line(text: str, e: yaml.reader.ReaderError) -> int:
    return text.count("\n", 0, e.position) + 1 if isinstance(e.position, int) else 1


def _compose(text: str, path: str) -> tuple[yaml.SafeLoader, yaml.Node | None]:
    """The YAML's node tree (positions, no values yet), and the loader that constructs it."""
    try:
        loader = _loader_class(path)(text)  # the reader checks for control characters here
        node = loader.get_single_node()
        _reject_aliases(node, text, path)
        return loader, node
    except yaml.reader.ReaderError as e:
        raise SpecError(
            path,
            _reader_line(text, e),
            None,
            f"invalid YAML: control character {chr(e.character)!r} in the file",
            "remove it",
        ) from None
    except yaml.MarkedYAMLError as e:
        raise _syntax_error(path, e, text) from None


def _syntax_error(path: str, e: yaml.MarkedYAMLError, text: str) -> SpecError:
    """The YAML problem at a line of the file. A file that ends inside a quote or a bracket has
    its problem at the end of the stream, often a line past the last: the error names the line
    where the unclosed quote or bracket opens (the context mark), which is where to fix it."""
    lines = max(1, text.count("\n") + (not text.endswith("\n")))
    mark, problem, fix = e.problem_mark or e.context_mark, e.problem, "fix the YAML syntax"
    if mark is not None and mark.index >= len(text) and e.context_mark is not None:
        mark, problem = e.context_mark, f"{e.problem} {e.context}"
        fix += ": the file ends inside it"
    return SpecError(path, min(_line(mark), lines), None, f"invalid YAML: {problem}", fix)


def _construct(loader: yaml.SafeLoader, node: yaml.Node | None, path: str, text: str) -> Any:
    try:
        return None if node is None else loader.construct_document(node)
    except yaml.MarkedYAMLError as e:
        raise _syntax_error(path, e, text) from None
    finally:
        loader.dispose()


def load_yaml(text: str, path: str) -> Any:
    """Parse YAML text; syntax errors become SpecError at the offending line."""
    loader, node = _compose(text, path)
    return _construct(loader, node, path, text)


def read_manifest_entries(path: Path, display_path: str | None = None) -> list[LineDict]:
    """Return the manifest's top-level list of entries, each a LineDict."""
    shown = display_path or path.name
    text = path.read_text()
    loader, node = _compose(text, shown)
    if node is not None and not isinstance(node, yaml.SequenceNode):
        loader.dispose()
        raise SpecError(
            shown,
            1,
            None,
            "the manifest must be a YAML list of entries",
            "start each entry with '- func: ...'",
        )
    for item in node.value if node is not None else ():
        if not isinstance(item, yaml.MappingNode):
            loader.dispose()
            kind = {yaml.SequenceNode: "list"}.get(type(item), "scalar")
            raise SpecError(
                shown,
                _line(item.start_mark),
                None,
                f"entry is a {kind}, not a mapping",
                "write each entry as '- func: <schema>' followed by its keys",
            )
    return _construct(loader, node, shown, text) or []
