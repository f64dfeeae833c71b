"""Exports to Hugging Face `tokenizer.json`, tiktoken ranks, and minbpe `.model`.

Each format is checked first for what it cannot express; then the file would encode exactly as
we do, or it is not written and the error says why. Hugging Face's regex engine (Oniguruma) reads
`{n,m}+` as "{n,m} repeated", not as a possessive interval, so such quantifiers are rewritten to
plain `{n,m}`, which matches the same way in these patterns (tests check it against `tokenizers`).
"""

import base64
import json
from pathlib import Path

import regex

from .atomic import write_atomic
from .errors import TokWorkbenchError
from .tokenizer import UNK, Tokenizer
from .vocab import bytes_to_unicode

FORMATS = ("hf", "tiktoken", "minbpe")
HF_POSSESSIVE_INTERVAL = regex.compile(r"(?<!\\)(\{\d+(?:,\d*)?\})\+")


class ExportError(TokWorkbenchError):
    """The target format cannot carry this model exactly."""


def hf_pattern(pattern: str) -> str:
    return HF_POSSESSIVE_INTERVAL.sub(r"\1", pattern)


def _duplicate_tokens(tok: Tokenizer) -> list[tuple[int, int]]:
    seen: dict = {}
    dups = []
    for i, t in enumerate(tok.vocab[: tok.base_size + len(tok.merges)]):
        if t in seen:
            dups.append((seen[t], i))
        else:
            seen[t] = i
    return dups


def _check_no_duplicates(tok: Tokenizer, fmt: str) -> None:
    dups = _duplicate_tokens(tok)
    if dups:
        a, b = dups[0]
        raise ExportError(
            f"{fmt} cannot hold two tokens with the same {'bytes' if tok.units == 'byte' else 'text'}: "
            f"ids {a} and {b} are both {tok.token_text(a)!r} ({len(dups)} such pairs); "
            "BPE can make these (the same string merged two ways), the format maps each string to one id"
        )


def tiktoken_parts(ranks: dict[bytes, int], data: bytes) -> list[bytes]:
    """tiktoken's rule: repeatedly join the adjacent pair whose bytes have the lowest rank."""
    parts = [bytes([b]) for b in data]
    while len(parts) > 1:
        best, where = None, -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and (best is None or r < best):
                best, where = r, i
        if best is None:
            break
        parts[where : where + 2] = [parts[where] + parts[where + 1]]
    return parts


def check(tok: Tokenizer, fmt: str) -> list[str]:
    """Raise ExportError for what `fmt` cannot express; return notes for what it changes harmlessly."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    notes = []
    if tok.ids is not None and fmt != "hf":
        raise ExportError(f"{fmt} numbers tokens by rank; this model's imported ids are not ranks")
    if fmt in ("tiktoken", "minbpe"):
        if tok.units != "byte":
            raise ExportError(f"{fmt} is byte-level only; this is a char-unit model (export it to hf)")
        if tok.normalizer != "none":
            raise ExportError(f"{fmt} has no normalizer; this model normalizes with {tok.normalizer.upper()}")
        pre = tok.pre_tokenizer
        if pre.pattern is not None and not pre.is_preset_pattern:
            raise ExportError(
                f"{fmt} drops text that its pattern does not match, while this model keeps it as chunks; "
                "only the preset pre-tokenizers (gpt2, gpt4, o200k) export exactly"
            )
        if fmt == "tiktoken" and pre.pattern is None:
            raise ExportError("tiktoken needs a pre-tokenizer pattern; this model uses none (export to minbpe or hf)")
    if fmt == "tiktoken":
        _check_no_duplicates(tok, fmt)
        ranks = {t: i for i, t in enumerate(tok.vocab[: tok.base_size + len(tok.merges)])}
        for r in range(len(tok.merges)):
            z = tok.base_size + r
            data = tok.vocab[z]
            if tiktoken_parts(ranks, data) != [data] or tok._bpe(list(data)) != [z]:
                raise ExportError(
                    f"tiktoken would encode token {z} ({tok.token_text(z)!r}) differently: it joins the "
                    "lowest-ranked bytes, not the recorded merges, and here the two disagree"
                )
    if fmt == "hf":
        _check_no_duplicates(tok, fmt)
        if tok.units == "char" and UNK not in tok.special_tokens:
            notes.append(f"added {UNK} as id {tok.vocab_size} for characters outside the vocabulary")
    return notes


def to_hf(tok: Tokenizer) -> dict:
    ids = tok.ids or tuple(range(tok.vocab_size))
    n_regular = tok.base_size + len(tok.merges)
    if tok.units == "byte":
        to_char = bytes_to_unicode()
        names = ["".join(to_char[b] for b in t) for t in tok.vocab[:n_regular]]
    else:
        names = list(tok.vocab[:n_regular])
    vocab = {name: ids[i] for i, name in enumerate(names)}
    added = []
    for s, sid in tok.special_ids.items():
        vocab[s] = sid
        added.append({"id": sid, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False, "special": True})
    unk = None
    if tok.units == "char":
        unk = UNK
        if UNK not in vocab:
            uid = max(ids) + 1
            vocab[UNK] = uid
            added.append({"id": uid, "content": UNK, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True})
    pretoks = []
    if tok.pre_tokenizer.pattern is not None:
        pretoks.append({"type": "Split", "pattern": {"Regex": hf_pattern(tok.pre_tokenizer.pattern)},
                        "behavior": "Isolated", "invert": False})
    if tok.units == "byte":
        pretoks.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False})
        decoder = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    else:
        decoder = {"type": "Fuse"}
    normalizer = {"type": tok.normalizer.upper()} if tok.normalizer != "none" else None
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": pretoks} if pretoks else None,
        "post_processor": None,
        "decoder": decoder,
        "model": {
            "type": "BPE", "dropout": None, "unk_token": unk, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": vocab,
            "merges": [[names[a], names[b]] for a, b in tok.merges],
        },
    }


def to_tiktoken(tok: Tokenizer) -> tuple[str, dict]:
    """The ranks file and its companion: what `tiktoken.Encoding` needs besides the ranks."""
    lines = [f"{base64.b64encode(t).decode('ascii')} {i}" for i, t in enumerate(tok.vocab[: tok.base_size + len(tok.merges)])]
    meta = {
        "format": "tokworkbench-tiktoken",
        "pat_str": tok.pre_tokenizer.pattern,
        "special_tokens": tok.special_ids,
        "explicit_n_vocab": tok.vocab_size,
    }
    return "\n".join(lines) + "\n", meta


def to_minbpe(tok: Tokenizer) -> str:
    lines = ["minbpe v1", tok.pre_tokenizer.pattern or "", str(len(tok.special_tokens))]
    lines += [f"{s} {i}" for s, i in tok.special_ids.items()]
    lines += [f"{a} {b}" for a, b in tok.merges]
    return "\n".join(lines) + "\n"


def export(tok: Tokenizer, fmt: str, out: str | Path) -> list[str]:
    """Write `tok` as `fmt` to `out` (tiktoken also writes OUT.json); returns notes and the files."""
    notes = check(tok, fmt)
    out = Path(out)
    try:
        if fmt == "hf":
            write_atomic(out, json.dumps(to_hf(tok), ensure_ascii=False, indent=1).encode("utf-8"))
            notes.append(f"wrote {out}")
        elif fmt == "tiktoken":
            ranks, meta = to_tiktoken(tok)
            side = out.with_name(out.name + ".json")
            write_atomic(out, ranks.encode("ascii"))
            write_atomic(side, json.dumps(meta, ensure_ascii=False, indent=1).encode("utf-8"))
            notes.append(f"wrote {out} and {side}")
        else:
            write_atomic(out, to_minbpe(tok).encode("utf-8"))
            notes.append(f"wrote {out}")
    except OSError as exc:
        raise ExportError(f"cannot write {out}: {exc.strerror or exc}") from None
    return notes
