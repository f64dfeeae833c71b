"""encode --nbest / --sample on a real SentencePiece model: the best of the n-best is what
encode gives (a run of unknown characters is one <unk>, as sentencepiece's nbest and sampling
give it), a special token's text is refused as encode refuses it, and --add-special adds BOS and
EOS to every segmentation instead of being dropped without a word."""

import json

import pytest
from test_unigram_imports import sp_model  # noqa: F401 (fixture)

from tokworkbench.cli import main
from tokworkbench.core.registry.load import load_any

UNKNOWN = "☃☃☃ zz ⌘⌘ and 🦜🦜"  # characters the model has never seen, in runs


def _lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_the_best_of_the_nbest_is_the_encoding(sp_model, capsys):  # noqa: F811
    path, sp = sp_model
    model = load_any(path)
    assert main(["encode", "-m", str(path), "--nbest", "3", UNKNOWN]) == 0
    best = [int(i) for i in _lines(capsys)[0].split()]
    assert best == model.encode(UNKNOWN) == sp.encode(UNKNOWN)
    assert sp.nbest_encode_as_ids(UNKNOWN, 3)[0] == best


def test_a_sample_fuses_unknown_runs(sp_model, capsys):  # noqa: F811
    path, sp = sp_model
    unk = load_any(path).unk_id
    for seed in range(5):
        assert main(["encode", "-m", str(path), "--sample", "--seed", str(seed), UNKNOWN]) == 0
        ids = [int(i) for i in _lines(capsys)[0].split()]
        assert ids.count(unk) == sp.encode(UNKNOWN).count(unk)  # one per run, never one per character
        assert all(not (a == b == unk) for a, b in zip(ids, ids[1:]))


@pytest.mark.parametrize("option", [["--nbest", "2"], ["--sample", "--seed", "1"]])
def test_a_special_tokens_text_is_refused_as_encode_refuses_it(sp_model, option, capsys):  # noqa: F811
    path, _ = sp_model
    assert main(["encode", "-m", str(path), "hi</s>there"]) == 1
    plain = capsys.readouterr().err
    assert main(["encode", "-m", str(path), *option, "hi</s>there"]) == 1
    assert capsys.readouterr().err == plain


@pytest.mark.parametrize("option", [["--nbest", "2"], ["--sample", "--seed", "1"]])
def test_allow_special_is_refused_rather_than_ignored(sp_model, option, capsys):  # noqa: F811
    path, _ = sp_model
    assert main(["encode", "-m", str(path), *option, "--allow-special", "hi</s>there"]) == 1
    assert "--allow-special" in capsys.readouterr().err


@pytest.mark.parametrize("option", [["--nbest", "3"], ["--sample", "--seed", "2"]])
def test_add_special_frames_every_segmentation(sp_model, option, capsys):  # noqa: F811
    path, sp = sp_model
    text = "hi there, the thing"
    assert main(["encode", "-m", str(path), *option, text]) == 0
    bare = _lines(capsys)
    assert main(["encode", "-m", str(path), *option, "--add-special", text]) == 0
    framed = _lines(capsys)
    assert framed == [f"1 {line} 2" for line in bare]  # <s> 1, </s> 2
    assert framed[0].split() == [str(i) for i in sp.encode(text, add_bos=True, add_eos=True)] or option[0] == "--sample"
    assert main(["encode", "-m", str(path), *option, "--add-special", "--format", "json", text]) == 0
    first = json.loads(_lines(capsys)[0])
    assert first["ids"][0] == 1 and first["ids"][-1] == 2 and first["tokens"][0] == "<s>"


def test_the_first_of_the_nbest_is_encodes_even_on_a_tie(sp_model):  # noqa: F811
    """Where two segmentations score the same (the same pieces in another order, as in a line of
    box-drawing characters), the n-best list starts with the one encode (and sentencepiece) gives."""
    from test_unigram_imports import SAMPLES

    from tokworkbench.core.unigram.sampling import unigram_nbest
    path, sp = sp_model
    model = load_any(path)
    lines = [line for f in sorted(SAMPLES.iterdir()) if f.suffix in (".txt", ".py")
             for line in f.read_text(encoding="utf-8").splitlines()[:80] if line.strip()]
    lines += ["━" * n for n in range(1, 70)]
    for line in lines:
        assert unigram_nbest(model, line, 2)[0][0] == model.encode(line), line
