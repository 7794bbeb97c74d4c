"""Naming and type conventions: pure functions from the schema model to typed values."""
