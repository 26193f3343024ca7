"""iclab.hf (see DESIGN.md)."""
