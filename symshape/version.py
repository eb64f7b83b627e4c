"""The package version, for the code symshape writes (the standalone artifact) and the CLI."""
__version__ = "0.1.0"
