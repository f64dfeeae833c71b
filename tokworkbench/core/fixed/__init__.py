"""The fixed-vocabulary kind: a given token list, matched longest first, and its files."""
