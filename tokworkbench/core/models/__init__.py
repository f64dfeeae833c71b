"""Trained models: what encodes and decodes, and the map to the ids the outside world uses."""
