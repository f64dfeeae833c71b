"""What every file shares: atomic writes, read limits, our model file's envelope (see docs/design.md)."""
