"""em learns only the pieces SentencePiece's trainer would (`IsValidSentencePiece`): one Unicode
script, digits and punctuation Common, ▁ only first. Checked against the real library."""

import pytest

from tokworkbench.core.unigram import UnigramConfig, UnigramLearner
from tokworkbench.core.unigram.validpiece import is_valid_piece


@pytest.mark.parametrize("piece, valid", [
    ("s.", False), ("a1", False), ("▁(the", False), ("Ωa", False), ("a▁", False), ("▁▁", False),
    ("1.", True), ("),", True), ("▁12", True), ("▁the", True), ("▁", True),
    ("e\u0301", True), ("\u0301e", True),  # a combining mark takes the script before it, or none
    ("カー", True), ("漢字かなカナ", True),  # Hiragana, Katakana and ー count as Han
    ("x" * 17, False),
])
def test_the_rule_on_single_pieces(piece, valid):
    assert is_valid_piece(piece) is valid


# every word ends in "s." or "1." after a different letter: both are the best 2-character
# pieces by far; SentencePiece keeps "1." (Common and Common) and refuses "s." (Latin, Common)
WORDS = [f"{a}{b}s. {a}{b}1." for a in "bcdfghklmnprtvw" for b in "aeiou"]
LINES = [" ".join(WORDS[k:] + WORDS[:k]) for k in range(0, len(WORDS), 3)]
VOCAB = 120


def test_em_and_sentencepiece_agree_on_which_mixed_pieces_are_never_learnt(tmp_path):
    spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")
    src = tmp_path / "train.txt"
    src.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(src), model_prefix=str(tmp_path / "sp"), vocab_size=VOCAB, model_type="unigram",
        normalization_rule_name="identity", remove_extra_whitespaces=False, bos_id=-1, eos_id=-1,
        unk_id=0, minloglevel=2, hard_vocab_limit=False)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "sp.model"))
    theirs = {sp.id_to_piece(i) for i in range(sp.get_piece_size())}

    learner = UnigramLearner(LINES, UnigramConfig(algorithm="em", seed_size=5_000))
    for _ in learner.run(vocab_size=min(VOCAB, len(theirs)) - 1):
        pass
    ours = {p for p, _ in learner.model().pieces}

    for refused in ("s.", "as.", "a1", "a1.", "▁ba1."):
        assert refused not in theirs and refused not in ours
    assert "1." in theirs and "1." in ours  # digits with punctuation are one script (Common)
    assert all(is_valid_piece(p) for p in ours if p not in learner.metas)
