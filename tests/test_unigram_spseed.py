"""Unigram em's seed as sentencepiece 0.2.3 makes it (spseed.spm_seed), judged by the seed size
spm_train's log reports, and the lines it reads (spmcorpus.py)."""

import re
from pathlib import Path

import pytest

from tokworkbench.core.unigram.config import EM_SEED_SIZE, SP_META, UnigramConfig
from tokworkbench.core.unigram.learner import UnigramLearner
from tokworkbench.core.unigram.spmcorpus import SpmReader, _last
from tokworkbench.core.unigram.spseed import spm_seed

spm = pytest.importorskip("sentencepiece")
BOTCHAN = (Path(__file__).parent / "data" / "botchan.txt").read_bytes().decode("utf-8")


def _seed_size_spm_reports(tmp_path, capfd, text: str, rule: str = "nfkc", **flags) -> int:
    src = tmp_path / "in.txt"
    src.write_bytes(text.encode("utf-8"))
    spm.SentencePieceTrainer.train(input=str(src), model_prefix=str(tmp_path / "u"), vocab_size=200,
                                   hard_vocab_limit=False, model_type="unigram", character_coverage=1.0,
                                   normalization_rule_name=rule, minloglevel=0, **flags)
    return int(re.search(r"Initialized (\d+) seed (?:sentence)?pieces", capfd.readouterr().err).group(1))


def _our_seed(text: str, normalizer: str = "nfkc") -> list[str]:
    reader = SpmReader(normalizer, SP_META)
    reader.add(text)
    pieces, scores = spm_seed(reader.finish(1.0), EM_SEED_SIZE, 16)
    assert (scores < 0).all()
    return pieces


def test_botchans_seed_is_spm_trains(tmp_path, capfd):
    assert len(_our_seed(BOTCHAN)) == _seed_size_spm_reports(tmp_path, capfd, BOTCHAN)


def test_a_substring_branches_by_the_first_utf8_byte_of_what_follows_as_in_spm_train(tmp_path, capfd):
    """0.2.3's suffix array is over UTF-8 bytes: "▁dog" followed only by ’, — and the next
    word's ▁ (all starting 0xE2) is no internal node, and so no seed piece; followed also by "s"
    it is."""
    words = ["dog", "cat", "bird", "fish", "horse", "mouse", "goat", "sheep"]
    lines = []
    for k, w in enumerate(words):
        lines += [f"the {w}\u2019s toy", f"my {w} ran off", f"a {w}\u2014no", f"one {w}\u201d he said"]
        if k % 2:
            lines.append(f"two {w}s here")
    text = "\n".join(lines * 3) + "\n"
    pieces = _our_seed(text)
    assert len(pieces) == _seed_size_spm_reports(tmp_path, capfd, text)
    assert "▁dog" not in pieces and "▁cat" in pieces  # cat is also followed by s


def test_the_sentence_that_ends_the_corpus_gets_a_branch_of_its_own(tmp_path, capfd):
    """Every sentence ends with a NUL in 0.2.3's suffix array, and one found with its NUL is kept
    with it trimmed: nothing follows the last sentence's NUL, so a suffix of it that ends other
    sentences too ("ran off", "an off") is a node, whose sentence ends count once more."""
    text = "the dog ran off\nmy cat ran off\nthe bird ran off\nwe ran off\n"
    pieces = _our_seed(text)
    assert len(pieces) == _seed_size_spm_reports(tmp_path, capfd, text)
    assert "off" in pieces and "ff" in pieces


def test_the_last_sentence_is_the_one_spm_train_ends_with():
    """An empty line is skipped; one that normalizes to nothing takes the last sentence into its
    place (spm_train removes it so), which changes which sentence ends the corpus."""
    assert _last(["a", "b", "c"], 0) == "c"
    assert _last([None, "c"], 1) == "c"
    assert _last(["b", None, "c"], 1) == "c"
    assert _last(["b", "c", None], 1) == "c"
    assert _last(["b", "c"], 1) == "b"  # an empty line before them took "c"


def test_held_out_ids_are_spm_trains(tmp_path):
    """The model, not only the pieces: botchan's last lines, held out, encode to spm_train's ids
    on the lines before them, every other one indented (its whitespace rule trims them)."""
    lines = BOTCHAN.split("\n")
    text = "\n".join(("    " if k % 2 else "") + line for k, line in enumerate(lines[:3500])) + "\n"
    held = [re.sub(" +", " ", line).strip() for line in lines[3500:] if line.strip()]
    src = tmp_path / "train.txt"
    src.write_bytes(text.encode("utf-8"))
    spm.SentencePieceTrainer.train(input=str(src), model_prefix=str(tmp_path / "u"), vocab_size=1000,
                                   model_type="unigram", character_coverage=1.0,
                                   normalization_rule_name="identity", minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "u.model"))
    learner = UnigramLearner([text], UnigramConfig(algorithm="em", seed_size=EM_SEED_SIZE))
    list(learner.run(vocab_size=1000))
    model = learner.model()
    assert [model.encode(line) for line in held] == sp.encode(held)
