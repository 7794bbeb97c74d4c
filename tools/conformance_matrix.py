"""Run the conformance suite (tests/conformance) and print the ops x checks matrix as Markdown.

    python tools/conformance_matrix.py [extra pytest args]

A cell reads "pass 22", "FAIL 1/22" or "skip: <reason>"; partly skipped cells say how many ran.
"""

import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST_ID = re.compile(r"test_conformance\[(?P<op>[^-\]]+)-(?P<check>[^-\]]+)-(?P<device>\w+)-(?P<dtype>\w+)\]")


def run_suite(extra: list[str]) -> ET.Element:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "tests/conformance",
                "-q",
                "-p",
                "no:logging",
                f"--junitxml={report}",
                *extra,
            ],
            cwd=ROOT,
            check=False,
        )
        return ET.parse(report).getroot()


def matrix(root: ET.Element) -> tuple[list[str], list[str], dict]:
    cells: dict[tuple[str, str], dict] = defaultdict(lambda: {"pass": 0, "fail": 0, "skip": defaultdict(int)})
    for case in root.iter("testcase"):
        m = TEST_ID.match(case.get("name", ""))
        if not m:
            continue
        cell = cells[(m["op"], m["check"])]
        skipped, failed = case.find("skipped"), case.find("failure") or case.find("error")
        if failed is not None:
            cell["fail"] += 1
        elif skipped is not None:
            reason = (skipped.get("message") or "").removeprefix("Skipped: ")
            cell["skip"][reason] += 1
        else:
            cell["pass"] += 1
    ops = sorted({op for op, _ in cells})
    checks = list(dict.fromkeys(check for _, check in cells))
    return ops, checks, cells


def render(ops, checks, cells) -> str:
    def cell(c) -> str:
        ran = c["pass"] + c["fail"]
        if c["fail"]:
            return f"**FAIL {c['fail']}/{ran}**"
        if ran:
            note = f" (+{sum(c['skip'].values())} skipped)" if c["skip"] else ""
            return f"pass {ran}{note}"
        return "skip: " + "; ".join(c["skip"]) if c["skip"] else "—"

    lines = ["| op | " + " | ".join(checks) + " |", "|---" * (len(checks) + 1) + "|"]
    for op in ops:
        lines.append(f"| {op} | " + " | ".join(cell(cells[(op, ch)]) for ch in checks) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render(*matrix(run_suite(sys.argv[1:]))))
