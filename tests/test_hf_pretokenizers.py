"""tokenizer.json BPE files with every pre-tokenizer `tokenizers` has: each file is made by the
real library (a small BPE trained on the sample texts), and our ids must be its ids."""

import json
from functools import cache, lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Regex, decoders, models, trainers
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import pre_tokenizers as P

from tokworkbench.core import load_corpus, sample_paths
from tokworkbench.core.bpe.modelfile import from_json, to_json
from tokworkbench.core.bytelevel import bytes_to_unicode
from tokworkbench.core.errors import ForeignModelError
from tokworkbench.core.formats.hf import from_hf
from tokworkbench.core.formats.hf_bpe import to_hf
from tokworkbench.core.text.hfpretok import HFPreTokenizer, hf_pre_tokenizer

BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]
BL = P.ByteLevel(add_prefix_space=False, use_regex=False)


def _configs():
    """(name, pre-tokenizer, byte level?): byte-level ones end in ByteLevel, the others are
    char-level BPE with an unk token."""
    out = []
    for b in BEHAVIORS:
        for invert in (False, True):
            out.append((f"split-regex-{b}-{invert}", P.Sequence([P.Split(Regex(r"\s+|\d"), b, invert=invert), BL]), True))
        out.append((f"split-string-{b}", P.Sequence([P.Split(" ", b), BL]), True))
        out.append((f"punctuation-{b}", P.Sequence([P.Punctuation(b), BL]), True))
    out += [
        ("bytelevel-prefix-regex", P.ByteLevel(add_prefix_space=True, use_regex=True), True),
        ("bytelevel-prefix-noregex", P.ByteLevel(add_prefix_space=True, use_regex=False), True),
        ("bytelevel-regex", P.ByteLevel(add_prefix_space=False, use_regex=True), True),
        ("digits-individual", P.Sequence([P.Digits(True), BL]), True),
        ("digits-runs", P.Sequence([P.Digits(False), BL]), True),
        ("combo", P.Sequence([P.Digits(True), P.Punctuation("contiguous"),
                              P.Split(Regex(r"[A-Z]"), "merged_with_next"), P.ByteLevel(add_prefix_space=True)]), True),
        ("nested", P.Sequence([P.Sequence([P.WhitespaceSplit(), P.Digits(False)]), P.ByteLevel()]), True),
        ("split-then-prefix", P.Sequence([P.Split(Regex(r"\n"), "removed"), P.ByteLevel(add_prefix_space=True)]), True),
        ("whitespace", P.Whitespace(), False),
        ("whitespace-split", P.WhitespaceSplit(), False),
        ("bert", P.BertPreTokenizer(), False),
        ("char-delimiter", P.CharDelimiterSplit("-"), False),
        ("whitespace-split-metaspace", P.Sequence([P.WhitespaceSplit(), P.Metaspace()]), False),
        ("metaspace-underscore", P.Metaspace(replacement="_", prepend_scheme="always"), False),
    ]
    for scheme in ("always", "first", "never"):
        for split in (True, False):
            out.append((f"metaspace-{scheme}-{split}", P.Metaspace(prepend_scheme=scheme, split=split), False))
    return out


CONFIGS = _configs()
NAMES = [c[0] for c in CONFIGS]


@lru_cache(maxsize=1)
def _training_texts() -> tuple[str, ...]:
    return tuple(d.text[:20_000] for d in load_corpus(sample_paths()).documents)


@lru_cache(maxsize=1)
def _sample_lines() -> tuple[str, ...]:
    lines = [line for d in load_corpus(sample_paths()).documents for line in d.text.splitlines()[:60]]
    return tuple(lines)


@cache
def _pair(name: str):
    """(HF tokenizer, our model) for one configuration."""
    _, pre, byte_level = CONFIGS[NAMES.index(name)]
    hf = HFTokenizer(models.BPE(unk_token=None if byte_level else "<unk>"))
    hf.pre_tokenizer = pre
    trainer = trainers.BpeTrainer(vocab_size=500, show_progress=False,
                                  special_tokens=[] if byte_level else ["<unk>"],
                                  initial_alphabet=P.ByteLevel.alphabet() if byte_level else [])
    hf.train_from_iterator(_training_texts(), trainer)
    if byte_level:
        hf.decoder = decoders.ByteLevel()
    ours = from_hf(json.loads(hf.to_str()))
    return hf, ours


def _same(name: str, text: str) -> None:
    hf, ours = _pair(name)
    assert ours.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids, text


@pytest.mark.parametrize("name", NAMES)
def test_sample_lines_give_hfs_ids(name):
    hf, ours = _pair(name)
    lines = _sample_lines()
    theirs = [e.ids for e in hf.encode_batch(list(lines), add_special_tokens=False)]
    ours_ids = [ours.encode(line, allowed_special="all") for line in lines]
    wrong = [line for line, a, b in zip(lines, theirs, ours_ids) if a != b]
    assert not wrong, wrong[:3]
    assert sum(map(len, theirs)) > len(lines)  # the lines are encoded, not skipped


WHITESPACE_HEAVY = st.text(alphabet=st.sampled_from(list(" \t\n\r\u00a0\u3000\u2009ab1-._▁'A") + ["é", "日"]),
                           max_size=40)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=60), WHITESPACE_HEAVY))
def test_any_text_gives_hfs_ids(name, text):
    _same(name, text)


@pytest.mark.parametrize("name", [n for n, _, byte_level in CONFIGS if byte_level])
def test_byte_level_decode_is_hfs(name):
    hf, ours = _pair(name)
    for line in _sample_lines()[::7]:
        ids = ours.encode(line)
        assert ours.decode(ids, errors="replace") == hf.decode(ids)


def test_removed_text_is_a_visible_loss():
    """Removed drops what it matched: ids are HF's, and the round trip says the text changed."""
    _, ours = _pair("split-regex-removed-False")
    text = "a b\t1 2"
    assert ours.decode(ours.encode(text)) == "ab"


def test_metaspace_decodes_as_hf():
    hf, ours = _pair("metaspace-always-True")
    hf.decoder = decoders.Metaspace()
    for line in _sample_lines()[::9]:
        ids = ours.encode(line)
        if hf.token_to_id("<unk>") not in ids:
            assert ours.decode(ids) == hf.decode(ids)


def test_metaspace_first_prepends_only_at_the_start():
    """prepend_scheme first: after an added token the piece gets no ▁ (HF looks at its offset)."""
    hf, _ = _pair("metaspace-first-True")
    hf.add_special_tokens(["<s>"])
    ours = from_hf(json.loads(hf.to_str()))
    for text in ["<s>hello world", "hello<s>world", "hello <s> world", " hello"]:
        assert ours.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids


@pytest.mark.parametrize("name", ["combo", "metaspace-first-True", "whitespace"])
def test_model_file_and_hf_export_keep_the_pipeline(name):
    hf, ours = _pair(name)
    assert isinstance(ours.pre_tokenizer, HFPreTokenizer)
    assert from_json(json.loads(json.dumps(to_json(ours)))) == ours
    again = HFTokenizer.from_str(json.dumps(to_hf(ours)))
    for line in _sample_lines()[::11]:
        assert again.encode(line, add_special_tokens=False).ids == hf.encode(line, add_special_tokens=False).ids


def _doc_with(pre_tokenizer) -> dict:
    hf, _ = _pair("bytelevel-regex")
    doc = json.loads(hf.to_str())
    doc["pre_tokenizer"] = pre_tokenizer
    return doc


def _nested(depth: int) -> dict:
    spec = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True}
    for _ in range(depth):
        spec = {"type": "Sequence", "pretokenizers": [spec]}
    return spec


@pytest.mark.parametrize("spec, words", [
    ({"type": "UnicodeScripts"}, "'UnicodeScripts' is not supported"),
    ({"type": "FixedLength", "length": 3}, "'FixedLength' is not supported"),
    ({"type": "Split", "pattern": {"Regex": "(ab"}, "behavior": "Isolated", "invert": False}, "invalid pre-tokenizer regex"),
    ({"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Sideways", "invert": False}, "behavior"),
    ({"type": "Split", "pattern": {"Glob": "a"}, "behavior": "Isolated", "invert": False}, "Split pattern"),
    ({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes", "split": True}, "prepend_scheme"),
    ({"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Digits"}]}, "after ByteLevel"),
    (_nested(9), "nested more than"),
    ({"type": "Digits", "individual_digits": "yes"}, "true or false"),
])
def test_bad_pre_tokenizers_are_one_clear_line(spec, words):
    with pytest.raises(ForeignModelError) as info:
        from_hf(_doc_with(spec))
    message = str(info.value)
    assert words in message and "\n" not in message


def test_every_code_point_is_a_digit_exactly_where_hf_says():
    """Digits' class is measured (tests/make_hf_tables.py); the installed library agrees on
    every code point, each tried between two letters."""
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and c != ord("a")]
    text = "a" + "a".join(map(chr, points)) + "a"
    spec = {"type": "Digits", "individual_digits": True}
    theirs = [p for p, _ in P.Digits(individual_digits=True).pre_tokenize_str(text)]
    assert hf_pre_tokenizer(spec).split(text) == theirs


def test_a_char_level_file_that_fuses_unknowns_is_refused():
    hf, _ = _pair("whitespace")
    doc = json.loads(hf.to_str())
    doc["model"]["fuse_unk"] = True
    with pytest.raises(ForeignModelError, match="fuse_unk"):
        from_hf(doc)


@pytest.mark.parametrize("pattern", [r"[^\s\p{L}\p{N}]+", r"\d+|\w+", r" ?\p{Lu}\p{Ll}*|\P{L}+"])
def test_every_code_point_splits_as_oniguruma_reads_the_classes(pattern):
    """Oniguruma's \\p{L}, \\d, \\w... are older than the regex module's (~17k letters fewer);
    a pipeline's regex is compiled with the measured classes (onigclasses.py)."""
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and c != ord("#")]
    text = "#" + "#".join(map(chr, points)) + "#"
    split = P.Split(Regex(pattern), "merged_with_previous")
    spec = json.loads(P.Sequence([split]).__getstate__())
    assert hf_pre_tokenizer(spec).split(text) == [p for p, _ in split.pre_tokenize_str(text)]


def test_byte_levels_own_regex_splits_every_code_point_as_hf():
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    text = " a".join(map(chr, points))  # a letter either side: a class the engines disagree on splits
    byte_level = P.ByteLevel(add_prefix_space=True, use_regex=True)
    to_char = bytes_to_unicode()
    ours = ["".join(to_char[b] for b in p.encode()) for p in
            hf_pre_tokenizer(json.loads(byte_level.__getstate__())).split(text)]
    assert ours == [p for p, _ in byte_level.pre_tokenize_str(text)]
