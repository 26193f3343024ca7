"""NumPy closed forms, one module per paper: ``iclab.theory.temperature``, ``.multihead``, ``.ood``,
``.dispersion``, ``.categorical``. Import the module you need (they are not re-exported, to keep names
unambiguous: each paper has its own ``G``/``risk``)."""
