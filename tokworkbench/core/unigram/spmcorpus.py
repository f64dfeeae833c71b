"""What `spm_train --model_type=unigram` (sentencepiece 0.2.3) trains on, read from our texts as
its `TrainerInterface::LoadSentences` and `SplitSentencesByWhitespace` read its files.

- Each line of each text (cut at "\\n" only: a "\\r" stays, a character like any other) is a
  sentence; an empty line, one of over 4,192 bytes and one holding ▅ (U+2585) are skipped.
- A sentence is normalized (the session's normalizer, then spm_train's whitespace rule: spaces
  at the ends dropped, runs of them one, each a ▁, the dummy ▁ in front), and every meta piece in
  it (<unk> <s> </s>, the control and user-defined symbols, the byte pieces) becomes the trainer's
  boundary character, U+001F, longest first. One that normalizes to nothing is dropped by moving
  the last sentence into its place: the order decides which sentence ends the corpus, and the
  seed gives that end a branch of its own (spseed.py).
- The characters are counted (U+001F among them: it counts towards the coverage but is never
  kept) and those `character_coverage` keeps taken (core/text/spcoverage.py); every other one
  becomes ▅, the trainer's unknown character, so a meta piece in the text is an unknown there.
- The sentences are cut before each ▁ into words: counted, with how often each ends a sentence,
  and sorted by count, then by UTF-8 bytes.

Read from a table of counted chunks instead (a count file: no lines), the words are the chunks
cut at their line breaks, and nothing is known of the last sentence; see `from_chunks`.
"""

from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import regex

from tokworkbench.core.errors import CorpusError
from tokworkbench.core.text.normalize import normalize
from tokworkbench.core.text.spcoverage import UNK_CHAR, kept_characters
from tokworkbench.core.text.spnormalize import META
from tokworkbench.core.text.spoptions import MAX_SENTENCE_BYTES
from tokworkbench.core.unigram.hashing import code_points

_BATCH = 1 << 16  # words read before they are counted
BOUNDARY = "\x1f"  # TrainerInterface::kPretokenizationBoundaryChar: what a meta piece becomes
_WORD = regex.compile(f"{META}[^{META}]*|[^{META}]+")


@dataclass(frozen=True)
class SpmCorpus:
    """The words spm_train's EM sees, and what its seed needs besides."""

    words: list[str]  # distinct, most frequent first, then by UTF-8 bytes
    counts: np.ndarray  # int64, each word's occurrences
    line_ends: np.ndarray  # int64, how many of them end a sentence
    last: str | None  # the sentence that ends the corpus (None: not known, read from counts)
    required: list[tuple[str, int]]  # the characters kept, most frequent first (spm_train's required_chars_)
    sentences: int

    @property
    def chars(self) -> set[str]:
        return {ch for ch, _ in self.required}


class SpmReader:
    """Reads texts a line at a time into an `SpmCorpus`; `feeding` passes the texts on
    unchanged, so one pass over a corpus also counts the session's chunks."""

    def __init__(self, normalizer: str, metas: Iterable[str]):
        self.normalizer = normalizer
        ordered = sorted(set(metas), key=len, reverse=True)  # spm_train's PrefixMatcher: the longest
        self._metas = regex.compile("|".join(regex.escape(m) for m in ordered)) if ordered else None
        self._firsts = {m[0] for m in ordered if m}  # a line holding none of these holds no meta piece
        self._words: Counter[str] = Counter()
        self._ends: Counter[str] = Counter()
        self._sentences = 0
        self._removed = 0  # sentences that normalized to nothing
        self._skipped = Counter()  # lines spm_train skips, by why
        self.texts = 0  # how many were read (none: a count file's chunks are all there is)
        self._tail: deque[str | None] = deque(maxlen=1)  # the last sentences, None for an empty one

    def feeding(self, texts: Iterable[str]) -> Iterator[str]:
        for text in texts:
            self.add(text)
            yield text

    def add(self, text: str) -> None:
        self.texts += 1
        found: list[str] = []  # words and sentence ends, counted a batch at a time
        last_words: list[str] = []
        for line in text.split("\n"):
            if not line:
                continue
            if len(line) * 4 > MAX_SENTENCE_BYTES and len(line.encode("utf-8")) > MAX_SENTENCE_BYTES:
                self._skipped[f"over {MAX_SENTENCE_BYTES:,} bytes (its max_sentence_length)"] += 1
                continue
            if UNK_CHAR in line:
                self._skipped["holding ▅ (U+2585, its unknown character)"] += 1
                continue
            sentence = self.sentence(line)
            self._sentences += 1
            if not sentence:
                self._removed += 1
                self._tail = deque(self._tail, maxlen=self._removed + 1)
                self._tail.append(None)
                continue
            self._tail.append(sentence)
            # a sentence starting with ▁ (all but one that starts with a meta piece) is cut at each
            # ▁ exactly as _WORD cuts it, a quarter faster
            words = [META + w for w in sentence.split(META)[1:]] if sentence[0] == META else _WORD.findall(sentence)
            found += words
            last_words.append(words[-1])
            if len(found) > _BATCH:  # counted a batch at a time: a 10 MB text's words at once were 100 MB
                self._words.update(found)
                self._ends.update(last_words)
                found, last_words = [], []
        self._words.update(found)
        self._ends.update(last_words)

    def sentence(self, line: str) -> str:
        """One line as spm_train normalizes it (meta pieces still U+001F)."""
        text = normalize(line, self.normalizer)
        if "  " in text or text[:1] == " " or text[-1:] == " ":  # else the join below gives it back
            text = " ".join(part for part in text.split(" ") if part)
        text = (META + text.replace(" ", META)).rstrip(META)  # its trailing ▁s go, a ▁ of the text's too
        if self._metas is None or not text or not any(first in text for first in self._firsts):
            return text
        return self._metas.sub(BOUNDARY, text)

    def finish(self, character_coverage: float, required_chars: str = "") -> SpmCorpus:
        if not self._words:
            skipped = "; ".join(f"{n:,} line{'s' * (n != 1)} {why}" for why, n in self._skipped.items())
            raise CorpusError("the corpus holds no line spm_train would train on"
                              + (f": it skips {skipped}; cut the text into lines" if skipped else ""))
        return _corpus(self._words, self._ends, _last(list(self._tail), self._removed), character_coverage,
                       required_chars,
                       self._sentences - self._removed)


def from_chunks(words: list[str], freqs: list[int], character_coverage: float,
                required_chars: str = "") -> SpmCorpus:
    """The corpus read from counted metaspace chunks: each cut at its runs of line breaks (the
    part after one gets its line's dummy ▁), a run of line breaks or a lone ▁ (what spm_train's
    whitespace rule removes) left out. A chunk's last part counts as ending a sentence only where
    a line break follows it; no sentence is known to end the corpus."""
    counts: Counter[str] = Counter()
    ends: Counter[str] = Counter()
    for word, n in zip(words, freqs):
        parts = regex.split("[\r\n]+", word) if ("\n" in word or "\r" in word) else [word]
        for k, part in enumerate(parts):
            if k and part and not part.startswith(META):
                part = META + part
            if part and part != META:
                counts[part] += n
                if k + 1 < len(parts):
                    ends[part] += n
    if not counts:
        raise CorpusError("the corpus is empty: its files hold no text SentencePiece would train on")
    return _corpus(counts, ends, None, character_coverage, required_chars, 0)


def _last(tail: list[str | None], removed: int) -> str | None:
    """The sentence spm_train's vector ends with once every empty one (None) is gone: scanning
    from the start, an empty one takes the last sentence into its place and is looked at again.
    `tail` is the last `removed` + 1 sentences read: only those can move or end the vector, and
    the empty ones before them each take from its end first."""
    out = list(tail)
    for _ in range(removed - out.count(None)):
        while out and out.pop() is None:
            pass
    i = 0
    while i < len(out):
        if out[i] is None:
            out[i] = out[-1]
            out.pop()
        else:
            i += 1
    return out[-1] if out else None


def _corpus(words: Counter, ends: Counter, last: str | None, character_coverage: float, required_chars: str,
            sentences: int) -> SpmCorpus:
    strings = list(words)
    codes, lengths, _ = code_points(strings)
    codes = codes.astype(np.int64) - 1  # code_points counts from 1
    owner = np.repeat(np.arange(len(strings)), lengths)
    counts = np.fromiter(words.values(), dtype=np.int64, count=len(strings))
    by_code = np.bincount(codes, weights=counts[owner])  # exact below 2**53; every count is at least 1
    present = np.flatnonzero(by_code)
    chars = Counter(dict(zip(map(chr, present.tolist()), by_code[present].astype(np.int64).tolist())))
    kept = [(ch, n) for ch, n in kept_characters(chars, character_coverage, required_chars) if ch != BOUNDARY]
    keep = {ch for ch, _ in kept}
    if not keep.issuperset(chars):
        table = str.maketrans({ch: UNK_CHAR for ch in chars if ch not in keep})
        dropped = np.array([ord(ch) for ch in chars if ch not in keep], dtype=np.int64)
        holding = [strings[i] for i in np.unique(owner[np.isin(codes, dropped)]).tolist()]
        words, ends = _translated(words, holding, table), _translated(ends, holding, table)
        last = last.translate(table) if last is not None else None
    ordered = sorted(words.items(), key=lambda item: (-item[1], item[0].encode("utf-8")))
    return SpmCorpus([w for w, _ in ordered], np.array([n for _, n in ordered], dtype=np.int64),
                     np.array([ends.get(w, 0) for w, _ in ordered], dtype=np.int64), last, kept, sentences)


def _translated(counts: Counter, holding: list[str], table: dict) -> Counter:
    """`counts` with the words in `holding` (those with a character the table maps) translated;
    a translated word that is another's already adds to its count."""
    out = Counter(counts)
    for word in holding:
        n = out.pop(word, 0)
        if n:
            out[word.translate(table)] += n
    return out
