"""Hugging Face `tokenizer.json`: byte-level or char-level BPE, both ways.

HF's regex engine (Oniguruma) reads `{n,m}+` as "{n,m} repeated", not as a possessive interval,
so such quantifiers are written as plain `{n,m}`, which matches the same way in these patterns
(tests check it against `tokenizers`). HF numbers its vocabulary its own way; an imported model
keeps those ids through an id map.

Roles travel as HF keeps them: BOS/EOS as a `TemplateProcessing` post-processor ("$A" between
them; `encode(add_special_tokens=True)` adds them), PAD as the padding token, UNK as the
model's unk_token. Reading a file takes them back from the same places.
"""

import json
from pathlib import Path

import regex

from tokworkbench.core.bytelevel import bytes_to_unicode
from tokworkbench.core.errors import ExportError, ForeignModelError, TokWorkbenchError
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.models.tokenizer import UNK, Tokenizer
from tokworkbench.core.text.pretokenize import PreTokenizer, from_pattern
from tokworkbench.core.formats.atomic import write_atomic
from tokworkbench.core.formats.limits import MAX_TOKEN_BYTES, check_token_lengths, describe_json, is_count, is_text

HF_POSSESSIVE_INTERVAL = regex.compile(r"(?<!\\)(\{\d+(?:,\d*)?\})\+")
HF_BYTELEVEL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def hf_pattern(pattern: str) -> str:
    return HF_POSSESSIVE_INTERVAL.sub(r"\1", pattern)


def is_hf_tokenizer(doc) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("model"), dict)


# -- import ----------------------------------------------------------------------------------
def from_hf(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> Tokenizer:
    """A model from a parsed tokenizer.json; every part used is checked, so a damaged file is a
    ForeignModelError that names the part, never another exception."""
    model = doc["model"]
    if model.get("type") == "Unigram":
        from tokworkbench.core.formats.unigramfile import from_hf as unigram_from_hf

        return unigram_from_hf(doc, max_token_bytes)
    if model.get("type") != "BPE":
        raise ForeignModelError(f"only BPE models are supported (and Unigram), not {_short(model.get('type'))}")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise ForeignModelError(f"BPE with {key} is not supported (byte-level or char-level BPE is)")
    if model.get("dropout"):
        raise ForeignModelError("BPE dropout is random; such a tokenizer cannot be reproduced exactly")
    ignore_merges = model.get("ignore_merges", False)
    if not isinstance(ignore_merges, bool):
        raise ForeignModelError(f"'ignore_merges' must be true or false, not {_short(ignore_merges)}")
    normalizer = _normalizer(doc.get("normalizer"))
    pattern, byte_level = _pre_tokenizer(doc.get("pre_tokenizer"))
    vocab = _vocab(model.get("vocab"))
    pairs = _merge_pairs(model.get("merges"))
    added = _added_tokens(doc.get("added_tokens", []), vocab)
    specials = sorted(added, key=added.get)
    if byte_level:
        to_char = bytes_to_unicode()
        base_names = [to_char[b] for b in range(256)]
        missing = [n for n in base_names if n not in vocab]
        if missing:
            raise ForeignModelError(f"byte-level vocabulary lacks {len(missing)} of the 256 byte symbols")
        units, base = "byte", None
    else:
        merged = {a + b for a, b in pairs}
        base_names = sorted(n for n in vocab if n not in merged and n not in added and len(n) == 1)
        units, base = "char", tuple(base_names)
    inside, merges = _merges(pairs, base_names, vocab)
    base_lengths = [1 if byte_level else len(n.encode("utf-8")) for n in base_names]
    check_token_lengths(base_lengths, merges, max_token_bytes)
    leftovers = [n for n in vocab if n not in inside and n not in added]
    if leftovers:
        raise ForeignModelError(
            f"{len(leftovers)} vocabulary entries are neither base symbols nor merges (e.g. {_short(leftovers[0])})")
    for s in specials:
        if s in inside:
            raise ForeignModelError(f"added token {_short(s)} is also an ordinary token of the vocabulary; "
                                    "this tool keeps special tokens apart from the merges")
    ids = tuple(vocab[n] for n in inside) + tuple(added[s] for s in specials)
    if len(set(ids)) != len(ids):
        raise ForeignModelError("two tokens share an id (an added token and a vocabulary entry)")
    pre = from_pattern(pattern, also_matches=hf_pattern)
    roles = read_roles(doc, model, set(specials))
    tok = Tokenizer(units, normalizer, pre, "first", base, tuple(merges), tuple(specials), (), ids, roles)
    if ignore_merges:
        _check_ignore_merges(tok)
    return tok


def read_roles(doc: dict, model: dict, specials: set[str]) -> Roles:
    """Roles from where HF keeps them (see the module docstring); a part that is not ours to
    read (another post-processor, a token that is not special) gives no role, not an error."""
    found: dict[str, str] = {}
    known = lambda name: is_text(name) and name in specials  # noqa: E731 - a name may be any JSON value
    post = doc.get("post_processor")
    single = post.get("single") if isinstance(post, dict) and post.get("type") == "TemplateProcessing" else None
    if isinstance(single, list) and all(isinstance(p, dict) and len(p) == 1 for p in single):
        kinds = [next(iter(p)) for p in single]
        names = [(p[k] or {}).get("id") if isinstance(p[k], dict) else None for p, k in zip(single, kinds)]
        if kinds.count("Sequence") == 1:
            at = kinds.index("Sequence")
            if at == 1 and kinds[0] == "SpecialToken" and known(names[0]):
                found["bos"] = names[0]
            if at == len(kinds) - 2 and kinds[-1] == "SpecialToken" and known(names[-1]):
                found["eos"] = names[-1]
    padding = doc.get("padding")
    if isinstance(padding, dict) and known(padding.get("pad_token")):
        found["pad"] = padding["pad_token"]
    if known(model.get("unk_token")):
        found["unk"] = model["unk_token"]
    try:
        return Roles.of(found)
    except TokWorkbenchError:  # two roles on one token: keep none rather than guess
        return Roles()


def _short(value, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _vocab(vocab) -> dict[str, int]:
    if not isinstance(vocab, dict):
        raise ForeignModelError(f"'model.vocab' must be an object of token: id, not {describe_json(vocab)}")
    seen: dict[int, str] = {}
    for name, tid in vocab.items():
        if not is_text(name) or not name:
            raise ForeignModelError(f"vocabulary entry {_short(name)} is not a token (empty, or a lone surrogate)")
        if not is_count(tid):
            raise ForeignModelError(f"vocabulary entry {_short(name)} has the id {_short(tid)}; "
                                    "ids are whole numbers from 0")
        if tid in seen:
            raise ForeignModelError(f"id {tid} is given to both {_short(seen[tid])} and {_short(name)}")
        seen[tid] = name
    return vocab


def _merge_pairs(merges) -> list[tuple[str, str]]:
    """Merges as HF writes them: "left right" (one space) or ["left", "right"]."""
    if not isinstance(merges, list):
        raise ForeignModelError(f"'model.merges' must be a list, not {describe_json(merges)}")
    pairs = []
    for rank, m in enumerate(merges):
        if isinstance(m, str):
            parts = m.split(" ")
        elif isinstance(m, list):
            parts = m
        else:
            parts = None
        if not (parts and len(parts) == 2 and all(isinstance(p, str) and p for p in parts)):
            raise ForeignModelError(f"merge {rank} is {_short(m)}; a merge is \"left right\" (one space) "
                                    "or [\"left\", \"right\"]")
        pairs.append((parts[0], parts[1]))
    return pairs


def _added_tokens(added, vocab: dict[str, int]) -> dict[str, int]:
    if not isinstance(added, list):
        raise ForeignModelError(f"'added_tokens' must be a list, not {describe_json(added)}")
    out: dict[str, int] = {}
    for k, t in enumerate(added):
        if not (isinstance(t, dict) and is_text(t.get("content")) and t["content"] and is_count(t.get("id"))):
            raise ForeignModelError(f"added token {k} must have a non-empty 'content' and a whole-number 'id'")
        content, tid = t["content"], t["id"]
        if content in out:
            raise ForeignModelError(f"added token {_short(content)} appears twice")
        if content in vocab and vocab[content] != tid:
            raise ForeignModelError(f"added token {_short(content)} has id {tid} but the vocabulary gives it "
                                    f"{vocab[content]}; HF would use {vocab[content]}")
        out[content] = tid
    return out


def _merges(pairs, base_names: list[str], vocab: dict[str, int]) -> tuple[dict[str, int], list[tuple[int, int]]]:
    """Inside ids of every token by name, and the merges as inside id pairs."""
    inside = {n: i for i, n in enumerate(base_names)}
    merges = []
    for rank, (a, b) in enumerate(pairs):
        for part in (a, b):
            if part not in vocab and part not in inside:
                raise ForeignModelError(f"merge {rank} ({_short(a)} + {_short(b)}) names {_short(part)}, "
                                        "which is not in the vocabulary")
        if a not in inside or b not in inside:
            raise ForeignModelError(f"merge {rank} ({_short(a)} + {_short(b)}) uses a token that no earlier merge made")
        joined = a + b
        if joined in inside:
            raise ForeignModelError(
                f"merge {_short(a)} + {_short(b)} makes a token that already exists; this tool keeps one id per string here")
        if joined not in vocab:
            raise ForeignModelError(f"merge {_short(a)} + {_short(b)} makes {_short(joined)}, which is not in the vocabulary")
        merges.append((inside[a], inside[b]))
        inside[joined] = len(inside)
    return inside, merges


def _check_ignore_merges(tok: Tokenizer) -> None:
    """With `ignore_merges`, HF first looks a whole chunk up in the vocabulary. That changes
    nothing when every token is what the merges make of its own bytes; otherwise this tool
    cannot reproduce it, and says which token differs."""
    index = {c: i for i, c in enumerate(tok.base or ())}
    for z in range(tok.base_size, tok.base_size + len(tok.merges)):
        token = tok.ranked_tokens[z]
        units = list(token) if tok.units.is_bytes else [index[c] for c in token]
        made = tok.apply_merges(units)
        if made != [z]:
            raise ForeignModelError(
                f"ignore_merges is true: HF looks a whole chunk up in the vocabulary before merging, and token "
                f"{tok.to_outside([z])[0]} ({_short(tok.rank_text(z))}) is not what the merges make of it "
                f"(they make ids {tok.to_outside(made)}); this tool cannot reproduce that")


def _normalizer(spec) -> str:
    if spec is None:
        return "none"
    if not isinstance(spec, dict):
        raise ForeignModelError(f"'normalizer' must be an object or null, not {describe_json(spec)}")
    kind = spec.get("type")
    if kind in ("NFC", "NFKC"):
        return kind.lower()
    if kind == "Sequence" and not spec.get("normalizers"):
        return "none"
    raise ForeignModelError(f"normalizer {_short(kind)} is not supported (none, NFC and NFKC are)")


def _pre_tokenizer(spec) -> tuple[str | None, bool]:
    """(split pattern or None, byte-level?)"""
    if spec is None:
        return None, False
    if not isinstance(spec, dict):
        raise ForeignModelError(f"'pre_tokenizer' must be an object or null, not {describe_json(spec)}")
    steps = spec.get("pretokenizers") if spec.get("type") == "Sequence" else [spec]
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
        raise ForeignModelError("'pre_tokenizer.pretokenizers' must be a list of objects")
    pattern, byte_level = None, False
    for step in steps:
        kind = step.get("type")
        if kind == "Split":
            if step.get("behavior") != "Isolated" or step.get("invert"):
                raise ForeignModelError("only Split with behavior Isolated is supported")
            pattern = _split_pattern(step.get("pattern"))
        elif kind == "ByteLevel":
            byte_level = True
            if step.get("add_prefix_space"):
                raise ForeignModelError("ByteLevel with add_prefix_space changes the text; not supported")
            if step.get("use_regex", True):
                if pattern is not None:
                    raise ForeignModelError("two split patterns (Split and ByteLevel's own) are not supported")
                pattern = HF_BYTELEVEL_PATTERN
        else:
            raise ForeignModelError(f"pre-tokenizer {_short(kind)} is not supported (Split, ByteLevel are)")
    return pattern, byte_level


def _split_pattern(pat) -> str:
    if isinstance(pat, dict) and is_text(pat.get("Regex")):
        return pat["Regex"]
    if isinstance(pat, dict) and is_text(pat.get("String")):
        return regex.escape(pat["String"])
    raise ForeignModelError(f"a Split pattern must be {{\"Regex\": ...}} or {{\"String\": ...}}, not {_short(pat)}")


# -- export ----------------------------------------------------------------------------------
# regex-module syntax that Oniguruma lacks or reads otherwise: word-boundary \m \M, \h (a hex
# digit there), \K, \N{NAME}, fuzzy matching, recursion and subroutine calls, branch reset,
# V1 set operations, property values with "=", and inline flags other than i and x.
_NOT_ONIGURUMA = regex.compile(r"""
      \\[mMhHKN]                      # \m \M word edges, \h \H, \K, \N{NAME}
    | \{e[<=]                          # fuzzy matching
    | \(\?(?:&|P>|R\)|[0-9]+\)|\||\(DEFINE)   # subroutine calls, recursion, branch reset
    | \(\?[ix-]*[^ix:)<=!#>'P-]           # inline flags other than i and x: (?V1) (?r) (?s) (?m) (?f) …
    | \[[^\]]*(?:--|&&|\|\||~~)          # set operations
    | \\p\{[^}]*[=:]                    # \p{Script=Latin}
""", regex.VERBOSE)
# Text the pattern is tried on, in both engines, before an export: scripts, digits, marks,
# emoji, apostrophes, runs of spaces, tabs and line ends of every kind.
_PROBE = (
    "Hello, World! It's 1 12 123 1234 12345 3.14 1,000 $5 #tag @me x_y a-b a.b i've YOU'LL he'd\n"
    "  leading  two   three\tspaces\t\ttabs \n\n\r\n \r\u00a0nbsp\u3000ideographic\u2009thin\u000b\u000c\n"
    "Straße ÄÖÜ über ﬁ ① Ⅻ e\u0301 é ‘quoted’ “double” — dash… ١٢٣ ०१२ 漢字 かな カナ 한국어 Ελληνικά "
    "русский مرحبا नमस्ते 😀 👋🏽 👨\u200d👩\u200d👧 🇯🇵 \u200b\ufeff\x00\x07 def f(x):\n    return x**2  # c\n"
    "aaaaaaaaaaaa <|endoftext|> trailing   "
)


def check_hf_pattern(pre: PreTokenizer) -> None:
    """Refuse a custom pattern that HF's Oniguruma cannot read, or reads differently from the
    regex module: known regex-only syntax first; then, when `tokenizers` is installed, the pattern
    is compiled by it and both engines split a probe text, which must come out the same."""
    if pre.pattern is None or pre.is_preset_pattern:
        return
    found = _NOT_ONIGURUMA.search(pre.pattern.replace("\\\\", "__"))  # an escaped backslash is no escape
    if found:
        raise ExportError(f"HF's regex engine (Oniguruma) does not read {found.group()!r} in this pattern "
                          "as the regex module does; rewrite the pattern without it")
    try:
        from tokenizers import Regex, pre_tokenizers
    except ImportError:
        return
    try:
        split = pre_tokenizers.Split(Regex(hf_pattern(pre.pattern)), behavior="isolated")
        theirs = [piece for piece, _ in split.pre_tokenize_str(_PROBE)]
    except Exception as exc:  # tokenizers raises plain Exception for a pattern it cannot compile
        raise ExportError(f"HF's regex engine (Oniguruma) cannot read this pattern: {exc}") from None
    ours = pre.split(_PROBE)
    if theirs != ours:
        at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
        ours_at = ours[at] if at < len(ours) else None
        theirs_at = theirs[at] if at < len(theirs) else None
        raise ExportError(f"HF's regex engine (Oniguruma) splits text differently with this pattern "
                          f"(chunk {at}: {ours_at!r} here, {theirs_at!r} in HF); rewrite it for both engines")


def _names(tok: Tokenizer) -> list[str]:
    """Each ordinary token's name in an HF vocabulary: byte-level symbols, or the text itself."""
    if tok.units.is_bytes:
        to_char = bytes_to_unicode()
        return ["".join(to_char[b] for b in t) for t in tok.ranked_tokens]
    return list(tok.ranked_tokens)


def check_hf_specials(tok: Tokenizer) -> None:
    """HF gives one id per string: a special token named like an ordinary token would take that
    token's id (tested against `tokenizers`), so the export is refused."""
    names = {name: z for z, name in enumerate(_names(tok))}
    extra = [] if tok.units.is_bytes or tok.unk_token in tok.special_tokens else [UNK]
    for s in list(tok.special_tokens) + extra:
        z = names.get(s)
        if z is not None:
            kind = "byte-level name" if tok.units.is_bytes else "text"
            raise ExportError(
                f"HF cannot hold the special token {s!r}: it is also the {kind} of token "
                f"{tok.to_outside([z])[0]} ({tok.rank_text(z)!r}), and HF gives one id per string; "
                "rename the special token")


def check_hf(tok: Tokenizer) -> None:
    if tok.pre_tokenizer.rewrites:
        raise ExportError("the hf export of BPE writes a Split pattern; metaspace rewrites the text first "
                          "(a Unigram model with metaspace exports to hf)")
    check_hf_specials(tok)
    check_hf_pattern(tok.pre_tokenizer)


def hf_notes(tok: Tokenizer) -> list[str]:
    notes = []
    if not tok.units.is_bytes and tok.unk_token not in tok.special_tokens:
        notes.append(f"added {UNK} as id {tok.vocab_size} for characters outside the vocabulary")
    if tok.roles.bos or tok.roles.eos:
        notes.append("encode(add_special_tokens=True) adds " +
                     " and ".join(f"{r.upper()} {t}" for r, t in tok.roles.items() if r in ("bos", "eos")))
    return notes


def _added(content: str, tid: int) -> dict:
    return {"id": tid, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


def to_hf(tok: Tokenizer) -> dict:
    ids = list(tok.ids) if tok.ids is not None else list(range(tok.vocab_size))
    names = _names(tok)
    vocab = {name: ids[i] for i, name in enumerate(names)}
    added = []
    for s, sid in tok.special_ids.items():
        vocab[s] = sid
        added.append(_added(s, sid))
    unk = tok.roles.unk
    if not tok.units.is_bytes:
        unk = tok.unk_token
        if unk not in vocab:
            uid = max(ids) + 1
            vocab[UNK] = uid
            added.append(_added(UNK, uid))
    pretoks = []
    if tok.pre_tokenizer.pattern is not None:
        pretoks.append({"type": "Split", "pattern": {"Regex": hf_pattern(tok.pre_tokenizer.pattern)},
                        "behavior": "Isolated", "invert": False})
    if tok.units.is_bytes:
        pretoks.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False})
        decoder = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    else:
        decoder = {"type": "Fuse"}
    normalizer = {"type": tok.normalizer.upper()} if tok.normalizer != "none" else None
    return {
        "version": "1.0",
        "truncation": None,
        "padding": padding_of(tok),
        "added_tokens": added,
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": pretoks} if pretoks else None,
        "post_processor": post_processor_of(tok),
        "decoder": decoder,
        "model": {
            "type": "BPE", "dropout": None, "unk_token": unk, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": vocab,
            "merges": [[names[a], names[b]] for a, b in tok.merges],
        },
    }


def post_processor_of(tok: Tokenizer) -> dict | None:
    """BOS $A EOS for one sequence (each where the model has the role), and the same around
    $B for a pair, as a TemplateProcessing."""
    ids = tok.special_ids
    bos, eos = tok.roles.bos, tok.roles.eos
    if bos is None and eos is None:
        return None

    def seq(name: str, type_id: int) -> list[dict]:
        around = [{"SpecialToken": {"id": bos, "type_id": type_id}}] if bos else []
        after = [{"SpecialToken": {"id": eos, "type_id": type_id}}] if eos else []
        return around + [{"Sequence": {"id": name, "type_id": type_id}}] + after

    return {"type": "TemplateProcessing", "single": seq("A", 0), "pair": seq("A", 0) + seq("B", 1),
            "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in (bos, eos) if t}}


def padding_of(tok: Tokenizer) -> dict | None:
    pad = tok.roles.pad
    if pad is None:
        return None
    return {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None,
            "pad_id": tok.special_ids[pad], "pad_type_id": 0, "pad_token": pad}


def write_hf(tok: Tokenizer, out: Path) -> list[str]:
    """Write the file; `export.check` (which runs `check_hf`) must have accepted the model."""
    notes = hf_notes(tok)
    write_atomic(out, json.dumps(to_hf(tok), ensure_ascii=False, indent=1).encode("utf-8"))
    return notes + [f"wrote {out}"]
