"""minbpe `.model` files whose special tokens sit anywhere after the merges (issue 25, item 4).

minbpe's own tests/test_tokenizer.py (`test_save_load`) trains 64 merges, registers GPT-4's
special tokens at 100257..100276 and saves: such a file reads with those ids. minbpe's rule for
them: `encode(text, "all")` cuts the text at each special string, which is its id, and encodes
the text between alone; `decode` gives each special id its string back.
"""

import re
from pathlib import Path

import pytest

from tokworkbench.cli import main
from tokworkbench.core.bpe.trainer import TrainConfig, train
from tokworkbench.core.errors import ForeignModelError, SpecialTokenInTextError
from tokworkbench.core.formats.minbpe import MAX_SPECIAL_ID, from_minbpe, to_minbpe
from tokworkbench.core.text.pretokenize import parse_split

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
SPECIALS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}  # minbpe's test, as it saves them
SPECIALS_STRING = """<|endoftext|>Hello world this is one document
<|endoftext|>And this is another document
<|endoftext|><|fim_prefix|>And this one has<|fim_suffix|> tokens.<|fim_middle|> FIM
<|endoftext|>Last document!!! 👋<|endofprompt|>"""


@pytest.fixture(scope="module")
def plain():
    """64 merges over the GPT-4 split, no special tokens: minbpe's `train(text, 256 + 64)`."""
    text = (SAMPLES / "01_en_genesis_kjv.txt").read_text(encoding="utf-8")[:20_000]
    return train([text], TrainConfig(pre_tokenizer=parse_split("gpt4")), merges=64).model()


def with_specials(plain, specials: dict[str, int]) -> str:
    """The file minbpe's `save` writes for these merges and special tokens."""
    lines = to_minbpe(plain).split("\n")
    return "\n".join(lines[:2] + [str(len(specials))] + [f"{s} {i}" for s, i in specials.items()] + lines[3:])


def minbpe_encode(plain, text: str, specials: dict[str, int]) -> list[int]:
    """minbpe's `encode(text, "all")`: the special strings cut the text, the parts go alone."""
    parts = re.split("(" + "|".join(re.escape(s) for s in specials) + ")", text)
    return [tid for part in parts if part
            for tid in ([specials[part]] if part in specials else plain.encode_ordinary(part))]


def test_gpt4_specials_read_with_their_ids(plain):
    model = from_minbpe(with_specials(plain, SPECIALS))
    assert model.special_ids == SPECIALS
    ids = model.encode(SPECIALS_STRING, allowed_special="all")
    assert ids == minbpe_encode(plain, SPECIALS_STRING, SPECIALS)
    assert sorted(set(ids) & set(SPECIALS.values())) == sorted(SPECIALS.values())
    assert max(t for t in ids if t not in SPECIALS.values()) < 256 + 64
    assert model.decode(ids) == SPECIALS_STRING
    assert model.encode_ordinary(SPECIALS_STRING) == plain.encode_ordinary(SPECIALS_STRING)
    with pytest.raises(SpecialTokenInTextError):
        model.encode(SPECIALS_STRING)  # minbpe's default, none_raise, refuses them too


def test_the_file_written_again_reads_the_same(plain):
    model = from_minbpe(with_specials(plain, SPECIALS))
    again = from_minbpe(to_minbpe(model))
    assert again.special_ids == SPECIALS
    assert again.encode(SPECIALS_STRING, allowed_special="all") == model.encode(SPECIALS_STRING, allowed_special="all")


def test_specials_right_after_the_merges_still_read(plain):
    specials = {"<|a|>": 320, "<|b|>": 321}
    model = from_minbpe(with_specials(plain, specials))
    assert model.special_ids == specials and model.vocab_size == 322


@pytest.mark.parametrize("specials, message", [
    ({"<|a|>": 300}, r"'<\|a\|>' has id 300, which is a byte's or a merge's \(ids 0..319\)"),
    ({"<|a|>": 100257, "<|b|>": 100257}, r"'<\|a\|>' and '<\|b\|>' both have id 100257"),
    ({"<|a|>": MAX_SPECIAL_ID + 1}, "has id 2,147,483,648; this tool reads special ids up to 2,147,483,647"),
])
def test_ids_a_special_token_cannot_have_are_one_line(plain, tmp_path, capsys, specials, message):
    text = with_specials(plain, specials)
    with pytest.raises(ForeignModelError, match=message):
        from_minbpe(text)
    path = tmp_path / "m.model"
    path.write_text(text, encoding="utf-8")
    assert main(["inspect", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tokworkbench: error:") and err.count("\n") == 1
