"""spm_train's `character_coverage` (`TrainerInterface::LoadSentences`, trainer_interface.cc),
shared by the two trainers that follow it (SentencePiece BPE, Unigram em) so that both keep the
same characters of the same counts.

The characters are taken in its `Sorted()` order over (is required, count): `--required_chars`
first whatever the coverage (even those the text lacks, at count 0), then most frequent first,
then by code point, each while the share already covered, computed in double and compared as
float32 (`const float coverage = 1.0 * accumulated / all`), is below the coverage. The rest are
not pieces: spm_train turns them into its unknown character (U+2585) before training.
"""

from collections import Counter

import numpy as np

from tokworkbench.core.errors import SettingError

UNK_CHAR = "\u2585"  # the trainer's kUNKChar


def check_coverage(value) -> None:
    if not (isinstance(value, (int, float)) and not isinstance(value, bool) and 0.98 <= value <= 1.0):
        raise SettingError("character_coverage", value, "must be between 0.98 and 1 (SentencePiece's range)")


def kept_characters(char_counts: Counter, character_coverage: float,
                    required_chars: str = "") -> list[tuple[str, int]]:
    """The characters kept with their counts, most frequent first (then by code point): the
    order of spm_train's `Sorted(required_chars_)`, its model's characters. NUL is skipped as
    SentencePiece skips it; `char_counts` is left as it was."""
    counts = Counter({ch: n for ch, n in char_counts.items() if ch != "\0"})
    total = sum(counts.values())
    forced = set(required_chars) - {"\0"}
    for ch in forced:
        counts.setdefault(ch, 0)
    threshold = np.float32(character_coverage)
    kept: list[tuple[str, int]] = []
    covered = 0
    for ch, n in sorted(counts.items(), key=lambda item: (item[0] not in forced, -item[1], ord(item[0]))):
        if total and np.float32(covered / total) >= threshold:
            break
        covered += n
        kept.append((ch, n))
    kept.sort(key=lambda item: (-item[1], ord(item[0])))
    return kept
