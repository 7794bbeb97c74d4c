"""Run code once a module of torch's that the runtime extends has been imported, without importing
it first (torch._dynamo takes about a second to import, torch.distributed.tensor half that)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable


class _AfterImport:
    """A meta path finder that runs ``callbacks`` once ``module`` has been imported: one finder
    per module, since the first finder to answer is the only one asked."""

    def __init__(self, module: str) -> None:
        self.module, self.callbacks = module, []

    def find_spec(self, fullname, path, target=None):
        if fullname != self.module:
            return None
        sys.meta_path.remove(self)
        del _WAITING[self.module]
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def run(module):
            exec_module(module)
            for callback in self.callbacks:
                callback()

        spec.loader.exec_module = run
        return spec


_WAITING: dict[str, _AfterImport] = {}


def when_imported(module: str, callback: Callable[[], None]) -> None:
    """``callback()`` now if ``module`` is imported, else right after its import."""
    if module in sys.modules:
        callback()
        return
    if module not in _WAITING:
        _WAITING[module] = _AfterImport(module)
        sys.meta_path.insert(0, _WAITING[module])
    _WAITING[module].callbacks.append(callback)
