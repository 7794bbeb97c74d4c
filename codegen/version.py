"""The generator's version and the manifest format it reads; a leaf, so the file writer can stamp
every generated file with the version that made it."""

GENERATOR_VERSION = "0.6.0"
# A manifest states the format it is written for (the project header's ``format:``); one written
# for a newer format is refused rather than half understood (codegen/project.py).
MANIFEST_FORMAT = 1
