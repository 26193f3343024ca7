"""iclab.models (see DESIGN.md)."""
