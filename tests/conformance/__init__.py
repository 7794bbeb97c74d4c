"""structops' own parts of the conformance suite: its OpInfo adapters and torch-schema checks, and
the generic suite (structgen.conformance) run on its manifest."""
