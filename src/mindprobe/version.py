"""The package's version, in a module of its own so every layer can name it without importing
the package's front door (`mindprobe/__init__.py`, whose lazy exports reach the top layers)."""

__version__ = "0.1.0"
