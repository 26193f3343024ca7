"""The version of iclab, written in one place (``iclab.__version__`` re-exports it; pyproject.toml reads it).

A module of its own, below every layer, so that code low in the stack (run folders record the version) needs
no import of the ``iclab`` package itself, whose lazy ``iclab.load_run`` points up to the experiments."""

__version__ = "0.1.0"
