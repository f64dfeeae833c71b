"""tokworkbench: see and shape how text becomes tokens."""

__version__ = "0.1.0"
