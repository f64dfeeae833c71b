"""Issue 24/25 item 7: a ranks file with whole-only tokens (Llama 3's form) exported to HF
tokenizer.json as transformers' TikTokenConverter writes it (Split + ByteLevel(use_regex=false),
`ignore_merges`, every split of each token into two ranked tokens) gives tiktoken's ids. The small
ranks file is built here (as tests/test_whole_chunk.py builds it); Llama 3's own is checked when
TOKWORKBENCH_LLAMA3_MODEL names it."""

import base64
import json
import os
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer

from tokworkbench.cli import main
from tokworkbench.core.formats.presets import PRESETS, preset_ranks
from tokworkbench.core.formats.ranks_hf_export import converter_merges
from tokworkbench.core.formats.tiktoken import parse_ranks
from tokworkbench.core.registry.export import export
from tokworkbench.core.registry.load import load_any

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
WHOLE_ONLY = [" việc".encode(), b"qzx", " değişik".encode(), b"Zzq!"]
LATER_PART = (b"kqj", b"kq")  # 'kqj' is ranked before its part 'kq'
PIECES = ["qzx", " việc", " vi", "ệc", " değişik", "Zzq!", "kqj", "kq", "kqjz", "jkq", "a", " the", " ", "\n",
          "é", "Việt", "x", "!", "12", "değ", "  ", "\t\n", "'s", "'LL", "1234567"]
texts = st.one_of(st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
                  st.text(alphabet=st.sampled_from(list("qzxkjạệcviZ! \nétheaş'sL19\t")), max_size=30),
                  st.text(max_size=20))
SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"


def _ranks_file(ranks: dict[bytes, int]) -> bytes:
    return "".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in sorted(ranks.items(), key=lambda x: x[1])).encode()


def sample_texts() -> list[str]:
    return [p.read_text(encoding="utf-8", errors="replace")[:20000] for p in sorted(SAMPLES.glob("*.txt"))]


@pytest.fixture(scope="module")
def ranks() -> dict[bytes, int]:
    raw, _ = preset_ranks(PRESETS["r50k_base"])
    out = {t: r for t, r in parse_ranks(raw).items() if r < 3000}
    for t in WHOLE_ONLY + list(LATER_PART):
        out[t] = len(out)
    return out


@pytest.fixture(scope="module")
def pair(ranks, tmp_path_factory):
    folder = tmp_path_factory.mktemp("llama3")
    path = folder / "small.tiktoken"
    path.write_bytes(_ranks_file(ranks))
    ours = load_any(path, "regex:" + LLAMA3)
    assert ours.join == "ranks"  # the model this export is for
    out = folder / "tokenizer.json"
    notes = export(ours, "hf", out)
    assert notes[-1] == f"wrote {out}"
    theirs = tiktoken.Encoding("small", pat_str=LLAMA3, mergeable_ranks=ranks, special_tokens={})
    return ours, HFTokenizer.from_file(str(out)), theirs, out


@settings(max_examples=400, deadline=None)
@given(texts)
def test_hypothesis_text_gives_tiktokens_ids(pair, text):
    ours, hf, theirs, _ = pair
    want = theirs.encode_ordinary(text)
    assert hf.encode(text, add_special_tokens=False).ids == want
    assert ours.encode_ordinary(text) == want


def test_sample_texts_give_tiktokens_ids(pair):
    _, hf, theirs, _ = pair
    texts = sample_texts() + [" ".join(PIECES) * 50, "kqjz", " việcx việc", "qzxqzx"]
    for text in texts:
        assert hf.encode(text, add_special_tokens=False).ids == theirs.encode_ordinary(text)
    assert len(texts) > 10


def test_whole_only_tokens_are_reached_and_decoded(pair, ranks):
    _, hf, theirs, out = pair
    whole = [t for t in WHOLE_ONLY if theirs.encode_ordinary(t.decode()) == [ranks[t]]]  # a chunk of its own
    assert len(whole) == 3
    for token in whole:
        assert hf.encode(token.decode(), add_special_tokens=False).ids == [ranks[token]]
        assert hf.decode([ranks[token]]) == token.decode()
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["model"]["ignore_merges"] is True
    assert [p["type"] for p in doc["pre_tokenizer"]["pretokenizers"]] == ["Split", "ByteLevel"]
    assert doc["pre_tokenizer"]["pretokenizers"][1]["use_regex"] is False
    assert doc["decoder"]["type"] == "ByteLevel"


def test_merges_are_every_split_in_rank_order():
    ranks = {b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"bc": 4, b"abc": 5, b"cab": 6}
    assert converter_merges(ranks) == [(b"a", b"b"), (b"b", b"c"), (b"a", b"bc"), (b"ab", b"c"), (b"c", b"ab")]


def test_the_cli_writes_it(pair, ranks, tmp_path):
    path = tmp_path / "s.tiktoken"
    path.write_bytes(_ranks_file(ranks))
    out = tmp_path / "t.json"
    assert main(["export", "-m", str(path), "--split", "regex:" + LLAMA3, "--format", "hf", "-o", str(out)]) == 0
    hf = HFTokenizer.from_file(str(out))
    assert hf.get_vocab_size() == len(ranks)
    text = " việc kqjz qzx değişik"
    assert hf.encode(text, add_special_tokens=False).ids == pair[2].encode_ordinary(text)
    assert ranks[b"kqj"] in hf.encode("kqjz", add_special_tokens=False).ids  # its part 'kq' is ranked after it


def test_real_llama3():
    value = os.environ.get("TOKWORKBENCH_LLAMA3_MODEL")
    if not value or not Path(value).is_file():
        pytest.skip("set TOKWORKBENCH_LLAMA3_MODEL to Llama 3's tokenizer.model (pip download --no-deps "
                    "llama-models; llama_models/llama3/tokenizer.model in the wheel)")
    from tiktoken.load import load_tiktoken_bpe

    path = Path(value)
    ours = load_any(path, "regex:" + LLAMA3)
    ranks = load_tiktoken_bpe(str(path))
    theirs = tiktoken.Encoding("llama3", pat_str=LLAMA3, mergeable_ranks=ranks, special_tokens={})
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"llama3-export-{os.getpid()}.json"
    try:
        export(ours, "hf", out)
        hf = HFTokenizer.from_file(str(out))
    finally:
        out.unlink(missing_ok=True)
    texts = sample_texts() + [("Xin chào, tôi là người Việt. Nhiều việc. Değişik şeyler. Привет мир! 你好世界 12345 "
                              "hello world .:.: :::: e\u0301\n\n  tabs\tand  spaces")]
    for text in texts:
        assert hf.encode(text, add_special_tokens=False).ids == theirs.encode_ordinary(text)


def test_named_special_tokens_keep_their_ids(ranks, tmp_path):
    path = tmp_path / "s.tiktoken"
    path.write_bytes(_ranks_file(ranks))
    out = tmp_path / "t.json"
    bos, eos = len(ranks) + 10, len(ranks) + 11
    assert main(["export", "-m", str(path), "--split", "regex:" + LLAMA3, "--special", f"<|begin_of_text|>={bos}",
                 "--special", f"<|end_of_text|>={eos}", "--format", "hf", "-o", str(out)]) == 0
    hf = HFTokenizer.from_file(str(out))
    theirs = tiktoken.Encoding("s", pat_str=LLAMA3, mergeable_ranks=ranks,
                               special_tokens={"<|begin_of_text|>": bos, "<|end_of_text|>": eos})
    text = "<|begin_of_text|> việc kqjz<|end_of_text|>"
    assert hf.encode(text, add_special_tokens=False).ids == theirs.encode(text, allowed_special="all")
    assert bos in hf.encode(text, add_special_tokens=False).ids
