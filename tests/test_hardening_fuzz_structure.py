"""Issue 28, structure-aware fuzzing: every reader, fed files damaged where their structure is
(wrong JSON types at every path of ours (BPE, Unigram, fixed), HF's and the companion; huge
numbers; deep nesting; protobuf fields of the wrong wire type, huge varints, lengths past the
end; npz members of the wrong dtype or shape, lying .npy headers, counts that overflow: see
tests/mutations.py), gives a loaded model or one TokWorkbenchError of one line:
never another exception, never a hang, never a huge allocation.

Seeded random, a few hundred mutations a format, so the whole file runs in seconds; set
TOKWORKBENCH_FUZZ_SEED to draw other mutations (a longer hunt, by hand). Whatever
loads is used (encode, decode, export checks; a count file is trained on for one merge).
"""

import json
import os
import random
import tracemalloc
from pathlib import Path

import pytest
from mutations import count_mutations, json_mutations, line_mutations, sp_mutations

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.files.countfile import from_bytes as counts_from_bytes
from tokworkbench.core.files.countfile import to_bytes as counts_to_bytes
from tokworkbench.core.fixed.model import FixedVocab
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.export import FORMATS, check, export
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.text import pretokenize
from tokworkbench.core.text.chunks import count_chunks
from tokworkbench.core.unigram import UnigramConfig, UnigramLearner

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
TEXT = "the cat sat on the mat, the hat 123 — ÄÖÜ 😀 " * 10
PROBE = "the cat 12 ÄÖ <|eot|> 😀 x\t\x01 ▁y"
SEED = os.environ.get("TOKWORKBENCH_FUZZ_SEED", "")
MAX_PEAK = 64 << 20  # what the readers may allocate at most while reading these small files
# -- the originals -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def originals(tmp_path_factory):
    """name -> {file name: bytes}, every file valid."""
    root = tmp_path_factory.mktemp("originals")
    out = {}

    def bpe(units):
        t = Trainer([TEXT], TrainConfig(units=units, pre_tokenizer=pre_tokenizer("gpt4"), special_tokens=("<|eot|>",)))
        list(t.run(merges=12))
        return t.model()

    byte, char = bpe("byte"), bpe("char")
    modelfile.save(byte, root / "byte.json")
    modelfile.save(char, root / "char.json")
    export(byte, "hf", root / "hf.json")
    export(byte, "tiktoken", root / "t.tiktoken")
    export(byte, "minbpe", root / "m.model")
    learner = UnigramLearner([TEXT], UnigramConfig(seed_size=120))
    list(learner.run(vocab_size=learner.base_size + 20))
    modelfile.save(learner.model(), root / "uni.json")
    export(learner.model(), "hf", root / "hfuni.json")
    (root / "controls.tsv").write_text("1\t\n9\t20\n", encoding="ascii")
    (root / "en.txt").write_text((SAMPLES / "01_en_genesis_kjv.txt").read_text(encoding="utf-8")[:30000],
                                 encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(root / "en.txt"), model_prefix=str(root / "sp"),
                                   vocab_size=120, model_type="unigram", minloglevel=2, user_defined_symbols=["<sep>"],
                                   normalization_rule_tsv=str(root / "controls.tsv"))
    sp = load_any(root / "sp.model")
    hf_uni = json.loads((root / "hfuni.json").read_bytes())
    hf_uni["normalizer"] = {"type": "Sequence", "normalizers": [
        sp.text_normalizer.to_hf()["normalizers"][0], {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        {"type": "Strip", "strip_left": False, "strip_right": True}, {"type": "NFKC"}, {"type": "Lowercase"}]}
    (root / "hfnorm.json").write_text(json.dumps(hf_uni), encoding="utf-8")
    modelfile.save(sp, root / "spours.json")  # our file with a model_normalizer
    modelfile.save(FixedVocab(("<s>", "</s>", "<unk>", "the", " cat", "a", "t", " "), Roles(bos="<s>", unk="<unk>")),
                   root / "fixed.json")
    (root / "c.npz").write_bytes(counts_to_bytes(count_chunks([TEXT], "none", pre_tokenizer("gpt4")), "none",
                                                 pre_tokenizer("gpt4")))
    read = lambda *names: {n: (root / n).read_bytes() for n in names}  # noqa: E731
    out.update({"ours-byte": read("byte.json"), "ours-char": read("char.json"), "ours-unigram": read("uni.json"),
                "ours-sp": read("spours.json"), "ours-fixed": read("fixed.json"), "hf-bpe": read("hf.json"), "hf-unigram": read("hfuni.json"),
                "hf-unigram-normalizer": read("hfnorm.json"), "tiktoken": read("t.tiktoken", "t.tiktoken.json"),
                "minbpe": read("m.model"), "sentencepiece": read("sp.model"), "counts": read("c.npz")})
    return out


@pytest.fixture(autouse=True)
def quick_pattern_timeout(monkeypatch):
    """A damaged pattern may backtrack: fail fast (the timeout is what is being tested)."""
    monkeypatch.setattr(pretokenize, "PATTERN_TIMEOUT", 0.2)


# -- the property --------------------------------------------------------------------------------
def use(tok) -> None:
    """Whatever loaded must also work, or fail with our error class."""
    try:
        ids = tok.encode(PROBE, allowed_special="all")
        tok.decode(ids, errors="replace")
        for i in ids[:5]:
            tok.token_text(i)
    except TokWorkbenchError:
        pass
    for fmt in FORMATS:
        try:
            check(tok, fmt)
        except TokWorkbenchError:
            pass


def load_model(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (folder / name).write_bytes(data)
    use(load_any(folder / next(iter(files))))


def load_counts(data: bytes) -> None:
    counted, normalizer, pre = counts_from_bytes(data)
    t = Trainer([], TrainConfig(normalizer=normalizer, pre_tokenizer=pre), counted=counted)
    list(t.run(merges=1))


def failures(cases, load) -> list[str]:
    """The cases that raised anything but one line of TokWorkbenchError, or allocated too much."""
    bad = []
    for what, args in cases:
        tracemalloc.start()
        try:
            load(*args)
        except TokWorkbenchError as exc:
            if "\n" in str(exc) or not str(exc):
                bad.append(f"{what}: not one line: {str(exc)[:200]!r}")
        except Exception as exc:  # noqa: BLE001 - what the test is looking for
            bad.append(f"{what}: {type(exc).__name__}: {str(exc)[:200]}")
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        if peak > MAX_PEAK:
            bad.append(f"{what}: allocated {peak:,} bytes")
    return bad


JSON_KINDS = ["ours-byte", "ours-char", "ours-unigram", "ours-sp", "ours-fixed", "hf-bpe", "hf-unigram", "hf-unigram-normalizer"]


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_json_files_damaged_at_every_path(tmp_path, originals, kind):
    (name, data), = originals[kind].items()
    rng = random.Random(f"json-{kind}" + SEED)
    cases = [(what, (tmp_path, {name: damaged})) for what, damaged in json_mutations(data, rng, 60)]
    bad = failures(cases, load_model)
    assert not bad, "\n".join(bad)


def test_sentencepiece_models_damaged_in_their_protobuf(tmp_path, originals):
    data = originals["sentencepiece"]["sp.model"]
    rng = random.Random("sentencepiece" + SEED)
    cases = [(what, (tmp_path, {"sp.model": damaged})) for what, damaged in sp_mutations(data, rng, 400)]
    bad = failures(cases, load_model)
    assert not bad, "\n".join(bad)


def test_tiktoken_ranks_and_companions_damaged(tmp_path, originals):
    files = originals["tiktoken"]
    ranks, side = files["t.tiktoken"], files["t.tiktoken.json"]
    no_hash = json.dumps({**json.loads(side), "ranks_sha256": None}).encode()
    rng = random.Random("tiktoken" + SEED)
    cases = [(what, (tmp_path, {"t.tiktoken": r, "t.tiktoken.json": no_hash}))
             for what, r in line_mutations(ranks, rng, 150)]
    cases += [(what, (tmp_path, {"t.tiktoken": ranks, "t.tiktoken.json": s}))
              for what, s in json_mutations(no_hash, rng, 40)]
    bad = failures(cases, load_model)
    assert not bad, "\n".join(bad)


def test_minbpe_files_damaged(tmp_path, originals):
    data = originals["minbpe"]["m.model"]
    rng = random.Random("minbpe" + SEED)
    cases = [(what, (tmp_path, {"m.model": damaged})) for what, damaged in line_mutations(data, rng, 150)]
    bad = failures(cases, load_model)
    assert not bad, "\n".join(bad)


def test_count_files_damaged_in_their_structure(originals):
    data = originals["counts"]["c.npz"]
    rng = random.Random("counts" + SEED)
    cases = [(what, (damaged,)) for what, damaged in count_mutations(data, rng, 40)]
    bad = failures(cases, load_counts)
    assert not bad, "\n".join(bad)


def test_the_originals_load(tmp_path, originals):
    """The fuzz starts from files that are valid, so a refusal is the mutation's doing."""
    for kind, files in originals.items():
        if kind == "counts":
            load_counts(files["c.npz"])
        else:
            load_model(tmp_path, files)
