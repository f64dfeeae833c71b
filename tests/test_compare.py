"""Fingerprints and compare: the same ids with the same bytes (and the same special roles)
are compatible, and nothing else is."""

from dataclasses import replace

from hypothesis import assume, given
from hypothesis import strategies as st

from tokworkbench.cli import main
from tokworkbench.core import TrainConfig, Trainer
from tokworkbench.core.compat import compare, fingerprint
from tokworkbench.core.fixed.model import FixedVocab
from tokworkbench.core.models.roles import Roles, with_roles
from tokworkbench.core.registry import modelfile

ROLES = Roles(bos="<s>", eos="</s>", pad="<pad>", unk="<unk>")
A = FixedVocab(("<s>", "</s>", "<pad>", "<unk>", "我", "喜欢", "AI", "学习", "。"), ROLES)
B = FixedVocab(("<s>", "</s>", "<pad>", "<unk>", "我", "AI", "喜欢", "学习", "。"), ROLES)  # 5 and 6 swapped

TOKENS = st.lists(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=3),
                  min_size=1, max_size=12, unique=True)


@given(TOKENS, st.data())
def test_the_fingerprint_changes_when_any_id_changes_its_token(tokens, data):
    k = data.draw(st.integers(0, len(tokens) - 1))
    new = data.draw(st.text(min_size=1, max_size=3).filter(lambda t: t not in tokens))
    changed = tokens[:k] + [new] + tokens[k + 1:]
    assert fingerprint(FixedVocab(tuple(changed))) != fingerprint(FixedVocab(tuple(tokens)))


@given(TOKENS, TOKENS)
def test_and_only_then(a, b):
    assume(a != b)
    assert fingerprint(FixedVocab(tuple(a))) != fingerprint(FixedVocab(tuple(b)))
    assert fingerprint(FixedVocab(tuple(a))) == fingerprint(FixedVocab(tuple(list(a))))


def test_segmentation_does_not_enter_the_fingerprint_but_roles_do():
    """A model that segments by another rule but has the same table keeps its fingerprint;
    moving a role changes it."""
    t = Trainer(["aaab"], TrainConfig(special_tokens=("<s>", "</s>")))
    list(t.run(merges=2))
    tok = t.model()
    same = replace(tok, tie_break="lexmax")
    assert fingerprint(same) == fingerprint(tok)
    assert fingerprint(with_roles(tok, Roles(bos="<s>"))) != fingerprint(tok)
    assert fingerprint(with_roles(tok, Roles(bos="<s>"))) != fingerprint(with_roles(tok, Roles(bos="</s>")))


def test_compare_names_the_ids_that_differ():
    c = compare(A, B, "我喜欢AI。")
    assert (c.size_a, c.size_b, c.differing) == (9, 9, 2)
    assert [str(d) for d in c.first] == ["id 5: '喜欢' vs 'AI'", "id 6: 'AI' vs '喜欢'"]
    assert (c.count_a, c.count_b) == (4, 4) and not c.compatible
    assert compare(A, A).compatible and compare(A, A).differing == 0


def test_compare_counts_ids_one_model_lacks():
    c = compare(A, FixedVocab(A.tokens[:7], ROLES))
    assert c.differing == 2 and str(c.first[0]) == "id 7: '学习' vs (none)"


def test_compare_command_exits_1_when_incompatible(tmp_path, capsys):
    modelfile.save(A, tmp_path / "a.json")
    modelfile.save(B, tmp_path / "b.json")
    (tmp_path / "t.txt").write_text("我喜欢学习AI。", encoding="utf-8")
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "-f", str(tmp_path / "t.txt")]) == 1
    out = capsys.readouterr().out
    assert "ids whose tokens differ: 2" in out and "id 5: '喜欢' vs 'AI'" in out
    assert f"fingerprint {fingerprint(A)}" in out and "tokens on the text:" in out and "INCOMPATIBLE" in out
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "a.json")]) == 0
    assert "compatible: the same ids mean the same tokens" in capsys.readouterr().out


def test_comparing_a_file_that_is_not_a_tokenizer_is_one_line_and_exits_2(tmp_path, capsys):
    """2, as cmp and diff: a pipeline gating on 1 ("incompatible") must not read an error as that answer."""
    modelfile.save(A, tmp_path / "a.json")
    (tmp_path / "x.json").write_text('{"hello": 1}')
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tokworkbench: error: ") and "x.json" in err[0]
    assert "neither a tokworkbench model nor a Hugging Face" in err[0]
