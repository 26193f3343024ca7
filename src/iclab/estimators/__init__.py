"""iclab.estimators (see DESIGN.md)."""
