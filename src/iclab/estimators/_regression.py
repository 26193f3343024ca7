"""OLS, ridge and Bayes posterior mean (work in progress)."""

__all__: list[str] = []
