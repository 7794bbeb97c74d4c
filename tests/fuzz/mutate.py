"""Seeded mutations of a YAML manifest: of its text (lines and tokens) and of its parsed structure.

Each mutation takes a ``random.Random`` and returns the mutant with a one-line description, so a
failing mutant can be described, replayed and shrunk.
"""

from __future__ import annotations

import copy
import random
import re

import yaml

TYPES = [
    "Tensor",
    "Tensor?",
    "Tensor[]",
    "Tensor?[]",
    "Tensor(a!)",
    "Tensor(a)",
    "Tensor(b!)[]",
    "int",
    "int[]",
    "int[1]?",
    "int[2]",
    "SymInt",
    "SymInt[]",
    "float",
    "bool",
    "str",
    "Scalar",
    "Scalar?",
    "ScalarType?",
    "Layout?",
    "Device?",
    "Generator?",
    "Dimname",
    "MemoryFormat",
    "Storage",
    "any",
]
NAMES = [
    "self",
    "other",
    "out",
    "dim",
    "alpha",
    "add",
    "add.out",
    "neg",
    "x",
    "_",
    "__init__",
    "lambda",
    "class",
    "and",
    "co_await",
    "new",
    "op",
    "so_meta",
    "out_shape",
    "_ops",
    "meta",
    "Tensor",
    "std",
    "a.b.c",
    "1abc",
    "numel",
    "broadcast",
    "promote",
    "reduce",
    "like",
    "len",
    "ndim",
    "size",
]
KEYWORDS = [
    "True",
    "False",
    "None",
    "null",
    "~",
    "yes",
    "structured",
    "structured_delegate",
    "dispatch",
    "CPU",
    "CUDA",
    "Meta",
    "meta",
    "custom",
    "pointwise",
    "tags",
    "tests",
    "reference",
    "shape",
    "dtype",
    "layout",
    "checks",
    "precomputed",
    "kernels",
    "key",
    "when",
    "doc",
    "func",
    "skip",
    "errors",
    "samples",
    "args",
    "kind=FLOAT",
    "kind=SAME",
    "->",
    "*",
    "if",
    "else",
    "not",
    "or",
]
NUMBERS = [
    "0",
    "-1",
    "1",
    "2",
    "64",
    "1.5",
    "-0.0",
    "1e309",
    "nan",
    "inf",
    "-inf",
    "0x10",
    "0o7",
    "1_000",
    "99999999999999999999",
    "-9223372036854775809",
    "9223372036854775807",
    "3j",
]
PUNCTUATION = [
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    "<",
    ">",
    ",",
    ":",
    "?",
    "!",
    "=",
    "==",
    "*",
    "**",
    "/",
    "%",
    "-",
    "+",
    "|",
    "&",
    "#",
    "@",
    "`",
    "'",
    '"',
    "'''",
    '"""',
    "\\",
    ";",
    ".",
    "...",
    "- ",
]
UNICODE = [
    "é",
    "ñ",
    "Ω",
    "中文",
    "😀",
    "\u200b",
    "\u202e",
    "\ufeff",
    "\u00a0",
    "\u2028",
    "𝔵",
    "ǅ",
    "\t",
    "\x00",
    "\x1b",
    "\r",
]
LONG = [
    "x" * 10_000,
    "(" * 300 + "x" + ")" * 300,
    "[" * 200 + "]" * 200,
    "{" * 100 + "}" * 100,
    "a" + " + a" * 2000,
    "not " * 500 + "x",
    "-" * 1000 + "1",
    "self," * 500,
]
VOCABULARY = TYPES + NAMES + KEYWORDS + NUMBERS + PUNCTUATION + UNICODE + LONG

_TOKEN = re.compile(r"\w+|[^\w\s]")


def vocabulary_word(rng: random.Random) -> str:
    """A word of one of the vocabularies, each vocabulary about equally likely."""
    return rng.choice(rng.choice([TYPES, NAMES, KEYWORDS, NUMBERS, PUNCTUATION, UNICODE, LONG]))


# -- text level: each returns (lines, changed line index, description)


def _pick(lines: list[str], rng: random.Random) -> int:
    return rng.randrange(len(lines))


def delete_line(lines, rng):
    i = _pick(lines, rng)
    return lines[:i] + lines[i + 1 :], i, f"delete line {i + 1}"


def duplicate_line(lines, rng):
    i = _pick(lines, rng)
    return lines[: i + 1] + lines[i:], i, f"duplicate line {i + 1}"


def swap_lines(lines, rng):
    i, j = sorted((_pick(lines, rng), _pick(lines, rng)))
    lines = list(lines)
    lines[i], lines[j] = lines[j], lines[i]
    return lines, i, f"swap lines {i + 1} and {j + 1}"


def reindent_line(lines, rng):
    i = _pick(lines, rng)
    indent = " " * rng.choice([0, 1, 2, 3, 4, 6, 8])
    lines = list(lines)
    lines[i] = indent + lines[i].lstrip(" ")
    return lines, i, f"indent line {i + 1} by {len(indent)}"


def _token_edit(lines, rng, insert: bool):
    candidates = [i for i, line in enumerate(lines) if _TOKEN.search(line)] or [0]
    i = rng.choice(candidates)
    spans = [m.span() for m in _TOKEN.finditer(lines[i])] or [(0, 0)]
    start, end = rng.choice(spans)
    word = vocabulary_word(rng)
    if insert:
        start = end = rng.choice((start, end))
    old = lines[i][start:end]
    lines = list(lines)
    lines[i] = lines[i][:start] + word + lines[i][end:]
    what = f"insert {_show(word)}" if insert else f"replace {_show(old)} by {_show(word)}"
    return lines, i, f"line {i + 1} column {start + 1}: {what}"


def replace_token(lines, rng):
    return _token_edit(lines, rng, insert=False)


def insert_token(lines, rng):
    return _token_edit(lines, rng, insert=True)


TEXT_MUTATIONS = [delete_line, duplicate_line, swap_lines, reindent_line] + [replace_token, insert_token] * 4


def mutate_text(text: str, rng: random.Random) -> tuple[str, int, str]:
    """One text mutation: (mutant, 1-based line changed, description)."""
    lines = text.splitlines(keepends=True)
    mutation = rng.choice(TEXT_MUTATIONS)
    lines, i, desc = mutation([line.rstrip("\n") for line in lines], rng)
    return "".join(line + "\n" for line in lines), i + 1, desc


# -- structure level: on the parsed YAML (a list of entry mappings); each mutates in place


def wrong_value(rng: random.Random):
    """A value of a random type: scalars, containers, long and deeply nested values."""
    nested = [1]
    for _ in range(rng.choice([2, 30, 200])):
        nested = [nested]
    return rng.choice(
        [
            None,
            True,
            False,
            0,
            -1,
            1.5,
            float("nan"),
            "",
            "x",
            [],
            {},
            [1, "a"],
            {"a": 1},
            {"CPU": ["x"]},
            nested,
            vocabulary_word(rng),
            [vocabulary_word(rng)],
            {vocabulary_word(rng): vocabulary_word(rng)},
        ]
    )


def _mapping_paths(node, path=()):
    """Every (path, mapping) inside ``node``, lists included."""
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from _mapping_paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _mapping_paths(v, (*path, i))


def mutate_structure(entries: list, rng: random.Random) -> str:
    """One structure mutation of ``entries`` (in place); returns its description."""
    if not entries or rng.random() < 0.1:
        i = rng.randrange(len(entries) + 1)
        value = wrong_value(rng)
        entries.insert(i, value)
        return f"insert entry {i}: {_show(value)}"
    e = rng.randrange(len(entries))
    where = f"entry {e} ({_show(entries[e].get('func')) if isinstance(entries[e], dict) else '?'})"
    kind = rng.choice(
        [
            "drop_entry",
            "duplicate_entry",
            "drop_key",
            "retype",
            "retype",
            "retype",
            "rename",
            "swap",
            "add_key",
        ]
    )
    if kind == "drop_entry":
        del entries[e]
        return f"drop {where}"
    if kind == "duplicate_entry":
        entries.insert(e, copy.deepcopy(entries[e]))
        return f"duplicate {where}"
    mappings = list(_mapping_paths(entries[e]))
    if not mappings:
        entries[e] = wrong_value(rng)
        return f"{where}: replace by {_show(entries[e])}"
    path, mapping = rng.choice(mappings)
    where += " at " + "/".join(map(str, path))
    keys = list(mapping)
    if kind == "add_key" or not keys:
        key = rng.choice([vocabulary_word(rng), 5, None, True])
        mapping[key] = wrong_value(rng)
        return f"{where}: add key {_show(key)}: {_show(mapping[key])}"
    key = rng.choice(keys)
    if kind == "drop_key":
        del mapping[key]
        return f"{where}: drop key {_show(key)}"
    if kind == "rename":
        new = rng.choice([vocabulary_word(rng), rng.choice(keys), 5, 1.5, None])
        mapping[new] = mapping.pop(key)
        return f"{where}: rename key {_show(key)} to {_show(new)}"
    if kind == "swap":
        other = rng.choice(keys)
        mapping[key], mapping[other] = mapping[other], mapping[key]
        return f"{where}: swap the values of {_show(key)} and {_show(other)}"
    mapping[key] = wrong_value(rng)
    return f"{where}: {_show(key)} becomes {_show(mapping[key])}"


def dump(entries) -> str:
    return yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=1 << 30)


def _show(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"...({len(text)} chars)"
