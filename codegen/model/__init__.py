"""The model at the bottom: the manifest as frozen types, importing nothing of the parsers.

schema (PyTorch's function schemas), rule_tree / rule_ir / rule (a ``meta:`` rule as written, its
typed IR and the rule as a whole), formula (the formula language's trees), pointwise (a lowered
pointwise kernel), autograd (derivatives as written and their typed IR), native (entries,
structured groups, the manifest). The parsers and checkers above build these; dest/ reads them.
"""
