"""Read tokenizers made elsewhere into our model: HF `tokenizer.json` (byte-level or char-level
BPE), tiktoken ranks (with a pattern), minbpe `.model`, and our own files.

What cannot be read exactly is refused with a message that says what is supported.
"""

import base64
import binascii
import json
from pathlib import Path

import regex

from .errors import ModelFileError, TokWorkbenchError
from .export import hf_pattern, tiktoken_parts
from .modelfile import FORMAT, from_json
from .pretokenize import PRESETS, pre_tokenizer
from .tokenizer import Tokenizer
from .vocab import bytes_to_unicode

HF_BYTELEVEL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


class ImportError_(TokWorkbenchError):
    """A foreign tokenizer file we cannot represent exactly."""


def load_any(path: str | Path, split: str | None = None) -> Tokenizer:
    """Our model, HF tokenizer.json, minbpe .model, or a tiktoken ranks file (needs `split` unless
    a companion OUT.json from our exporter sits beside it)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ModelFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    head = raw[:64].lstrip()
    try:
        if head.startswith(b"{"):
            try:
                doc = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise ModelFileError(f"not valid JSON ({exc})") from None
            if isinstance(doc, dict) and doc.get("format") == FORMAT:
                return from_json(doc)
            if isinstance(doc, dict) and isinstance(doc.get("model"), dict):
                return from_hf(doc)
            raise ImportError_("a JSON file that is neither a tokworkbench model nor a Hugging Face tokenizer.json")
        if head.startswith(b"minbpe v1"):
            return from_minbpe(raw.decode("utf-8"))
        side = path.with_name(path.name + ".json")
        try:
            meta = json.loads(side.read_text(encoding="utf-8")) if side.exists() else None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ImportError_(f"cannot read the companion {side.name}: {exc}") from None
        return from_tiktoken(raw, split, meta)
    except TokWorkbenchError as exc:
        raise type(exc)(f"{path}: {exc}") from None


def _pattern(split: str | None) -> tuple[str, str | None]:
    if split is None:
        raise ImportError_("a tiktoken ranks file carries no pattern: name one (--split gpt2|gpt4|o200k|REGEX)")
    pre = pre_tokenizer(split)
    return pre.name, pre.pattern


def _build(units, normalizer, pre, base, merges, specials, ids=None) -> Tokenizer:
    return Tokenizer(units, normalizer, pre, "first", base, tuple(merges), tuple(specials), (), ids)


def _merges_from_ranked_bytes(tokens: list[bytes], what: str) -> list[tuple[int, int]]:
    """Recover merges from tokens in rank order: each must be two lower-ranked tokens joined."""
    index: dict[bytes, int] = {}
    for i, t in enumerate(tokens[:256]):
        if t != bytes([i]):
            raise ImportError_(f"{what}: ranks 0..255 must be the 256 single bytes in order (rank {i} is {t!r})")
        index[t] = i
    merges = []
    for z in range(256, len(tokens)):
        data = tokens[z]
        if data in index:
            raise ImportError_(f"{what}: rank {z} repeats the bytes of rank {index[data]}")
        # the two parts tiktoken itself reaches with the lower ranks are the merge that makes z
        parts = tiktoken_parts(index, data)
        if len(parts) != 2:
            raise ImportError_(f"{what}: rank {z} ({data!r}) is not two lower-ranked tokens joined")
        merges.append((index[parts[0]], index[parts[1]]))
        index[data] = z
    return merges


def from_tiktoken(raw: bytes, split: str | None, meta: dict | None) -> Tokenizer:
    tokens: list[bytes] = []
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise ImportError_(
            "not a model file this tool reads (tokworkbench JSON, HF tokenizer.json, "
            ".tiktoken ranks, minbpe .model)"
        ) from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            b64, rank = line.split()
            data = base64.b64decode(b64, validate=True)
        except (ValueError, binascii.Error):
            raise ImportError_(f"line {n} is not 'BASE64 RANK'") from None
        if int(rank) != len(tokens):
            raise ImportError_(f"line {n}: ranks must run 0, 1, 2, … (found {rank} where {len(tokens)} was due)")
        tokens.append(data)
    if meta is not None and split is None:
        pattern = meta.get("pat_str")
        name = next((k for k, v in PRESETS.items() if v == pattern), "custom")
        pre = pre_tokenizer(name, pattern) if pattern else pre_tokenizer("none")
        specials = meta.get("special_tokens", {})
    else:
        name, pattern = _pattern(split)
        pre = pre_tokenizer(name, pattern) if pattern else pre_tokenizer("none")
        specials = {}
    merges = _merges_from_ranked_bytes(tokens, "tiktoken ranks")
    order = sorted(specials, key=specials.get)
    if [specials[s] for s in order] != list(range(len(tokens), len(tokens) + len(order))):
        raise ImportError_("special tokens must take the ids right after the ranks")
    return _build("byte", "none", pre, None, merges, order)


def from_minbpe(text: str) -> Tokenizer:
    lines = text.splitlines()
    try:
        pattern = lines[1]
        n_special = int(lines[2])
        specials = {}
        for line in lines[3 : 3 + n_special]:
            s, i = line.rsplit(" ", 1)
            specials[s] = int(i)
        merges = [tuple(map(int, line.split())) for line in lines[3 + n_special :] if line.strip()]
    except (IndexError, ValueError):
        raise ImportError_("not a minbpe v1 .model file (version, pattern, specials, then 'id id' merges)") from None
    for r, m in enumerate(merges):
        if len(m) != 2 or not all(0 <= x < 256 + r for x in m):
            raise ImportError_(f"merge {r} is {m}; it must be two ids below {256 + r}")
    name = next((k for k, v in PRESETS.items() if v == pattern), "custom")
    pre = pre_tokenizer(name, pattern) if pattern else pre_tokenizer("none")
    order = sorted(specials, key=specials.get)
    if [specials[s] for s in order] != list(range(256 + len(merges), 256 + len(merges) + len(order))):
        raise ImportError_("special tokens must take the ids right after the merges")
    return _build("byte", "none", pre, None, merges, order)


def from_hf(doc: dict) -> Tokenizer:
    model = doc["model"]
    if model.get("type") != "BPE":
        raise ImportError_(f"only BPE models are supported, not {model.get('type')!r}")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise ImportError_(f"BPE with {key} is not supported (byte-level or char-level BPE is)")
    if model.get("dropout"):
        raise ImportError_("BPE dropout is random; such a tokenizer cannot be reproduced exactly")
    normalizer = _hf_normalizer(doc.get("normalizer"))
    pattern, byte_level = _hf_pre_tokenizer(doc.get("pre_tokenizer"))
    vocab: dict[str, int] = model["vocab"]
    merges_raw = model["merges"]
    pairs = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in merges_raw]
    added = {t["content"]: t["id"] for t in doc.get("added_tokens", [])}
    specials = [s for s in sorted(added, key=added.get)]
    if byte_level:
        to_char = bytes_to_unicode()
        base_names = [to_char[b] for b in range(256)]
        missing = [n for n in base_names if n not in vocab]
        if missing:
            raise ImportError_(f"byte-level vocabulary lacks {len(missing)} of the 256 byte symbols")
        units, base = "byte", None
    else:
        merged = {a + b for a, b in pairs}
        base_names = sorted(n for n in vocab if n not in merged and n not in added and len(n) == 1)
        units, base = "char", tuple(base_names)
    internal = {n: i for i, n in enumerate(base_names)}
    merges = []
    for a, b in pairs:
        if a not in internal or b not in internal:
            raise ImportError_(f"merge {a!r} + {b!r} uses a token that no earlier merge made")
        if a + b in internal:
            raise ImportError_(f"merge {a!r} + {b!r} makes a token that already exists; this tool keeps one id per string here")
        merges.append((internal[a], internal[b]))
        internal[a + b] = len(internal)
    leftovers = [n for n in vocab if n not in internal and n not in added]
    if leftovers:
        raise ImportError_(f"{len(leftovers)} vocabulary entries are neither base symbols nor merges (e.g. {leftovers[0]!r})")
    names = list(internal) + specials
    ids = tuple(vocab[n] if n in vocab else added[n] for n in names)
    pre = pre_tokenizer("none")
    if pattern is not None:
        name = next((k for k, v in PRESETS.items() if v is not None and pattern in (v, hf_pattern(v))), "custom")
        pre = pre_tokenizer(name, PRESETS[name] if name in PRESETS else pattern)
    identity = ids == tuple(range(len(ids)))
    return _build(units, normalizer, pre, base, merges, specials, None if identity else ids)


def _hf_normalizer(spec) -> str:
    if spec is None:
        return "none"
    kind = spec.get("type")
    if kind in ("NFC", "NFKC"):
        return kind.lower()
    if kind == "Sequence" and not spec.get("normalizers"):
        return "none"
    raise ImportError_(f"normalizer {kind!r} is not supported (none, NFC and NFKC are)")


def _hf_pre_tokenizer(spec) -> tuple[str | None, bool]:
    """(split pattern or None, byte-level?)"""
    if spec is None:
        return None, False
    steps = spec["pretokenizers"] if spec.get("type") == "Sequence" else [spec]
    pattern, byte_level = None, False
    for step in steps:
        kind = step.get("type")
        if kind == "Split":
            if step.get("behavior") != "Isolated" or step.get("invert"):
                raise ImportError_("only Split with behavior Isolated is supported")
            pat = step.get("pattern", {})
            pattern = pat.get("Regex") if "Regex" in pat else _escape(pat.get("String", ""))
        elif kind == "ByteLevel":
            byte_level = True
            if step.get("add_prefix_space"):
                raise ImportError_("ByteLevel with add_prefix_space changes the text; not supported")
            if step.get("use_regex", True):
                if pattern is not None:
                    raise ImportError_("two split patterns (Split and ByteLevel's own) are not supported")
                pattern = HF_BYTELEVEL_PATTERN
        else:
            raise ImportError_(f"pre-tokenizer {kind!r} is not supported (Split, ByteLevel are)")
    return pattern, byte_level


def _escape(s: str) -> str:
    return regex.escape(s)


def tiktoken_encoding(path: str | Path, name: str | None = None):
    """Build a `tiktoken.Encoding` from our tiktoken export (OUT and OUT.json).

    Reads the ranks itself: tiktoken's own `load_tiktoken_bpe` caches files by path, so a
    re-exported file at the same path would be read stale.
    """
    import tiktoken  # only needed by whoever calls this

    path = Path(path)
    meta = json.loads(path.with_name(path.name + ".json").read_text(encoding="utf-8"))
    ranks = {}
    for line in path.read_text(encoding="ascii").splitlines():
        if line.strip():
            b64, rank = line.split()
            ranks[base64.b64decode(b64)] = int(rank)
    return tiktoken.Encoding(
        name=name or path.stem, pat_str=meta["pat_str"], mergeable_ranks=ranks,
        special_tokens=meta["special_tokens"], explicit_n_vocab=meta["explicit_n_vocab"],
    )
