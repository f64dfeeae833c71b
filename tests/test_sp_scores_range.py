"""Scores SentencePiece stores as float32: a file with one beyond float32's range, or a piece type
that is not a name, is a clear error at load, not a traceback then or at the first encode."""

import json

import pytest

from tokworkbench.core.errors import ModelFileError
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.session.settings import Settings


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A SentencePiece-BPE and a float32 Unigram model of ours, as files."""
    from tokworkbench.core.registry import modelfile

    folder = tmp_path_factory.mktemp("sp")
    texts = ["the quick brown fox jumps over the lazy dog and the cat sat on the mat " * 40]
    out = {}
    for kind, extra in (("spbpe", {}), ("unigram", {"algorithm": "em"})):
        settings = Settings(kind=kind, target=120, split="metaspace", **extra)
        learner = settings.learner(texts)
        for _ in learner.run(vocab_size=120):
            pass
        path = folder / f"{kind}.json"
        modelfile.save(learner.model(), path)
        out[kind] = json.loads(path.read_text(encoding="utf-8"))
    return out


def _load(tmp_path, doc):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return load_any(path)


@pytest.mark.parametrize("kind", ["spbpe", "unigram"])
@pytest.mark.parametrize("score", [-1e308, -3.5e38, -(10 ** 400)])
def test_a_score_beyond_float32_is_refused_at_load(saved, tmp_path, kind, score):
    doc = json.loads(json.dumps(saved[kind]))
    if kind == "unigram" and not doc.get("float32"):
        pytest.skip("a float64 Unigram model takes any finite score")
    doc["pieces"][5][1] = score
    with pytest.raises(ModelFileError, match="piece 5"):
        _load(tmp_path, doc)


@pytest.mark.parametrize("kind_of_type", [[], {}, 3, None])
def test_a_piece_type_that_is_not_a_name_is_refused(saved, tmp_path, kind_of_type):
    doc = json.loads(json.dumps(saved["spbpe"]))
    doc["pieces"][5][2] = kind_of_type
    with pytest.raises(ModelFileError, match="piece 5 is"):
        _load(tmp_path, doc)
