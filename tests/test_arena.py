"""The arena against the reference libraries: token counts, bytes per token and premiums are
tiktoken's own on the sample texts; unknown and byte-fallback counts are SentencePiece's; a lossy
round trip (BERT's lowercasing) is counted against HF's own decoding. And the CLI's formats."""

import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.cli import main
from tokworkbench.core.errors import ModelFileError, ReportError
from tokworkbench.core.formats.presets import PRESETS, load_preset, preset_ranks
from tokworkbench.core.formats.tiktoken import parse_ranks
from tokworkbench.core.inspection.arena import ALL, differing_chars, run_arena, score_tokenizer, unknown_ids
from tokworkbench.core.text.samples import sample_paths

SAMPLES = [(p.name, p.read_text(encoding="utf-8")) for p in sample_paths()]
REFERENCE = SAMPLES[0][0]


def _tiktoken(name: str) -> tiktoken.Encoding:
    try:
        raw, _ = preset_ranks(PRESETS[name])
    except ModelFileError as exc:
        pytest.skip(f"no {name} data here ({exc}); pip install 'tokworkbench[openai-data]' runs this test")
    from tiktoken_ext import openai_public

    ranks = parse_ranks(raw)
    saved = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda *a, **k: ranks
    try:
        spec = getattr(openai_public, name)()
    finally:
        openai_public.load_tiktoken_bpe = saved
    return tiktoken.Encoding(name, pat_str=spec["pat_str"], mergeable_ranks=ranks, special_tokens=spec["special_tokens"])


@pytest.fixture(scope="module")
def presets_arena():
    encodings = {n: _tiktoken(n) for n in ("cl100k_base", "o200k_base")}
    return encodings, run_arena([(n, load_preset(n)) for n in encodings], SAMPLES, REFERENCE)


def test_bytes_per_token_and_premium_are_tiktokens(presets_arena):
    encodings, arena = presets_arena
    compared = 0
    for name, enc in encodings.items():
        ref_tokens = len(enc.encode_ordinary(SAMPLES[0][1]))
        for text_name, text in SAMPLES:
            theirs = enc.encode_ordinary(text)
            score = arena.score(name, text_name)
            assert score.tokens == len(theirs), (name, text_name)
            assert score.bytes_per_token == len(text.encode("utf-8")) / len(theirs)
            assert score.tokens_per_word == len(theirs) / len(text.split())
            assert score.premium == len(theirs) / ref_tokens
            assert score.distinct == len(set(theirs))
            assert score.exact and score.differing == 0 and score.unknown == 0 and score.byte_pieces == 0
            compared += len(theirs)
        total = arena.score(name, ALL)
        all_ids = [i for _, t in SAMPLES for i in enc.encode_ordinary(t)]
        assert total.tokens == len(all_ids) and total.distinct == len(set(all_ids))
        assert total.bytes_per_token == sum(len(t.encode()) for _, t in SAMPLES) / len(all_ids)
        assert total.premium is None
    assert compared > 50_000


def test_unknown_and_byte_pieces_are_sentencepieces(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    from tokworkbench.core.formats.sentencepiece import from_sentencepiece

    train = dict(SAMPLES)["01_en_genesis_kjv.txt"]
    (tmp_path / "en.txt").write_text(train, encoding="utf-8")
    texts = [(n, t) for n, t in SAMPLES if not n.startswith("01_")]
    seen_bytes = seen_unknown = 0
    for fallback, kind in [(True, "bpe"), (False, "bpe"), (True, "unigram"), (False, "unigram")]:
        prefix = tmp_path / f"m{fallback}{kind}"
        spm.SentencePieceTrainer.train(input=str(tmp_path / "en.txt"), model_prefix=str(prefix), model_type=kind,
                                       vocab_size=600, byte_fallback=fallback, minloglevel=2)
        sp = spm.SentencePieceProcessor(model_file=f"{prefix}.model")
        ours = from_sentencepiece(Path(f"{prefix}.model").read_bytes())
        scored = score_tokenizer("sp", ours, texts, texts[0][0])
        for (name, text), score in zip(texts, scored.scores):
            ids = sp.encode(text)
            assert score.tokens == len(ids), name
            assert score.byte_pieces == sum(sp.is_byte(i) for i in ids), name
            assert score.unknown == sum(sp.is_unknown(i) for i in ids), name
            assert score.differing == differing_chars(text, sp.decode(ids)), name
            seen_bytes += score.byte_pieces
            seen_unknown += score.unknown
        assert unknown_ids(ours) == {sp.unk_id()}
    assert seen_bytes > 2000 and seen_unknown > 200  # both kinds of fallback were met, in both model types


def test_a_lossy_round_trip_is_counted_as_hf_decodes():
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers

    from tokworkbench.core.formats.hf import from_hf

    hf = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    hf.normalizer = normalizers.BertNormalizer()
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.decoder = decoders.WordPiece()
    hf.train_from_iterator([SAMPLES[0][1]], trainers.WordPieceTrainer(vocab_size=800, special_tokens=["[UNK]"]))
    ours = from_hf(json.loads(hf.to_str()))
    scored = score_tokenizer("bert", ours, SAMPLES, REFERENCE)
    lossy = 0
    for (name, text), score in zip(SAMPLES, scored.scores):
        ids = hf.encode(text, add_special_tokens=False).ids
        decoded = hf.decode(ids, skip_special_tokens=False)  # [UNK] shows, as it does in ours
        assert score.tokens == len(ids) and score.unknown == ids.count(hf.token_to_id("[UNK]")), name
        assert score.differing == differing_chars(text, decoded), name
        assert score.exact is (decoded == text)
        assert (score.first_difference is None) is (decoded == text)
        lossy += not score.exact
    assert lossy == len(SAMPLES)  # lowercasing and the lost line ends: none comes back


@pytest.mark.parametrize(("text", "decoded", "changed"), [
    ("Hello World", "hello world", 2), ("ﬁne", "fine", 2), ("a , b", "a, b", 1), ("ab", "abc", 1),
    ("same", "same", 0), ("x", "", 1), ("", "y", 1), ("The cat.\nThe dog.", "the cat. the dog.", 3),
])
def test_differing_characters(text, decoded, changed):
    assert differing_chars(text, decoded) == changed


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="aAb ,.\n\tﬁ", max_size=400), st.text(alphabet="aAb ,.\n\tﬁ", max_size=400))
def test_differing_characters_is_zero_only_for_equal_texts_and_bounded(text, decoded):
    changed = differing_chars(text, decoded)
    assert (changed == 0) is (text == decoded)
    assert changed <= max(len(text), len(decoded))
    assert changed >= abs(len(text) - len(decoded))


def test_a_long_lossy_text_is_aligned_by_words():
    text = dict(SAMPLES)["01_en_genesis_kjv.txt"]
    lowered = text.lower()
    assert differing_chars(text, lowered) == sum(c != d for c, d in zip(text, lowered))


def test_bad_arenas_are_one_clear_error():
    with pytest.raises(ReportError, match="not one of the texts"):
        run_arena([("gpt2", load_preset("gpt2"))], SAMPLES[:2], "nope.txt")
    with pytest.raises(ReportError, match="at least one text"):
        run_arena([("gpt2", load_preset("gpt2"))], [])
    with pytest.raises(ReportError, match="two tokenizers"):
        run_arena([("a", load_preset("gpt2")), ("a", load_preset("gpt2"))], SAMPLES[:1])


def _texts(tmp_path) -> list[str]:
    paths = []
    for name, text in (("en.txt", "The cat sat on the mat."), ("de.txt", "Die Katze saß auf der Matte."),
                       ("=1+1.txt", "x")):
        (tmp_path / name).write_text(text, encoding="utf-8")
        paths.append(str(tmp_path / name))
    return paths


def test_the_cli_formats_hold_the_same_numbers(tmp_path, capsys):
    paths = _texts(tmp_path)
    assert main(["arena", "-m", "gpt2", *paths, "--format", "json", "--reference", paths[1]]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["reference"] == "de.txt" and doc["texts"] == ["en.txt", "de.txt", "=1+1.txt"]
    rows = {r["text"]: r for r in doc["rows"]}
    gpt2 = load_preset("gpt2")
    en, de = (len(gpt2.encode_ordinary(Path(p).read_text())) for p in paths[:2])
    assert rows["en.txt"]["tokens"] == en and rows["en.txt"]["premium"] == en / de
    assert rows[ALL]["tokens"] == en + de + 1 and rows[ALL]["premium"] is None
    assert main(["arena", "-m", "gpt2", *paths, "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["text"] for r in table] == ["en.txt", "de.txt", "'=1+1.txt", ALL]  # no formula for a spreadsheet
    assert float(table[0]["bytes_per_token"]) == len(b"The cat sat on the mat.") / en
    assert main(["arena", "-m", "gpt2", *paths, "--format", "markdown"]) == 0
    md = capsys.readouterr().out.splitlines()
    assert md[0].startswith("| tokenizer | text |") and len(md) == 2 + 4
    assert main(["arena", "-m", "gpt2", *paths]) == 0
    out = capsys.readouterr().out
    assert "premium: tokens on a text / tokens on en.txt" in out and "lossy" not in out


def test_the_cli_writes_an_svg_and_scores_several_tokenizers(tmp_path, capsys):
    paths = _texts(tmp_path)
    svg = tmp_path / "chart.svg"
    assert main(["arena", "-m", "gpt2", "-m", str(paths[0]) + ".missing", *paths]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ".missing" in err
    assert not svg.exists()
    assert main(["arena", "-m", "gpt2", "-m", "r50k_base", *paths, "--svg", str(svg), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tokenizers"] == ["gpt2", "r50k_base"]
    by = {(r["tokenizer"], r["text"]): r["tokens"] for r in doc["rows"]}
    assert all(by[("gpt2", t)] == by[("r50k_base", t)] for t in doc["texts"])  # the same ranks, two processes
    root = ET.fromstring(svg.read_text(encoding="utf-8"))
    assert root.tag.endswith("svg") and len([e for e in root.iter() if e.tag.endswith("rect")]) > 8


def test_a_reference_that_is_not_a_text_is_one_line(tmp_path, capsys):
    paths = _texts(tmp_path)
    assert main(["arena", "-m", "gpt2", *paths, "--reference", "fr.txt"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fr.txt" in err and "en.txt" in err


LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def test_llama3_in_the_arena_is_tiktokens(capsys):
    import os

    path = os.environ.get("TOKWORKBENCH_LLAMA3_MODEL")
    if not path:
        pytest.skip("set TOKWORKBENCH_LLAMA3_MODEL to Llama 3's tokenizer.model (pip download --no-deps llama-models)")
    from tiktoken.load import load_tiktoken_bpe

    theirs = tiktoken.Encoding("llama3", pat_str=LLAMA3, mergeable_ranks=load_tiktoken_bpe(path), special_tokens={})
    assert main(["arena", "-m", "gpt2", "-m", path, "--split", "regex:" + LLAMA3, "--format", "json"]) == 0
    rows = {r["text"]: r for r in json.loads(capsys.readouterr().out)["rows"] if r["tokenizer"] == path}
    for name, text in SAMPLES:
        ids = theirs.encode_ordinary(text)
        assert rows[name]["tokens"] == len(ids) and rows[name]["bytes_per_token"] == len(text.encode()) / len(ids)
        assert rows[name]["exact"] is True


def test_a_text_that_cannot_be_encoded_is_named_and_left_out_of_the_totals(tmp_path, capsys):
    from tokworkbench.core.fixed.model import FixedVocab
    from tokworkbench.core.models.roles import Roles
    from tokworkbench.core.registry import modelfile

    with_unk = FixedVocab(("<unk>", "a", "b", "ab", " "), Roles(unk="<unk>"))
    without = FixedVocab(("a", "b", "ab", " "))
    arena = run_arena([("unk", with_unk), ("none", without)], [("t1", "ab a"), ("t2", "abc x")], "t1")
    assert arena.score("unk", "t2").unknown == 2 and arena.score("unk", "t2").unknown_rate == 0.5
    assert arena.score("unk", "t2").exact is False  # '<unk>' is not the text it stands for
    failed = arena.score("none", "t2")
    assert failed.error and "'c'" in failed.error and failed.tokens_per_word is None and failed.exact is None
    total = arena.score("none", ALL)
    assert total.tokens == 3 and total.bytes == 4 and total.exact is False
    assert "1 of 2 texts could not be encoded (t2:" in total.left_out
    path = tmp_path / "v.json"
    modelfile.save(without, path)
    (tmp_path / "t1.txt").write_text("ab a", encoding="utf-8")
    (tmp_path / "t2.txt").write_text("abc x", encoding="utf-8")
    assert main(["arena", "-m", str(path), str(tmp_path / "t1.txt"), str(tmp_path / "t2.txt")]) == 0
    out = capsys.readouterr().out
    assert f"error: {path} on t2.txt: no token of this fixed vocabulary matches at offset 2" in out
