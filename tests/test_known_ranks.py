"""Ranks files known by their SHA-256 open with their library's pattern and special tokens.

The real files are read where they are provided (TOKWORKBENCH_LLAMA3_MODEL, TOKWORKBENCH_LLAMA4_MODEL,
TOKWORKBENCH_WHISPER_TIKTOKEN); the rules that do not need them always run.
"""

import gzip
import os
from pathlib import Path

import pytest
import regex
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.cli import main
from tokworkbench.core.formats.known_ranks import KNOWN_RANKS, WHISPER_LANGUAGES, known_ranks
from tokworkbench.core.formats.presets import PRESETS, SHIPPED
from tokworkbench.core.formats.tiktoken import ranks_digest
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.text.pretokenize import pre_tokenizer

# the patterns as the libraries' own code spells them
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
WHISPER = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA4 = (r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
          r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
          r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""")

TRICKY = st.text(alphabet=st.sampled_from(list(" \t\n\r\x0b\x0c\u00a0\u3000aAbZé'sSdDtTlLmvVrReE19.,!?-/:\"()ß中ं\u0301")),
                 max_size=40)


def test_the_presets_split_as_the_libraries_patterns_do():
    """Llama 3 and 4 name their pattern exactly; Whisper's differs from GPT-2's in spelling only
    (no `\\s++$`, `\\s+` last), which the hypothesis test below holds to the same chunks."""
    assert pre_tokenizer("llama3").pattern == LLAMA3
    assert pre_tokenizer("o200k").pattern == LLAMA4


@settings(max_examples=3000, deadline=None)
@given(st.one_of(TRICKY, st.text(max_size=30)))
def test_whisper_pattern_splits_as_gpt2(text):
    assert pre_tokenizer("gpt2").split(text) == regex.findall(WHISPER, text)


def test_llama3_is_not_cl100k_at_the_end_of_a_text():
    """Why llama3 is a preset of its own: cl100k keeps trailing spaces after a newline whole."""
    assert regex.findall(LLAMA3, "a\r ") == pre_tokenizer("llama3").split("a\r ") == ["a", "\r", " "]
    assert pre_tokenizer("gpt4").split("a\r ") == ["a", "\r "]


def test_special_ids_as_the_libraries_number_them():
    llama3 = KNOWN_RANKS["82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"].specials(128000)
    assert (llama3["<|begin_of_text|>"], llama3["<|eot_id|>"], llama3["<|image|>"]) == (128000, 128009, 128011)
    assert llama3["<|reserved_special_token_2|>"] == 128012 and max(llama3.values()) == 128255 == 128000 + 255
    llama4 = KNOWN_RANKS["d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed"].specials(200000)
    # llama4/tokenizer.py's own comments: post-train 200005..200079, vision 200080..201133, reasoning ..201143
    assert llama4["<|header_start|>"] == 200005 and llama4["<|text_post_train_reserved_special_token_68|>"] == 200079
    assert llama4["<|image_start|>"] == 200080 and llama4["<|vision_reserved_special_token_1047|>"] == 201133
    assert llama4["<|reasoning_thinking_end|>"] == 201143 and len(llama4) == 2048 == len(set(llama4.values()))
    whisper = KNOWN_RANKS["b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126"].specials(50257)
    assert len(WHISPER_LANGUAGES) == 100
    assert (whisper["<|endoftext|>"], whisper["<|startoftranscript|>"], whisper["<|en|>"]) == (50257, 50258, 50259)
    assert (whisper["<|translate|>"], whisper["<|transcribe|>"], whisper["<|notimestamps|>"]) == (50358, 50359, 50363)
    assert whisper["<|0.00|>"] == 50364 and max(whisper.values()) == 51864  # n_vocab 51865


def test_an_openai_ranks_file_opens_by_its_content(tmp_path, capsys):
    """r50k's ranks as a bare file (no companion, no --split) open as the gpt2 preset does."""
    path = tmp_path / "vocab.bpe.tiktoken"
    path.write_bytes(gzip.decompress((SHIPPED / "r50k_base.tiktoken.gz").read_bytes()))
    assert known_ranks(ranks_digest(path.read_bytes())) is not None
    tok = load_any(path)
    assert tok.pre_tokenizer.name == "gpt2" and tok.special_ids == PRESETS["r50k_base"].special_tokens
    assert main(["encode", "-m", str(path), "--allow-special", "hello world<|endoftext|>"]) == 0
    assert capsys.readouterr().out.split() == ["31373", "995", "50256"]


def test_an_unknown_ranks_file_still_asks_for_its_pattern(tmp_path, capsys):
    raw = gzip.decompress((SHIPPED / "r50k_base.tiktoken.gz").read_bytes())
    path = tmp_path / "other.tiktoken"
    path.write_bytes(b"".join(raw.splitlines(keepends=True)[:-1]))  # another file: the last rank gone
    assert known_ranks(ranks_digest(path.read_bytes())) is None
    assert main(["inspect", str(path)]) == 1
    assert "llama3" in capsys.readouterr().err


# -- the real files, when provided --------------------------------------------------------------
def _real(env: str, how: str) -> Path:
    value = os.environ.get(env)
    if not value or not Path(value).is_file():
        pytest.skip(f"set {env} to {how}")
    return Path(value)


def _texts() -> list[str]:
    folder = Path(__file__).resolve().parent.parent / "sample_texts"
    odd = "Xin chào, tôi là người Việt. Nhiều việc.<|begin_of_text|> <|eot_id|>\r \n\n  x\t <|endoftext|><|en|>"
    return [odd] + [p.read_text(encoding="utf-8")[:30000] for p in sorted(folder.glob("*.txt"))]


@pytest.mark.parametrize("env, pattern, how", [
    ("TOKWORKBENCH_LLAMA3_MODEL", LLAMA3, "llama_models/llama3/tokenizer.model (pip download --no-deps llama-models)"),
    ("TOKWORKBENCH_LLAMA4_MODEL", LLAMA4, "llama_models/llama4/tokenizer.model (pip download --no-deps llama-models)"),
    ("TOKWORKBENCH_WHISPER_TIKTOKEN", WHISPER, "whisper/assets/multilingual.tiktoken (pip download openai-whisper)"),
])
def test_real_known_files_open_as_their_library_runs_them(env, pattern, how):
    from tiktoken.load import load_tiktoken_bpe

    path = _real(env, how)
    ours = load_any(path)  # no --split, no --special: known by content
    ranks = load_tiktoken_bpe(str(path))
    known = known_ranks(ranks_digest(path.read_bytes()))
    theirs = tiktoken.Encoding("real", pat_str=pattern, mergeable_ranks=ranks, special_tokens=known.specials(len(ranks)))
    assert ours.special_ids == theirs._special_tokens and ours.vocab_size == theirs.n_vocab
    for text in _texts():
        assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
