"""iclab.theory (see DESIGN.md)."""
