"""Tokens reached only as a whole chunk, and merges whose parts come later (issue 24).

tiktoken looks each chunk up whole in the ranks before it merges; HF does so with
`ignore_merges`, and applies a merges list by position even where a merge's parts are made by
later merges (what transformers' TikTokenConverter writes for Llama 3). Small models are built
here with the real libraries (tiktoken.Encoding on custom ranks, a tokenizers BPE) and the ids
compared on hypothesis text. The real files (Llama 3's tokenizer.model, Whisper's
multilingual.tiktoken, Mistral's tekken.json) are checked when provided (see `_real`).
"""

import base64
import json
import os
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Regex, decoders, models, pre_tokenizers
from tokenizers import Tokenizer as HFTokenizer

from tokworkbench.cli import main
from tokworkbench.core.bpe.modelfile import from_json, to_json
from tokworkbench.core.bytelevel import bytes_to_unicode
from tokworkbench.core.errors import ForeignModelError
from tokworkbench.core.formats.hf_common import hf_pattern
from tokworkbench.core.formats.presets import PRESETS, preset_ranks
from tokworkbench.core.formats.tiktoken import parse_ranks, tiktoken_encoding
from tokworkbench.core.inspection.vocab import vocab_of
from tokworkbench.core.models.protocol import WholeOnly
from tokworkbench.core.registry.export import export
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.text.pretokenize import pre_tokenizer

GPT4 = pre_tokenizer("gpt4").pattern
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
WHOLE_ONLY = [" việc".encode(), b"qzx", " değişik".encode(), b"Zzq!"]
LATER_PART = (b"kqj", b"kq")  # 'kqj' is ranked before its part 'kq': tiktoken reaches it in 'kqjz'
PIECES = ["qzx", " việc", " vi", "ệc", " değişik", "Zzq!", "kqj", "kq", "kqjz", "jkq", "a", " the", " ", "\n",
          "é", "Việt", "x", "!", "12", "değ"]
texts = st.one_of(st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
                  st.text(alphabet=st.sampled_from(list("qzxkjạệcviZ! \nétheaş")), max_size=30))


def _ranks_file(ranks: dict[bytes, int]) -> bytes:
    return "".join(f"{base64.b64encode(t).decode() or '='} {r}\n"
                   for t, r in sorted(ranks.items(), key=lambda x: x[1])).encode()


@pytest.fixture(scope="module")
def ranks() -> dict[bytes, int]:
    """The first 3000 of r50k's ranks (a valid ranks file on their own), then tokens its rule
    cannot build and a token ranked before its own part."""
    raw, _ = preset_ranks(PRESETS["r50k_base"])
    out = {t: r for t, r in parse_ranks(raw).items() if r < 3000}
    for t in WHOLE_ONLY + list(LATER_PART):
        out[t] = len(out)
    return out


@pytest.fixture(scope="module")
def ranks_path(ranks, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("whole") / "whole.tiktoken"
    path.write_bytes(_ranks_file(ranks))
    return path


@pytest.fixture(scope="module")
def ours(ranks_path):
    return load_any(ranks_path, "gpt4")


@pytest.fixture(scope="module")
def theirs(ranks):
    return tiktoken.Encoding("t", pat_str=GPT4, mergeable_ranks=ranks, special_tokens={})


def test_whole_only_tokens_are_kept_and_said_so(ours, ranks):
    assert isinstance(ours, WholeOnly)
    assert sorted(ours.whole_tokens) == sorted(WHOLE_ONLY)
    for t in WHOLE_ONLY:
        assert ours.is_whole_only(ranks[t])
    assert not ours.is_whole_only(ranks[b"kqj"])  # it has parents: 'kq' (ranked after it) + 'j'
    assert not ours.is_whole_only(ranks[b" the"])
    assert ours.vocab_size == len(ranks)
    vocab = vocab_of(ours)
    shown = vocab.info(vocab.row_of(ranks[b"qzx"]))
    assert shown.whole_only and shown.parents is None and shown.data == b"qzx"
    later = vocab.info(vocab.row_of(ranks[b"kqj"]))
    assert not later.whole_only and later.parents == (ranks[b"kq"], ranks[b"j"])


@settings(max_examples=300, deadline=None)
@given(texts)
def test_ids_are_tiktokens(ours, theirs, text):
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_a_later_ranked_part_inside_a_longer_chunk(ours, theirs, ranks):
    for text in ("kqjz", "kqj", " việcx việc", "qzxqzx"):
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    assert ranks[b"kqj"] in theirs.encode_ordinary("kqjz")


def test_long_text_takes_the_same_path(ours, theirs):
    text = " ".join(PIECES) * 200
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_our_model_file_and_the_tiktoken_export_keep_the_ids(ours, theirs, tmp_path):
    again = from_json(json.loads(json.dumps(to_json(ours))))
    text = " việc kqjz qzx değişik the end"
    assert again.encode_ordinary(text) == theirs.encode_ordinary(text)
    assert again.whole_tokens == ours.whole_tokens
    out = tmp_path / "out.tiktoken"
    export(ours, "tiktoken", out)
    assert tiktoken_encoding(out).encode_ordinary(text) == theirs.encode_ordinary(text)
    export(ours, "hf", tmp_path / "out.json")  # TikTokenConverter's form (tests/test_export_llama3.py)
    back = HFTokenizer.from_file(str(tmp_path / "out.json"))
    assert back.encode(text, add_special_tokens=False).ids == theirs.encode_ordinary(text)


def test_the_empty_token_as_whisper_writes_it(ranks, tmp_path):
    """Whisper's multilingual.tiktoken has a line '= 50256': b64decode('=') is the empty token."""
    plain = {t: r for t, r in ranks.items() if t not in WHOLE_ONLY and t not in LATER_PART}
    plain[b""] = len(plain)
    path = tmp_path / "empty.tiktoken"
    path.write_bytes(_ranks_file(plain))
    assert b"\n= " in path.read_bytes()
    ours = load_any(path, "gpt4")
    theirs = tiktoken.Encoding("t", pat_str=GPT4, mergeable_ranks=plain, special_tokens={})
    assert ours.whole_tokens == (b"",) and ours.is_whole_only(plain[b""]) and ours.decode([plain[b""]]) == ""
    assert ours.join == "merges"  # the empty token changes no chunk's ids: the fast path stays
    for text in ("hello world", " việc", "x"):
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


# -- HF: ignore_merges and merges whose parts come later ---------------------------------------
def hf_from_ranks(ranks: dict[bytes, int], pattern: str, ignore_merges: bool) -> HFTokenizer:
    """What transformers' TikTokenConverter writes: every split of a token into two tokens is a
    merge, ordered by the merged token's rank; Split + ByteLevel(use_regex=false)."""
    enc = bytes_to_unicode()
    name = lambda b: "".join(enc[x] for x in b)
    vocab, merges = {}, []
    for token, rank in ranks.items():
        vocab[name(token)] = rank
        local = [(token[:i], token[i:], rank) for i in range(1, len(token))
                 if token[:i] in ranks and token[i:] in ranks]
        merges.extend(sorted(local, key=lambda m: (ranks[m[0]], ranks[m[1]])))
    merges.sort(key=lambda m: m[2])
    tok = HFTokenizer(models.BPE(vocab, [(name(a), name(b)) for a, b, _ in merges], ignore_merges=ignore_merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    return tok


@pytest.fixture(scope="module")
def hf_pair(ranks, tmp_path_factory):
    hf = hf_from_ranks(ranks, LLAMA3, ignore_merges=True)
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    hf.save(str(path))
    return load_any(path), hf


@settings(max_examples=300, deadline=None)
@given(texts)
def test_hf_ignore_merges_ids_are_hfs(hf_pair, text):
    ours, hf = hf_pair
    assert ours.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids


def test_hf_llama3_form_is_joined_by_its_pair_list(hf_pair, ranks, tmp_path):
    ours, hf = hf_pair
    assert ours.join == "pairs" and ours.whole_chunk
    assert ours.encode_ordinary("kqjz") == hf.encode("kqjz", add_special_tokens=False).ids
    again = from_json(json.loads(json.dumps(to_json(ours))))
    assert again.encode_ordinary(" việc kqjz qzx") == hf.encode(" việc kqjz qzx", add_special_tokens=False).ids
    out = tmp_path / "again.json"
    export(ours, "hf", out)
    back = HFTokenizer.from_file(str(out))
    text = " ".join(PIECES)
    assert back.encode(text, add_special_tokens=False).ids == hf.encode(text, add_special_tokens=False).ids


@settings(max_examples=150, deadline=None)
@given(texts)
def test_hf_merges_by_position_without_ignore_merges(ranks, tmp_path_factory, text):
    """No ignore_merges: HF's merges alone (every split, parts made later) decide."""
    plain = {t: r for t, r in ranks.items() if t not in WHOLE_ONLY or t == b"qzx"}
    plain.update({b"qz": len(plain)})  # 'qzx' now has a split (qz + x), ranked after it
    key = "_hf_plain"
    cached = getattr(test_hf_merges_by_position_without_ignore_merges, key, None)
    if cached is None:
        hf = hf_from_ranks(plain, hf_pattern(GPT4), ignore_merges=False)  # Oniguruma's reading of {1,3}+
        path = tmp_path_factory.mktemp("hfplain") / "tokenizer.json"
        hf.save(str(path))
        cached = (load_any(path), hf)
        setattr(test_hf_merges_by_position_without_ignore_merges, key, cached)
    ours, hf = cached
    assert not ours.whole_chunk
    assert ours.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids


# -- Mistral tekken.json -----------------------------------------------------------------------
def _tekken(ranks: dict[bytes, int], inner: int, n_special: int, specials=None) -> dict:
    ordered = sorted(ranks, key=ranks.get)
    vocab = [{"rank": i, "token_bytes": base64.b64encode(t).decode(), "token_str": None} for i, t in enumerate(ordered)]
    doc = {"config": {"pattern": LLAMA3, "num_vocab_tokens": len(vocab), "default_vocab_size": inner + n_special,
                      "default_num_special_tokens": n_special, "version": "v7"}, "vocab": vocab}
    if specials is not None:
        doc["special_tokens"] = [{"rank": i, "token_str": s, "is_control": True} for i, s in enumerate(specials)]
    return doc


def _dense(ranks: dict[bytes, int]) -> dict[bytes, int]:
    """Ranks as tekken numbers them: the single bytes in byte order, then the rest."""
    longer = sorted((t for t in ranks if len(t) > 1), key=ranks.get)
    return {t: i for i, t in enumerate([bytes([b]) for b in range(256)] + longer)}


def test_tekken_ids_follow_the_specials(ranks, tmp_path):
    dense = _dense(ranks)
    inner = len(dense) - 40  # the file lists more than it uses, as tekken_240718 does
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(_tekken(dense, inner, 10, ["<unk>", "<s>", "</s>"])))
    ours = load_any(path)
    used = {t: r for t, r in dense.items() if r < inner}
    theirs = tiktoken.Encoding("t", pat_str=LLAMA3, mergeable_ranks=used, special_tokens={})
    for text in (" việc kqjz qzx", "hello <s> world", " ".join(PIECES)):
        assert ours.encode_ordinary(text) == [t + 10 for t in theirs.encode_ordinary(text)]
    assert ours.vocab_size == inner + 10
    assert ours.special_ids["<s>"] == 1 and ours.special_ids["<SPECIAL_9>"] == 9
    assert ours.roles.bos == "<s>" and ours.roles.eos == "</s>"
    assert ours.decode_bytes([used[b" the"] + 10]) == b" the"


def test_tekken_counts_that_disagree_are_one_line(ranks, tmp_path, capsys):
    dense = _dense(ranks)
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(_tekken(dense, len(dense) + 5, 10, ["<unk>"])))
    with pytest.raises(ForeignModelError, match="the file lists"):
        load_any(path)
    assert main(["inspect", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "default_vocab_size" in err, err


# -- the real files, when provided --------------------------------------------------------------
def _real(env: str, how: str) -> Path:
    value = os.environ.get(env)
    if not value or not Path(value).is_file():
        pytest.skip(f"set {env} to {how}")
    return Path(value)


SAMPLE = ("Xin chào, tôi là người Việt. Nhiều việc. Değişik şeyler. Привет мир! 你好世界 こんにちは 12345 "
          "hello world .:.: :::: <|endoftext|> e\u0301\n\n  tabs\tand  spaces")


def _sample_texts() -> list[str]:
    folder = Path(__file__).resolve().parent.parent / "sample_texts"
    return [SAMPLE] + [p.read_text(encoding="utf-8", errors="replace")[:20000] for p in sorted(folder.glob("*.txt"))]


def test_real_llama3_ranks():
    path = _real("TOKWORKBENCH_LLAMA3_MODEL", "Llama 3's tokenizer.model (pip download --no-deps llama-models; "
                 "llama_models/llama3/tokenizer.model in the wheel)")
    from tiktoken.load import load_tiktoken_bpe

    ours = load_any(path, "regex:" + LLAMA3)
    theirs = tiktoken.Encoding("llama3", pat_str=LLAMA3, mergeable_ranks=load_tiktoken_bpe(str(path)), special_tokens={})
    assert len(ours.whole_tokens) == 588
    for text in _sample_texts():
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_real_whisper_multilingual():
    path = _real("TOKWORKBENCH_WHISPER_TIKTOKEN", "Whisper's multilingual.tiktoken (pip download --no-deps "
                 "openai-whisper; whisper/assets/ in the sdist)")
    from tiktoken.load import load_tiktoken_bpe

    gpt2 = pre_tokenizer("gpt2").pattern
    ours = load_any(path, "gpt2")
    theirs = tiktoken.Encoding("w", pat_str=gpt2, mergeable_ranks=load_tiktoken_bpe(str(path)), special_tokens={})
    assert ours.whole_tokens == (b"",)
    for text in _sample_texts():
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_real_tekken():
    path = _real("TOKWORKBENCH_TEKKEN", "a Mistral tekken_*.json (pip download --no-deps mistral-common; "
                 "mistral_common/data/ in the wheel)")
    doc = json.loads(path.read_text(encoding="utf-8"))
    n, size = doc["config"]["default_num_special_tokens"], doc["config"]["default_vocab_size"]
    used = {base64.b64decode(v["token_bytes"]): v["rank"] for v in doc["vocab"][: size - n]}
    theirs = tiktoken.Encoding("t", pat_str=doc["config"]["pattern"], mergeable_ranks=used, special_tokens={})
    ours = load_any(path)
    assert ours.vocab_size == size
    for text in _sample_texts():
        assert ours.encode_ordinary(text) == [t + n for t in theirs.encode_ordinary(text)]


def test_ranks_lines_are_read_as_tiktoken_reads_them(ranks, tmp_path):
    """`load_tiktoken_bpe`: bytes.splitlines, bytes.split, base64.b64decode (skips characters
    outside the alphabet), int() (a '+', underscores); the ids follow."""
    from tiktoken.load import load_tiktoken_bpe

    lines = _ranks_file({t: r for t, r in ranks.items() if t not in WHOLE_ONLY}).decode().splitlines()
    lines[300] = lines[300].replace(" ", " +", 1)
    lines[301] = lines[301].replace(" ", "\t", 1) + "\r"
    head, rank = lines[302].split()
    lines[302] = f"{head[:1]}!{head[1:]} {rank[:1]}_{rank[1:]}" if len(rank) > 1 else lines[302]
    path = tmp_path / "odd.tiktoken"
    path.write_bytes(("\n".join(lines) + "\n").encode())
    assert parse_ranks(path.read_bytes()) == load_tiktoken_bpe(str(path))


# -- the batch path with the rank rule's odd chunks (core/bpe/rankguard.py) ------------------------
words = st.lists(st.one_of(st.sampled_from(PIECES), st.text(alphabet=st.sampled_from(list("qzxkjạệcviZ!étheaşd")),
                                                              min_size=1, max_size=8)), min_size=400, max_size=900)


@settings(max_examples=25, deadline=None)
@given(words, st.sampled_from([" ", "", "\n", " x"]))
def test_many_distinct_chunks_take_the_batch_path_with_tiktokens_ids(ranks_path, theirs, parts, glue):
    """Long texts of many distinct chunks: found by offset and encoded in one numpy batch, the
    chunks holding an odd token (whole-only, a later-ranked part) by the rank rule. A fresh model
    each time, so nothing comes from an earlier example's cache."""
    text = glue.join(parts)
    fresh = load_any(ranks_path, "gpt4")
    assert fresh.encode_normalized(text) == theirs.encode_ordinary(text)
    assert fresh._rank_guard is not None and fresh._rank_guard.odd >= len(WHOLE_ONLY)


def test_the_guard_finds_the_odd_tokens(ours, ranks):
    """Odd: the whole-only tokens, and any token holding one. Not `kqj`: the batch rounds take
    the lowest-ranked pair present, so they make `kq` and then `kqj`, as tiktoken does."""
    odd = {t for t in ranks if t and ours._rank_guard.unsafe([t]) == [0]}
    assert odd == set(WHOLE_ONLY)
    assert ours.encode_ordinary("kqj") == [ranks[b"kqj"]]
