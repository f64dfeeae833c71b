"""Fixed vocabularies: longest match first, earlier id on equal length, UNK one character at a
time; TOKENS.txt with its escapes; the model file; what other formats refuse."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokworkbench.cli import main
from tokworkbench.core.errors import EncodeError, ExportError, VocabFileError
from tokworkbench.core.fixed.model import FixedVocab
from tokworkbench.core.fixed.modelfile import escape, parse_tokens, unescape
from tokworkbench.core.models.roles import Roles, decode, encode_content, encode_document
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.export import check
from tokworkbench.core.registry.load import load_any

VOCAB = ("<s>", "</s>", "<pad>", "<unk>", "我", "喜欢", "学习", "机器", "机器学习", "学", "习", "。")
ROLES = Roles(bos="<s>", eos="</s>", pad="<pad>", unk="<unk>")


def model(roles=ROLES):
    return FixedVocab(VOCAB, roles)


def test_longest_match_first():
    m = model()
    assert encode_content(m, "机器学习") == [8]  # not 机器 + 学习
    assert encode_content(m, "机器学") == [7, 9]
    assert encode_content(m, "我喜欢学习。") == [4, 5, 6, 11]


def test_unk_for_a_character_no_token_matches_and_the_cursor_moves_one():
    m = model()
    assert encode_content(m, "我爱AI。") == [4, 3, 3, 3, 11]
    assert encode_content(m, "喜") == [3]  # starts 喜欢, but no token matches here


def test_without_unk_an_unmatched_character_is_an_error_naming_it():
    with pytest.raises(EncodeError, match=r"offset 1 \('爱', U\+7231\), and it has no unk token"):
        encode_content(model(Roles(bos="<s>")), "我爱")


def test_special_strings_are_not_matched_in_content_unless_allowed():
    m = model()
    assert 0 not in encode_content(m, "<s>")
    with pytest.raises(EncodeError, match="special token '<s>'"):
        m.encode("我<s>")
    assert m.encode("我<s>", allowed_special="all") == [4, 0]


def test_earlier_id_wins_among_equal_lengths():
    """Distinct tokens of one length cannot both match at one place; the rule shows where the
    lengths differ: the longest wins over an earlier shorter token."""
    m = FixedVocab(("a", "ab", "abc", "b"))
    assert encode_content(m, "abcab") == [2, 1]


@given(st.lists(st.sampled_from(["我", "喜欢", "学习", "机器", "机器学习", "学", "习", "。", "x"]), max_size=20))
def test_decode_inverts_encode_where_every_character_is_spelled(pieces):
    m = model()
    text = "".join(pieces)
    ids = encode_document(m, text)
    got = decode(m, ids, skip_special=True)
    assert got == text.replace("x", "<unk>")


# -- TOKENS.txt ----------------------------------------------------------------------------------
def test_tokens_file_escapes():
    assert parse_tokens("a\n\\n\n\\t\n\\\\\n\\s\nx\\sy\r\n") == ["a", "\n", "\t", "\\", " ", "x y"]
    for token in ["\n", "\t", "a\\b", "ends ", "\r", "mid dle"]:
        assert unescape(escape(token), 1) == token


@pytest.mark.parametrize("text, match", [
    ("", "is empty"),
    ("\n", "line 1 is blank"),
    ("a\n\nb\n", "line 2 is blank"),
    ("a\nb\na\n", "line 3 repeats the token of line 1"),
    ("a\\q\n", r"line 1: \\q is not an escape"),
    ("a\\", r"a lone \\ at the end"),
])
def test_bad_tokens_files_are_named(text, match):
    with pytest.raises(VocabFileError, match=match):
        parse_tokens(text)


def test_duplicate_tokens_through_the_api():
    with pytest.raises(VocabFileError, match="token 2 repeats token 0"):
        FixedVocab(("a", "b", "a"))


def test_model_file_round_trip_and_export_refused(tmp_path):
    m = FixedVocab(VOCAB, ROLES, extra_specials=("。",))
    modelfile.save(m, tmp_path / "m.json")
    back = load_any(tmp_path / "m.json")
    assert back == m and back.special_tokens == ("<s>", "</s>", "<pad>", "<unk>", "。")
    for fmt in ("hf", "tiktoken", "minbpe"):
        with pytest.raises(ExportError, match="cannot hold this fixed vocabulary: no other format"):
            check(m, fmt)


def test_vocab_command(tmp_path, capsys):
    (tmp_path / "t.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    out = tmp_path / "m.json"
    assert main(["vocab", str(tmp_path / "t.txt"), "--bos", "<s>", "--eos", "</s>", "--pad", "<pad>",
                 "--unk", "<unk>", "-o", str(out)]) == 0
    assert "fixed vocabulary of 12 tokens" in capsys.readouterr().out
    assert load_any(out) == model()
    assert main(["encode", "-m", str(out), "我喜欢机器学习", "--add-special"]) == 0
    assert capsys.readouterr().out.split() == ["0", "4", "5", "8", "1"]
    assert main(["inspect", str(out)]) == 0
    assert "<pad>  (pad)" in capsys.readouterr().out


@pytest.mark.parametrize("text, flags, match", [
    ("", [], "is empty"),
    ("a\nb\na\n", [], "line 3 repeats"),
    ("a\nb\n", ["--bos", "c"], "the bos token 'c' is not in this vocabulary"),
    ("a\nb\n", ["--bos", "a", "--eos", "a"], "cannot be both bos and eos"),
])
def test_vocab_command_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, text, flags, match):
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    out = tmp_path / "m.json"
    assert main(["vocab", str(tmp_path / "t.txt"), *flags, "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tokworkbench: error: ") and match in err[0], err
    assert not out.exists()
