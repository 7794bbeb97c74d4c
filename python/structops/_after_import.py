"""Run code once a module of torch's that structops extends has been imported, without importing
it first (torch._dynamo takes about a second to import, torch.distributed.tensor half that)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable


class _AfterImport:
    """A meta path finder that runs ``callback`` once ``module`` has been imported."""

    def __init__(self, module: str, callback: Callable[[], None]) -> None:
        self.module, self.callback = module, callback

    def find_spec(self, fullname, path, target=None):
        if fullname != self.module:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def run(module):
            exec_module(module)
            self.callback()

        spec.loader.exec_module = run
        return spec


def when_imported(module: str, callback: Callable[[], None]) -> None:
    """``callback()`` now if ``module`` is imported, else right after its import."""
    if module in sys.modules:
        callback()
    else:
        sys.meta_path.insert(0, _AfterImport(module, callback))
