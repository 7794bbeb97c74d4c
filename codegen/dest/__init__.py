"""Emitters: one module per kind of output, each turning the manifest into template contexts."""
