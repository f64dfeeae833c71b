"""A model that joins by tiktoken's rule (Llama 3's ranks: tokens no merge makes, merges of
later-ranked parts) as HF `tokenizer.json`, in the form transformers' TikTokenConverter writes.

tiktoken looks a chunk up whole, then joins the adjacent pair whose joined bytes rank lowest. HF
does the first with `ignore_merges` and the second with a merges list holding every split of each
token into two ranked tokens, in the order of the joined token's rank (the parts' ranks among a
token's splits): each pair HF can merge is one whose join is a token, ranked as tiktoken ranks it.
They can part only where one chunk holds two different splits of the same token at once
(tiktoken joins the leftmost, HF the split listed first) and the order changes what follows; on
Llama 3's file no such text was found (the samples, runs of 1-119 of each ASCII symbol with and
without a space, and 20,000 strings of joined vocabulary tokens gave tiktoken's ids).
"""

import json
from pathlib import Path

from tokworkbench.core.bpe.model import Tokenizer
from tokworkbench.core.bytelevel import bytes_to_unicode
from tokworkbench.core.errors import ExportError
from tokworkbench.core.files.atomic import write_atomic
from tokworkbench.core.formats.hf_bpe import check_hf_specials, hf_notes
from tokworkbench.core.formats.hf_bpe import to_hf as bpe_to_hf
from tokworkbench.core.formats.hf_common import check_hf_pattern


def joins_by_ranks(tok: Tokenizer) -> bool:
    """Whether the model's ids are tiktoken's rule over its ranks (what this form carries)."""
    return tok.join == "ranks"


def ranks_of(tok: Tokenizer) -> dict[bytes, int]:
    """Each ordinary token's bytes and its rank (its id)."""
    return dict(zip(tok.ranked_tokens, tok.to_outside(list(range(tok.ordinary_size)))))


def converter_merges(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """transformers' `extract_vocab_merges_from_model`: for each token, every split into two
    ranked tokens (ordered by the parts' ranks), then all of them by the token's rank."""
    found = []
    for token, rank in ranks.items():
        local = [(token[:k], token[k:], rank) for k in range(1, len(token))
                 if token[:k] in ranks and token[k:] in ranks]
        found += sorted(local, key=lambda m: (ranks[m[0]], ranks[m[1]]))
    found.sort(key=lambda m: m[2])
    return [(left, right) for left, right, _ in found]


def check_hf(tok: Tokenizer) -> list[str]:
    if not tok.units.is_bytes:
        raise ExportError("tiktoken's rule joins bytes; this model's units are characters")
    check_hf_specials(tok)
    check_hf_pattern(tok.pre_tokenizer)
    return hf_notes(tok)


def to_hf(tok: Tokenizer) -> dict:
    doc = bpe_to_hf(tok)
    to_char = bytes_to_unicode()

    def name(data: bytes) -> str:
        return "".join(to_char[b] for b in data)

    doc["model"]["ignore_merges"] = True
    doc["model"]["merges"] = [[name(a), name(b)] for a, b in converter_merges(ranks_of(tok))]
    return doc


def write_hf(tok: Tokenizer, out: Path) -> list[str]:
    notes = check_hf(tok)
    write_atomic(out, json.dumps(to_hf(tok), ensure_ascii=False, indent=1).encode("utf-8"))
    return notes + [f"wrote {out}"]
