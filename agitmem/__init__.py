"""agitmem: an AI coding agent's working memory, versioned in git."""
# the one place the version is written (pyproject reads it; docs/release.md)
__version__ = '0.1.0'
