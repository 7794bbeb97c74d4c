"""The manifest's ``project:`` header as the model holds it: the names a generated package takes
(operator namespace, C++ namespace, Python package, include prefix). Data only: project.py parses
the header.
"""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen.version import MANIFEST_FORMAT


@dataclass(frozen=True)
class Project:
    name: str  # the operator namespace: torch.ops.<name>, TORCH_LIBRARY(<name>)
    cpp_namespace: str
    python_package: str
    include_prefix: str
    sources: tuple[str, ...]  # hand-written source folders, relative to the manifest
    autotune_cache: str
    format: int = MANIFEST_FORMAT

    @staticmethod
    def named(name: str) -> Project:
        """Every name derived from ``name`` (what a header of only ``name:`` declares)."""
        return Project(name, name, name, name, ("csrc",), name)

    @property
    def python_dir(self) -> str:
        """The generated Python modules' folder under the output folder."""
        return "python/" + self.python_package.replace(".", "/")

    @property
    def env_prefix(self) -> str:
        """The prefix of its runtime's environment variables: MYOPS_AUTOTUNE_PIN for myops."""
        return self.name.upper()


# The project of a manifest without a header (the tests' small manifests): names no package.
DEFAULT_PROJECT = Project.named("ops")
