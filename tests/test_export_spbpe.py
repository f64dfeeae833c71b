"""Issue 24/25 item 7: a SentencePiece BPE model exported to HF tokenizer.json (LlamaConverter's form)
gives SentencePiece's ids, or the export is refused in one line saying why. Models are trained
here with sentencepiece (model_type=bpe, small vocabularies, seconds)."""

import json
import os
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tokworkbench.cli import main
from tokworkbench.core.errors import ExportError
from tokworkbench.core.formats.spbpe_hf_export import merges_of
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.registry.export import export
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.spbpe.modelfile import checked_model
from tokworkbench.core.text.spnormalize import SpNormalizer

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")
tokenizers = pytest.importorskip("tokenizers")

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
TRAIN = ["01_en_genesis_kjv.txt", "03_udhr_article1.txt", "08_ru_fortunes.txt", "04_emoji_symbols_numbers.txt"]
SPECIAL = ("<s>", "</s>", "<unk>")  # HF matches these in text as special tokens, SentencePiece does not
OUTSIDE = list("日本語한국어ÆøÅ€😀👋🏽\u200d\U0001F1EF\U0001F1F5")  # characters the small vocabularies lack
SPACES = list(" \t\n\r\xa0\u3000\u2581") * 3
TRICKY = ["", " ", "  lead", "trail   ", "a    b", "▁", "▁▁a", " ▁x", "x ▁", "tab\there", "日本", "😀 a 😀",
          "e\u0301", "\x01", "\x01 x", "a\x01\x01b"]


def sample_lines() -> list[str]:
    out = []
    for path in sorted(SAMPLES.glob("*")):
        if path.suffix in (".txt", ".py"):
            out += path.read_text(encoding="utf-8").split("\n")[:300]
    return [line for line in out if not any(s in line for s in SPECIAL)]


def _alphabet() -> list[str]:
    text = "".join((SAMPLES / name).read_text(encoding="utf-8") for name in TRAIN)
    return sorted(set(text) - set("<>")) + OUTSIDE + SPACES


texts = st.one_of(st.text(alphabet=st.sampled_from(_alphabet()), max_size=40),
                  st.lists(st.sampled_from(TRICKY + ["the", " of", "Лев", "and", "1234"]), max_size=8).map("".join))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("spbpe")
    (out / "controls.tsv").write_text("1\t\n9\t20\nB\t20\n", encoding="ascii")  # \x01 dropped, \t \v a space

    def train(name: str, **kwargs) -> Path:
        args = {"input": ",".join(str(SAMPLES / n) for n in TRAIN), "model_prefix": str(out / name), "vocab_size": 1000,
                    "model_type": "bpe", "character_coverage": 0.995, "byte_fallback": True, "minloglevel": 2}
        spm.SentencePieceTrainer.train(**(args | kwargs))
        return out / f"{name}.model"

    identity = {"normalization_rule_name": "identity"}
    return {"identity": train("identity", remove_extra_whitespaces=False, **identity),
            "collapse": train("collapse", **identity),
            "controls": train("controls", normalization_rule_tsv=str(out / "controls.tsv")),
            "no_fallback": train("no_fallback", byte_fallback=False, **identity),
            "no_prefix": train("no_prefix", add_dummy_prefix=False, remove_extra_whitespaces=False, **identity),
            "nmt_nfkc": train("nmt_nfkc")}


EXACT = ["identity", "collapse", "controls", "no_fallback", "no_prefix"]


@pytest.fixture(scope="module")
def exported(trained, tmp_path_factory):
    out = tmp_path_factory.mktemp("spbpe_hf")
    pairs = {}
    for name in EXACT:
        ours = load_any(trained[name])
        path = out / f"{name}.json"
        notes = export(ours, "hf", path)
        assert notes[-1] == f"wrote {path}"
        pairs[name] = (spm.SentencePieceProcessor(model_file=str(trained[name])),
                       tokenizers.Tokenizer.from_file(str(path)), ours)
    return pairs


def _same(pair, text: str) -> None:
    sp, hf, ours = pair
    want = sp.encode(text)
    assert hf.encode(text, add_special_tokens=False).ids == want, repr(text)
    assert ours.encode_ordinary(text) == want, repr(text)


@pytest.mark.parametrize("name", EXACT)
def test_sample_texts_and_tricky_strings_give_sentencepieces_ids(exported, name):
    lines = sample_lines() + TRICKY
    for text in lines:
        _same(exported[name], text)
    whole = "\n".join(lines[:400])
    _same(exported[name], whole)
    assert len(lines) > 1000


@settings(max_examples=150, deadline=None)
@given(texts)
def test_hypothesis_text_gives_sentencepieces_ids(exported, text):
    assume(not any(s in text for s in SPECIAL))
    for name in EXACT:
        _same(exported[name], text)


def test_the_file_has_the_converters_form(exported, trained, tmp_path):
    ours = exported["identity"][2]
    path = tmp_path / "t.json"
    export(ours, "hf", path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    model = doc["model"]
    assert model["type"] == "BPE" and model["byte_fallback"] and model["fuse_unk"]
    assert model["unk_token"] == "<unk>" and doc["pre_tokenizer"] is None
    assert [s["type"] for s in doc["normalizer"]["normalizers"]] == ["Prepend", "Replace"]
    assert [d["type"] for d in doc["decoder"]["decoders"]] == ["Replace", "ByteFallback", "Fuse", "Strip"]
    assert len(model["vocab"]) == ours.vocab_size == 1000
    merged = {a + b for a, b in model["merges"]}
    normal = [p for p, t in zip(ours.pieces, ours.types) if t == 1 and len(p) > 1]
    assert set(normal) <= merged  # every longer piece can be made


def test_merges_follow_the_score_order():
    """A piece with two splits lists both, the one with the earlier parts first; a better
    score comes first whatever its length."""
    pieces = ["<unk>", "a", "b", "c", "ab", "bc", "abc"]
    scores = [0.0, -1.0, -2.0, -3.0, -4.0, -5.0, -4.5]
    model = checked_model(pieces, scores, [2, 1, 1, 1, 1, 1, 1], SpNormalizer(None, "identity", False), True, False,
                          Roles(unk="<unk>"), " \u2047 ", 100, ExportError)
    assert merges_of(model) == [("a", "b"), ("ab", "c"), ("a", "bc"), ("b", "c")]


def test_a_normalizer_hf_cannot_carry_is_one_line(trained, tmp_path, capsys):
    ours = load_any(trained["nmt_nfkc"])
    with pytest.raises(ExportError, match="grapheme cluster"):
        export(ours, "hf", tmp_path / "x.json")
    assert main(["export", "-m", str(trained["nmt_nfkc"]), "--format", "hf", "-o", str(tmp_path / "x.json")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "grapheme cluster" in err, err
    assert not (tmp_path / "x.json").exists()


def test_the_cli_writes_it(trained, tmp_path, capsys):
    out = tmp_path / "tokenizer.json"
    assert main(["export", "-m", str(trained["collapse"]), "--format", "hf", "-o", str(out)]) == 0
    hf = tokenizers.Tokenizer.from_file(str(out))
    sp = spm.SentencePieceProcessor(model_file=str(trained["collapse"]))
    text = "  In the beginning   God created 日本 the heaven. "
    assert hf.encode(text, add_special_tokens=False).ids == sp.encode(text)
    assert hf.encode(text).ids[0] == sp.bos_id()


# -- shared scores: Llama 2's and Mistral's runs of ▁ at -1e9 -------------------------------------
RUNS = ["▁" * k for k in (2, 3, 4, 5, 6, 8, 16)]


def _with(model, pieces: list[str], scores: list[float]):
    """`model` with pieces appended (NORMAL) and some scores replaced, as SentencePiece would load it."""
    all_scores = list(model.scores) + [-1e9] * len(pieces)
    for i, s in zip(range(len(all_scores)), scores):
        if s is not None:
            all_scores[i] = s
    return checked_model(list(model.pieces) + pieces, all_scores, list(model.types) + [1] * len(pieces),
                         model.text_normalizer, model.add_dummy_prefix, model.byte_fallback, model.roles,
                         model.unk_surface, 100, ExportError)


@pytest.fixture(scope="module")
def runs_pair(trained, tmp_path_factory):
    """The identity model with Mistral's whitespace pieces, written as a .model (the judge) and
    exported to HF."""
    folder = tmp_path_factory.mktemp("runs")
    model = _with(load_any(trained["identity"]), [r for r in RUNS if r not in load_any(trained["identity"]).pieces],
                  [])
    export(model, "sentencepiece", folder / "runs.model")
    export(model, "hf", folder / "runs.json")
    return (spm.SentencePieceProcessor(model_file=str(folder / "runs.model")),
            tokenizers.Tokenizer.from_file(str(folder / "runs.json")), load_any(folder / "runs.model"))


def test_runs_of_spaces_tied_at_the_bottom_export_exactly(runs_pair):
    for n in range(1, 300):
        for text in (" " * n, "a" + " " * n + "b", "def f():\n" + " " * n + "return", "▁" * n + " x"):
            _same(runs_pair, text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([" ", "  ", "    ", "\n", "the", "a", "▁", "Лев", "日"]), max_size=30).map("".join))
def test_hypothesis_whitespace_with_tied_runs(runs_pair, text):
    _same(runs_pair, text)


def test_other_shared_scores_and_orphan_merges_are_refused(trained):
    model = load_any(trained["identity"])
    normal = [i for i, (p, t) in enumerate(zip(model.pieces, model.types)) if t == 1 and len(p) > 2]
    a, b = normal[0], normal[5]
    tied = _with(model, [], [None] * b + [model.scores[a]])
    with pytest.raises(ExportError, match="share the score"):
        export(tied, "hf", Path("/nonexistent/never.json"))
    mixed = _with(model, ["▁▁", "▁▁a"], [])  # '▁▁a' holds ▁▁ and more: runs would join other symbols
    with pytest.raises(ExportError, match="share the score"):
        export(mixed, "hf", Path("/nonexistent/never.json"))
    orphan = _with(model, ["ᚠa"], [])  # 'ᚠ' is no piece: SentencePiece still merges ᚠ + a
    with pytest.raises(ExportError, match="no piece"):
        export(orphan, "hf", Path("/nonexistent/never.json"))


REAL = Path(os.environ.get("TOKWORKBENCH_REAL_SPBPE", "/nonexistent"))
REAL_FILES = sorted(REAL.glob("*.model*")) if REAL.is_dir() else []


@pytest.mark.skipif(not REAL_FILES, reason="no real SentencePiece BPE files (set TOKWORKBENCH_REAL_SPBPE to a folder "
                                           "holding e.g. mistral-common's tokenizer.model.v1)")
@pytest.mark.parametrize("path", REAL_FILES, ids=[p.name for p in REAL_FILES])
def test_real_files_export_with_sentencepieces_ids(path, tmp_path):
    ours = load_any(path)
    try:
        export(ours, "hf", tmp_path / "t.json")
    except ExportError as exc:
        pytest.skip(f"refused: {exc}")  # user-defined pieces (v3, v7)
    pair = (spm.SentencePieceProcessor(model_file=str(path)), tokenizers.Tokenizer.from_file(str(tmp_path / "t.json")),
            ours)
    for text in sample_lines() + TRICKY + [" " * 40 + "x", "\t\t  code"]:
        _same(pair, text)
