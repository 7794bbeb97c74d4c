"""The shape/dtype rule language: syntax, the Rule model, C++ lowering."""
