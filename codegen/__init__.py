"""structgen, the structured-kernel generator: native_functions.yaml -> C++/Python sources for one extension.

Pure Python (PyYAML + jinja2); it never imports torch, so it runs before torch is built or on
machines without it.
"""
