"""Normalizers: the first pipeline stage, applied to every document before pre-tokenization.

NFC and NFKC are Hugging Face's (hfnormal.py), so that a model exported with its normalizer
gives the same ids in `tokenizers`."""

from tokworkbench.core.errors import TrainingError
from tokworkbench.core.text import hfnormal

NORMALIZERS = ("none", "nfc", "nfkc")


def check_normalizer(name: str) -> str:
    name = name.lower()
    if name not in NORMALIZERS:
        raise TrainingError(f"unknown normalizer {name!r}; choose one of {', '.join(NORMALIZERS)}")
    return name


def normalize(text: str, name: str) -> str:
    if name == "none":
        return text
    return hfnormal.normalize(name.upper(), text)
