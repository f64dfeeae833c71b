"""Normalizers: the first pipeline stage, applied to every document before pre-tokenization."""

import unicodedata

from tokworkbench.core.errors import TrainingError

NORMALIZERS = ("none", "nfc", "nfkc")


def check_normalizer(name: str) -> str:
    name = name.lower()
    if name not in NORMALIZERS:
        raise TrainingError(f"unknown normalizer {name!r}; choose one of {', '.join(NORMALIZERS)}")
    return name


def normalize(text: str, name: str) -> str:
    if name == "none":
        return text
    return unicodedata.normalize(name.upper(), text)
