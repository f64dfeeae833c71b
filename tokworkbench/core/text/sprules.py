"""The normalization rules SentencePiece's trainer builds in, for training a model of its kinds.

`nmt_nfkc` (spm_train's default) is NFKC plus NMT's fixes (control characters dropped, odd
spaces to a space); its precompiled charsmap is the one spm_train writes into every model it
trains with the default rule (data/nmt_nfkc.charsmap, from SentencePiece's
normalization_rule.h, Apache-2.0). `identity` maps nothing. Both collapse whitespace, as
`remove_extra_whitespaces` does by default.
"""

from functools import cache
from importlib.resources import files

from tokworkbench.core.errors import TrainingError
from tokworkbench.core.text.charsmap import read_charsmap
from tokworkbench.core.text.spnormalize import SpNormalizer

RULES = ("nmt_nfkc", "identity")


@cache
def _nmt_nfkc() -> SpNormalizer:
    blob = files("tokworkbench.core.text").joinpath("data", "nmt_nfkc.charsmap").read_bytes()
    return SpNormalizer(read_charsmap(blob), "nmt_nfkc", True)


def sp_rule(name: str) -> SpNormalizer:
    """The normalizer spm_train's `--normalization_rule_name=name` gives."""
    if name == "nmt_nfkc":
        return _nmt_nfkc()
    if name == "identity":
        return SpNormalizer(None, "identity", True)
    raise TrainingError(f"unknown SentencePiece normalization rule {name!r}; choose {' or '.join(RULES)}")
