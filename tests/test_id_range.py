"""Ids beyond u32, which HF and tiktoken cannot hold: refused where they come in (an HF file's
vocabulary or added tokens, --special NAME=ID), not written into files nothing reads back."""

import json

import pytest
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from tokworkbench.cli import main
from tokworkbench.core.errors import ForeignModelError
from tokworkbench.core.files.limits import MAX_ID
from tokworkbench.core.registry.load import load_any


@pytest.fixture(scope="module")
def hf_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hf")
    corpus = folder / "c.txt"
    corpus.write_text("the cat sat on the mat and the dog sat on the log\n" * 50, encoding="utf-8")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel()
    tok.train([str(corpus)], trainers.BpeTrainer(vocab_size=300, special_tokens=["<s>"],
                                                 initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    path = folder / "tokenizer.json"
    tok.save(str(path))
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("where", ["vocab", "added"])
@pytest.mark.parametrize("tid", [MAX_ID + 1, 10 ** 30])
def test_an_hf_id_beyond_u32_is_refused(hf_file, tmp_path, where, tid):
    doc = json.loads(json.dumps(hf_file))
    if where == "vocab":
        doc["model"]["vocab"]["Ġthe"] = tid
    else:
        doc["added_tokens"][0]["id"] = tid
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ForeignModelError):
        load_any(path)


@pytest.mark.parametrize("tid", [str(MAX_ID + 1), "99999999999999999999999", "9" * 5000])
def test_a_special_id_beyond_u32_on_the_command_line_is_one_clear_line(tmp_path, capsys, tid):
    code = main(["encode", "-m", "cl100k_base", "--special", f"<x>={tid}", "hello"])
    err = capsys.readouterr().err
    assert code != 0 and "from 0 to 4,294,967,295" in err and "Traceback" not in err and len(err) < 400


def _trial(hf_file, tmp_path, added):
    doc = json.loads(json.dumps(hf_file))
    doc["added_tokens"] = added
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return load_any(path), Tokenizer.from_file(str(path))


@pytest.mark.parametrize("case", ["beyond", "reversed", "high-first", "mixed", "in-vocab-elsewhere"])
def test_added_tokens_take_the_ids_hf_gives_them_not_the_files(hf_file, tmp_path, case):
    """HF reads an added token's 'id' and does not use it: in the file's order, one the
    vocabulary holds takes its id there, any other the next id past the vocabulary."""
    size = len(hf_file["model"]["vocab"])
    s = dict(hf_file["added_tokens"][0])  # <s>, which the vocabulary holds
    added = {
        "beyond": [s, {**s, "id": 5000, "content": "<x>"}],
        "reversed": [s, {**s, "id": size + 3, "content": "<x>"}, {**s, "id": size + 1, "content": "<y>"}],
        "high-first": [{**s, "id": size + 5, "content": "<z>"}, s],
        "mixed": [s, {**s, "id": size + 1, "content": "<b>"}, {**s, "id": size, "content": "<a>", "special": False}],
        "in-vocab-elsewhere": [s, {**s, "id": 7, "content": "<x>"}],
    }[case]
    ours, theirs = _trial(hf_file, tmp_path, added)
    for t in added:
        text = f"the {t['content']} cat"
        assert ours.encode(text, allowed_special="all") == theirs.encode(text, add_special_tokens=False).ids, t


@pytest.mark.parametrize("raw", ["١٢٠", "1_0_4", "-5", "+5", "1e3", str(MAX_ID + 1), "9" * 5000])
def test_decode_takes_ascii_whole_numbers_in_range_only(raw):
    from tokworkbench.core.errors import DecodeError
    from tokworkbench.core.inspection.roundtrip import parse_ids

    with pytest.raises(DecodeError, match="is not an id") as caught:
        parse_ids(f"1 {raw} 2")
    assert len(str(caught.value)) < 200
    assert parse_ids("[1, 2,3]  4") == [1, 2, 3, 4] and parse_ids(str(MAX_ID)) == [MAX_ID]


@pytest.mark.parametrize(("query", "noted"), [("x:zz", True), ("0xq1", True), ("x:e6 97", False), ("the", False),
                                              ("x:zz normal", True), ("", False)])
def test_a_hex_query_that_is_not_hex_says_it_was_searched_as_text(query, noted):
    from tokworkbench.core.inspection.vocab import query_note

    assert (query_note(query) is not None) is noted


def test_an_empty_output_path_and_a_negative_count_are_said_plainly(capsys):
    from tokworkbench.core.text.samples import sample_paths

    corpus = str(sample_paths()[0])
    assert main(["train", "--merges", "5", "-o", "", corpus]) == 1
    assert "the output path is empty" in capsys.readouterr().err  # was "cannot write : Is a directory"
    assert main(["train", "--merges", "-1", "-o", "x.json", corpus]) == 1
    assert "must be 0 or more" in capsys.readouterr().err  # 0 merges is a model: not "must be positive"


@pytest.mark.parametrize("kind", ["wordpiece", "unigram"])
def test_a_wordpiece_or_unigram_added_token_takes_hfs_id_not_the_files(tmp_path, kind):
    """HF gives an added token that is in the vocabulary its vocabulary id, whatever the
    file's 'id' says; these readers refused such a file."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat and the dog sat on the log\n" * 50, encoding="utf-8")
    if kind == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        trainer = trainers.WordPieceTrainer(vocab_size=80, special_tokens=["[UNK]", "[SEP]"])
    else:
        tok = Tokenizer(models.Unigram())
        trainer = trainers.UnigramTrainer(vocab_size=60, special_tokens=["<unk>", "<sep>"], unk_token="<unk>")
    tok.pre_tokenizer = pre_tokenizers.Whitespace() if kind == "wordpiece" else pre_tokenizers.Metaspace()
    if kind == "unigram":
        tok.decoder = decoders.Metaspace()
    tok.train([str(corpus)], trainer)
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    doc = json.loads(path.read_text(encoding="utf-8"))
    sep = next(t for t in doc["added_tokens"] if t["content"] in ("[SEP]", "<sep>"))
    sep["id"] = 57  # another token's id in the file; HF still gives it its own
    path.write_text(json.dumps(doc), encoding="utf-8")
    theirs = Tokenizer.from_file(str(path))
    ours = load_any(path)
    text = f"the cat {sep['content']} sat"
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, add_special_tokens=False).ids
