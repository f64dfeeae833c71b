"""The tokenizers people use: tiktoken ranks in any valid order (GPT-2's byte order, gaps),
HF byte-level files in their own id order, and the public encodings by name, each checked
against the real library on the same ranks and pattern.

Synthetic tests build their ranks from a model we train here; the tests on the real cl100k_base
and o200k_base files run when the data is present (the `openai-data` extra, in the test extra,
ships it); r50k_base (GPT-2) ships with tokworkbench itself (core/formats/data/), so its tests
always run. Each says why it skips.
"""

import base64
import json

import pytest
import tiktoken
from tokenizers import Tokenizer as HFTokenizer

from tokworkbench.cli import main
from tokworkbench.core import TrainConfig, Trainer, load_corpus, pre_tokenizer, sample_paths
from tokworkbench.core.bytelevel import bytes_to_unicode
from tokworkbench.core.errors import ForeignModelError, ModelFileError
from tokworkbench.core.formats import presets
from tokworkbench.core.formats.hf_bpe import to_hf
from tokworkbench.core.formats.presets import PRESETS, load_preset, preset_ranks
from tokworkbench.core.formats.tiktoken import parse_ranks
from tokworkbench.core.registry.export import export
from tokworkbench.core.registry.load import load_any

HELD_OUT = [
    "The quick brown fox jumps over the lazy dog; it's 3:45pm, isn't it? We'LL see. DON'T",
    "Numbers: 1 12 123 1234 12345 1234567890 3.14159 1,000,000 ١٢٣٤٥ ०१२३ ๑๒๓ 12\u00a0345",
    "안녕하세요, 세계! 한국어 텍스트입니다. 안녕하세요 👋 (hello in Korean!)",
    "日本語の文章と中文的句子。カタカナ ｶﾀｶﾅ 繁體字 ㄅㄆㄇ",
    "Привет, мир! Ελληνικά κείμενα. مرحبا بالعالم. שלום עולם. नमस्ते दुनिया. ভাষা. தமிழ். ไทย ภาษา. "
    "ქართული. Հայերեն. አማርኛ. ᐃᓄᒃᑎᑐᑦ. ᚠᚢᚦ. 𐌰𐌱𐌲. Tiếng Việt. Türkçe İı. Ærøskøbing. Straße ẞ",
    "emoji 😀 👋🏽 👨\u200d👩\u200d👧\u200d👦 🏳️\u200d🌈 🇯🇵🇰🇷🇺🇸 ❤️\u200d🔥 1️⃣ 🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
    "whitespace   runs\t\ttabs\n\n\n  leading and trailing   \r\n\u00a0nbsp\u00a0\u00a0\u3000ideographic"
    "\u2009thin\u2028line\u2029para\x0b\x0c\x85     \n        x",
    "ＡＩ ﬁ ① Ⅻ e\u0301 é Z\u0337a\u0338 x\u20dd",
    "def f(x):\n    return x**2  # comment\n\tprint(f'{x!r}')\n\n\nclass A:\n    pass\n"
    "if (a && b) { c[i] = d->e; } // ok\n<div class=\"x\">&amp;</div> $HOME/.cache ~/x.y\r\n",
    "\u200b\u200d\u200f\ufeff\x00\x01\x07\x1b[31m control \x7f\x9f",
    "",
    " ",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0000000000000000 ............ !!!!!! ----------",
    "<|endoftext|> is special; <|endoftext|><|endoftext|>",
]


def samples() -> list[str]:
    return [d.text for d in load_corpus(sample_paths()).documents]


def _encoding(ranks: dict[bytes, int], pattern: str, specials=None) -> tiktoken.Encoding:
    return tiktoken.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials or {})


def _ranks_file(ranks: dict[bytes, int]) -> bytes:
    return "".join(f"{base64.b64encode(t).decode()} {r}\n"
                   for t, r in sorted(ranks.items(), key=lambda x: x[1])).encode()


@pytest.fixture(scope="module")
def ranked_tokens() -> list[bytes]:
    """The tokens of a small model of ours in rank order: 256 single bytes, then its merges."""
    t = Trainer(samples(), TrainConfig(units="byte", normalizer="none", pre_tokenizer=pre_tokenizer("gpt4"),
                                       tie_break="first"))
    list(t.run(vocab_size=1200))
    return list(t.model().ranked_tokens)


def gpt2_order(tokens: list[bytes]) -> dict[bytes, int]:
    """Single bytes ranked as GPT-2, r50k, cl100k and o200k rank them: '!' is rank 0."""
    singles = [bytes([b]) for b in bytes_to_unicode()]
    return {t: r for r, t in enumerate(singles + tokens[256:])}


def with_gaps(tokens: list[bytes]) -> dict[bytes, int]:
    """Merges at even ranks from 10, single bytes after the last merge, out of byte order."""
    ranks = {t: 10 + 2 * k for k, t in enumerate(tokens[256:])}
    top = 10 + 2 * len(tokens)
    ranks.update({bytes([b]): top + (b * 7) % 256 for b in range(256)})
    return ranks


@pytest.mark.parametrize("order", [gpt2_order, with_gaps], ids=["gpt2-byte-order", "gaps"])
def test_valid_ranks_keep_their_ids_and_encode_as_tiktoken(tmp_path, ranked_tokens, order):
    ranks = order(ranked_tokens)
    path = tmp_path / "r.tiktoken"
    path.write_bytes(_ranks_file(ranks))
    ours = load_any(path, "gpt4")
    theirs = _encoding(ranks, ours.pre_tokenizer.pattern)
    for text in HELD_OUT + [s[:4000] for s in samples()]:
        ids = ours.encode_ordinary(text)
        assert ids == theirs.encode_ordinary(text), text[:40]
        assert ours.decode(ids) == text
    assert ours.token(ranks[b"!"]) == b"!"
    # exported back: byte for byte the same ranks file
    out = tmp_path / "back.tiktoken"
    export(ours, "tiktoken", out)
    assert out.read_bytes() == path.read_bytes()
    again = load_any(out)
    assert again.encode_ordinary(HELD_OUT[2]) == ours.encode_ordinary(HELD_OUT[2])


def test_special_tokens_by_id_on_the_command_line(tmp_path, ranked_tokens, capsys):
    ranks = gpt2_order(ranked_tokens)
    path = tmp_path / "r.tiktoken"
    path.write_bytes(_ranks_file(ranks))
    eot = len(ranks) + 5  # a gap before it, as cl100k has
    assert main(["encode", "-m", str(path), "--split", "gpt4", "--special", f"<|endoftext|>={eot}",
                 "--allow-special", "hi<|endoftext|>", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    theirs = _encoding(ranks, pre_tokenizer("gpt4").pattern, {"<|endoftext|>": eot})
    assert got["ids"] == theirs.encode("hi<|endoftext|>", allowed_special="all")
    assert got["ids"][-1] == eot
    assert main(["decode", "-m", str(path), "--split", "gpt4", "--special", "x=oops", "1"]) == 1
    assert "is not NAME=ID" in capsys.readouterr().err
    assert main(["decode", "-m", str(path), "--split", "gpt4", "--special", f"x={ranks[b'!']}", "1"]) == 1
    assert "which is the rank of b'!'" in capsys.readouterr().err


# -- bad ranks files: one line naming the line or the rank ---------------------------------------
def _lines(ranks: dict[bytes, int]) -> list[str]:
    return _ranks_file(ranks).decode().splitlines()


def _bad(tmp_path, capsys, lines: list[str], match: str) -> None:
    path = tmp_path / "bad.tiktoken"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ForeignModelError, match="."):
        load_any(path, "gpt4")
    assert main(["inspect", str(path), "--split", "gpt4"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err, err


def test_a_token_no_two_lower_ranks_build_is_reached_whole(tmp_path, ranked_tokens):
    """tiktoken looks a chunk up whole before it merges: a token its rule cannot build is still
    a token (Llama 3 has 588), whole-only here, and the ids are tiktoken's."""
    ranks = gpt2_order(ranked_tokens)
    ranks[b"qzx"] = len(ranks)
    path = tmp_path / "whole.tiktoken"
    path.write_bytes(_ranks_file(ranks))
    ours = load_any(path, "gpt4")
    theirs = _encoding(ranks, pre_tokenizer("gpt4").pattern)
    assert ours.is_whole_only(ranks[b"qzx"]) and not ours.is_whole_only(ranks[b"th"] if b"th" in ranks else 300)
    for text in ("qzx", " qzx qzxqzx", "aqzx", HELD_OUT[2]):
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_duplicate_ranks_tokens_and_bad_base64(tmp_path, capsys, ranked_tokens):
    lines = _lines(gpt2_order(ranked_tokens))
    dup_rank = lines + [f"{base64.b64encode(b'zzzq').decode()} 300"]
    _bad(tmp_path, capsys, dup_rank, f"line {len(lines) + 1}: rank 300 is given twice (also on line 301)")
    dup_token = lines + [f"{lines[300].split()[0]} {len(lines)}"]
    _bad(tmp_path, capsys, dup_token, f"line {len(lines) + 1}: the token")
    bad64 = lines[:10] + ["Q$== 10"] + lines[11:]
    _bad(tmp_path, capsys, bad64, "line 11: 'Q$==' is not base64")
    missing = lines[1:]
    _bad(tmp_path, capsys, missing, "lacks 1 of the 256 single bytes (e.g. b'!')")


# -- presets ------------------------------------------------------------------------------------
def test_a_preset_whose_file_does_not_match_its_hash(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TOKWORKBENCH_DATA", str(tmp_path))
    (tmp_path / "cl100k_base.tiktoken").write_bytes(b"IQ== 0\n")
    with pytest.raises(ModelFileError, match="not the published 223921b7"):
        load_preset("cl100k_base")
    assert main(["encode", "-m", "cl100k_base", "x"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cl100k_base.tiktoken: its SHA-256 is" in err


def _no_data_but_ours(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TOKWORKBENCH_DATA", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))


def test_gpt2_works_out_of_the_box(tmp_path, monkeypatch, capsys):
    """r50k_base ships with the package (hash-checked as any other copy): `-m gpt2` needs no
    download and no extra, as the README promises beside cl100k and o200k."""
    _no_data_but_ours(tmp_path, monkeypatch)
    assert main(["encode", "-m", "gpt2", "hello world"]) == 0
    assert capsys.readouterr().out.split() == ["31373", "995"]  # GPT-2's ids, as tiktoken gives them
    assert preset_ranks(PRESETS["r50k_base"])[1] == presets.SHIPPED / "r50k_base.tiktoken.gz"


def test_a_preset_without_data_says_how_to_provide_it(tmp_path, monkeypatch, capsys):
    _no_data_but_ours(tmp_path, monkeypatch)
    monkeypatch.setattr(presets, "SHIPPED", tmp_path / "gone")  # a package that lost its data
    assert main(["encode", "-m", "gpt2", "x"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "r50k_base needs its ranks file r50k_base.tiktoken" in err
    assert "TOKWORKBENCH_DATA" in err and "reinstall tokworkbench" in err


def _real(name: str) -> bytes:
    try:
        raw, _ = preset_ranks(PRESETS[name])
    except ModelFileError as exc:
        source = ("pip install 'tokworkbench[openai-data]'" if name != "r50k_base"
                  else "reinstall tokworkbench, which ships r50k_base.tiktoken.gz")
        pytest.skip(f"no {name} data here ({exc}); {source} runs this test")
    return raw


def _tiktoken_definition(name: str, ranks: dict[bytes, int]) -> dict:
    """tiktoken's own definition of a public encoding (pattern, special tokens), with our ranks
    in place of the download."""
    from tiktoken_ext import openai_public

    saved = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda *a, **k: ranks
    try:
        return getattr(openai_public, name)()
    finally:
        openai_public.load_tiktoken_bpe = saved


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_public_encodings_equal_tiktoken(name, tmp_path, capsys):
    raw = _real(name)
    ranks = parse_ranks(raw)
    spec = _tiktoken_definition(name, ranks)
    theirs = tiktoken.Encoding(name, pat_str=spec["pat_str"], mergeable_ranks=ranks,
                               special_tokens=spec["special_tokens"])
    ours = load_preset(name)
    assert ours.pre_tokenizer.pattern == spec["pat_str"]
    assert ours.special_ids == spec["special_tokens"]
    for text in HELD_OUT + samples():
        ids = ours.encode(text, allowed_special="all")
        assert ids == theirs.encode(text, allowed_special="all"), text[:40]
        assert ours.decode(ids) == text
    # exported back: the same file, byte for byte
    out = tmp_path / f"{name}.tiktoken"
    export(ours, "tiktoken", out)
    assert out.read_bytes() == raw
    text = "안녕하세요 👋 (hello in Korean!)"
    assert main(["encode", "-m", name, text, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["ids"] == theirs.encode(text)


# -- Hugging Face byte-level files in their own id order -----------------------------------------
def test_gpt2_like_tokenizer_json_keeps_its_ids(tmp_path, ranked_tokens):
    """A tokenizer.json numbered as GPT-2's is (its byte symbols first, '!' is 0), with an added
    token: read with those ids, equal to HF, and written back the same."""
    ranks = gpt2_order(ranked_tokens)
    path = tmp_path / "r.tiktoken"
    path.write_bytes(_ranks_file(ranks))
    source = load_any(path, "gpt4", specials={"<|endoftext|>": len(ranks)})
    doc = to_hf(source)
    hf_path = tmp_path / "tokenizer.json"
    hf_path.write_text(json.dumps(doc))
    ours = load_any(hf_path)
    hf = HFTokenizer.from_file(str(hf_path))
    assert ours.special_ids == {"<|endoftext|>": len(ranks)}
    assert hf.token_to_id("!") == 0 and ours.token(0) == b"!"
    for text in HELD_OUT:
        ids = ours.encode(text, allowed_special="all")
        assert ids == hf.encode(text, add_special_tokens=False).ids
        assert ids == source.encode(text, allowed_special="all")
    assert to_hf(ours) == doc


def test_bad_hf_vocabularies_are_named(tmp_path, ranked_tokens):
    doc = to_hf(load_any(_write(tmp_path, gpt2_order(ranked_tokens)), "gpt4"))
    vocab = doc["model"]["vocab"]
    names = list(vocab)
    twice = json.loads(json.dumps(doc))
    twice["model"]["vocab"][names[300]] = vocab[names[301]]
    with pytest.raises(ForeignModelError, match=f"id {vocab[names[301]]} is given to both"):
        load_any(_write_json(tmp_path, twice))
    unknown = json.loads(json.dumps(doc))
    unknown["model"]["merges"][3] = ["Ġ", "zzzq"]
    with pytest.raises(ForeignModelError, match="merge 3 .* names 'zzzq', which is not in the vocabulary"):
        load_any(_write_json(tmp_path, unknown))


def _write(tmp_path, ranks) -> str:
    path = tmp_path / "w.tiktoken"
    path.write_bytes(_ranks_file(ranks))
    return str(path)


def _write_json(tmp_path, doc) -> str:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_long_tokens_take_every_path(tmp_path, ranked_tokens):
    """Tokens of 2 to 2048 bytes: each width the recovery batches by, and the one-token-at-a-time
    path above it, give the merges tiktoken's rule gives."""
    ranks = gpt2_order(ranked_tokens)
    top = len(ranks)
    for j in range(1, 12):
        ranks[b"\x01" * 2**j] = top + j
    ours = load_any(_write(tmp_path, ranks), "gpt4")
    assert ours.merges[-1] == (ours.base_size + len(ours.merges) - 2,) * 2
    theirs = _encoding(ranks, ours.pre_tokenizer.pattern)
    for n in (1, 3, 17, 300, 1025, 2048, 5000):
        text = "x" + "\x01" * n + " y"
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_tokenizer_json_from_hf_bytelevel_trainer_keeps_its_ids(tmp_path):
    """HF's own ByteLevel BPE, GPT-2 style (ByteLevel pre-tokenizer with its regex), with added
    tokens first: read with HF's ids, equal to HF, and written back so HF encodes the same."""
    from tokenizers import decoders, models, pre_tokenizers, trainers

    hf = HFTokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=["<|endoftext|>", "<pad>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    hf.train_from_iterator(samples(), trainer=trainer)
    path = tmp_path / "hf.json"
    hf.save(str(path))
    ours = load_any(path)
    assert ours.special_ids == {"<|endoftext|>": 0, "<pad>": 1} and ours.ids is not None
    back = tmp_path / "back.json"
    export(ours, "hf", back)
    again = HFTokenizer.from_file(str(back))
    for text in HELD_OUT:
        ids = ours.encode(text, allowed_special="all")
        assert ids == hf.encode(text, add_special_tokens=False).ids
        assert ids == again.encode(text, add_special_tokens=False).ids
        assert ours.decode(ids) == text


def test_a_first_line_that_looks_like_json_and_does_not_start_at_rank_0(tmp_path, ranked_tokens):
    """'ZXhh 17' starts with no JSON character, '1A== 9' does: both are ranks lines."""
    ranks = with_gaps(ranked_tokens)
    lines = _lines(ranks)
    lines.insert(0, lines.pop(next(i for i, line in enumerate(lines) if line[0] in "0123456789tfn")))
    path = tmp_path / "r.tiktoken"
    path.write_text("\n".join(lines) + "\n")
    ours = load_any(path, "gpt4")
    assert ours.encode_ordinary(HELD_OUT[0]) == _encoding(ranks, ours.pre_tokenizer.pattern).encode_ordinary(HELD_OUT[0])


def test_explicit_n_vocab_is_checked_as_tiktoken_checks_it(tmp_path, ranked_tokens):
    ranks = gpt2_order(ranked_tokens)
    path = tmp_path / "r.tiktoken"
    export(load_any(_write(tmp_path, ranks), "gpt4", specials={"<|endoftext|>": len(ranks)}), "tiktoken", path)
    side = tmp_path / "r.tiktoken.json"
    meta = json.loads(side.read_text())
    assert meta["explicit_n_vocab"] == len(ranks) + 1
    meta["explicit_n_vocab"] += 1
    side.write_text(json.dumps(meta))
    with pytest.raises(ForeignModelError, match="explicit_n_vocab"):
        load_any(path)
