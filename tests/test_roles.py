"""Special-token roles and document encoding, for BPE (byte and char units) and fixed
vocabularies through the same functions; model files and HF export carry the roles."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.core import TrainConfig, Trainer
from tokworkbench.core.errors import DecodeError, ModelFileError, RoleError
from tokworkbench.core.fixed.model import FixedVocab
from tokworkbench.core.formats.hf import from_hf
from tokworkbench.core.formats.hf_bpe import to_hf
from tokworkbench.core.models.protocol import Model
from tokworkbench.core.models.roles import (
    Roles,
    decode,
    encode_content,
    encode_document,
    role_ids,
    with_boundaries,
    with_roles,
)
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.session.settings import Settings

SPECIALS = ("<s>", "</s>", "<pad>", "<unk>")
ROLES = Roles(bos="<s>", eos="</s>", pad="<pad>", unk="<unk>")
TEXT = "我喜欢机器学习。 low lower lowest, newer wider!"


def bpe(units="byte", roles=ROLES, merges=30):
    t = Trainer([TEXT] * 3, TrainConfig(units=units, special_tokens=SPECIALS))
    list(t.run(merges=merges))
    return with_roles(t.model(), roles)


def fixed(roles=ROLES):
    return FixedVocab((*SPECIALS, "我", "喜欢", "学习", "机器", "机器学习", "。"), roles)


MODELS = {"byte": lambda: bpe("byte"), "char": lambda: bpe("char"), "fixed": fixed}


# -- Roles ---------------------------------------------------------------------------------------
def test_two_roles_on_one_token_is_refused():
    with pytest.raises(RoleError, match="cannot be both bos and eos"):
        Roles(bos="<s>", eos="<s>")


def test_a_role_naming_a_token_the_model_lacks_is_refused():
    with pytest.raises(RoleError, match=r"the pad token '<p>' is not a special token of this model"):
        bpe(roles=Roles(pad="<p>"))
    with pytest.raises(RoleError, match=r"the bos token 'x' is not in this vocabulary"):
        fixed(roles=Roles(bos="x"))
    with pytest.raises(RoleError, match="unknown role sep"):
        Roles.of({"sep": "<s>"})


def test_every_kind_is_a_model_with_roles():
    for make in MODELS.values():
        model = make()
        assert isinstance(model, Model)
        assert set(role_ids(model)) == {"bos", "eos", "pad", "unk"}


def test_settings_check_roles_and_do_not_retrain_for_them():
    s = Settings(special_tokens=("<s>",))
    assert not s.needs_retrain(s.with_(roles=Roles(bos="<s>")))
    with pytest.raises(RoleError):
        s.with_(roles=Roles(eos="</s>")).config()


# -- document encoding ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", MODELS)
def test_document_is_bos_content_eos_once(kind):
    model = MODELS[kind]()
    ids = role_ids(model)
    content = encode_content(model, "我喜欢学习。")
    assert ids["bos"] not in content and ids["eos"] not in content
    doc = encode_document(model, "我喜欢学习。")
    assert doc == [ids["bos"], *content, ids["eos"]]
    # a boundary the text already carries is not doubled, at either end
    assert encode_document(model, "<s>我喜欢学习。</s>") == doc
    assert encode_document(model, "<s>我喜欢学习。") == doc
    assert with_boundaries(model, doc) == doc
    assert encode_document(model, "") == [ids["bos"], ids["eos"]]


def test_content_never_holds_specials_even_when_the_text_spells_them():
    model = fixed()
    assert encode_content(model, "我<pad>") == [4, 3, 3, 3, 3, 3]  # '<', 'p', … are not tokens: UNK each
    byte = bpe("byte")
    assert not set(encode_content(byte, "a <pad> b")) & set(byte.special_ids.values())


def test_a_model_without_roles_adds_nothing():
    model = bpe(roles=Roles())
    assert encode_document(model, "low") == encode_content(model, "low")


@pytest.mark.parametrize("kind", MODELS)
def test_skip_special_hides_bos_eos_pad_and_shows_unk(kind):
    model = MODELS[kind]()
    r = role_ids(model)
    ids = [r["bos"], *encode_content(model, "我喜欢"), r["unk"], r["eos"], r["pad"], r["pad"]]
    assert decode(model, ids, skip_special=True) == "我喜欢<unk>"
    assert decode(model, ids) == "<s>我喜欢<unk></s><pad><pad>"


@pytest.mark.parametrize("kind", MODELS)
def test_an_id_outside_the_vocabulary_names_the_id_and_range(kind):
    model = MODELS[kind]()
    v = model.vocab_size
    for skip in (False, True):
        with pytest.raises(DecodeError, match=rf"id {v} at position 2 is out of range: this vocabulary has ids 0\.\.{v - 1}"):
            decode(model, [role_ids(model)["bos"], 5, v], skip_special=skip)


def test_char_units_use_the_unk_role():
    model = bpe("char", roles=Roles(unk="<pad>"))  # any special may stand for unseen characters
    assert encode_content(model, "漢") == [model.special_ids["<pad>"]]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40))
def test_skip_special_gives_the_text_back_for_byte_level(text):
    model = BYTE
    if text.startswith("<s>") or text.endswith("</s>"):
        return  # those strings are the boundary itself (see the next test)
    assert decode(model, encode_document(model, text), skip_special=True) == text


def test_a_text_carrying_its_boundaries_comes_back_without_them():
    assert decode(BYTE, encode_document(BYTE, "<s>hi</s>"), skip_special=True) == "hi"


BYTE = bpe("byte")


# -- files ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", MODELS)
def test_model_files_record_roles(tmp_path, kind):
    model = MODELS[kind]()
    modelfile.save(model, tmp_path / "m.json")
    back = load_any(tmp_path / "m.json")
    assert back.roles == ROLES
    assert encode_document(back, TEXT) == encode_document(model, TEXT)


def test_a_model_file_with_a_bad_role_is_a_model_file_error(tmp_path):
    doc = modelfile.to_json(bpe())
    doc["roles"] = {"bos": "<nope>"}
    (tmp_path / "m.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFileError, match="'roles'.*<nope>"):
        load_any(tmp_path / "m.json")


@pytest.mark.parametrize("units", ["byte", "char"])
def test_hf_export_adds_boundaries_pads_and_keeps_ids(units):
    tokenizers = pytest.importorskip("tokenizers")
    model = bpe(units, Roles(bos="<s>", eos="</s>", pad="<pad>", unk="<unk>" if units == "char" else None))
    doc = to_hf(model)
    assert doc["post_processor"]["type"] == "TemplateProcessing"
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    for text in ["我喜欢机器学习。", "lowest newer", ""]:
        assert hf.encode(text).ids == encode_document(model, text)
        assert hf.encode(text, add_special_tokens=False).ids == encode_content(model, text)
    short, long = hf.encode_batch(["low", "lower lowest"])
    pad = model.special_ids["<pad>"]
    n = len(encode_document(model, "low"))
    assert short.ids[n:] == [pad] * (len(long.ids) - n) and short.attention_mask[n:] == [0] * (len(long.ids) - n)
    back = from_hf(doc)
    assert back.roles == model.roles and to_hf(back) == doc


# -- the session ---------------------------------------------------------------------------------
def test_session_roles_need_no_retraining_and_are_saved(tmp_path):
    from tokworkbench.core.session.session import Session

    (tmp_path / "c.txt").write_text(TEXT * 5, encoding="utf-8")
    s = Session.open([str(tmp_path / "c.txt")], Settings(target=300, special_tokens=SPECIALS))
    s.step_many(3)
    s.save(tmp_path / "m.json")
    assert not s.unsaved
    learner = s.learner
    with pytest.raises(RoleError, match="'<x>' is not a special token"):
        s.set_roles(Roles(bos="<x>"))
    assert s.settings.roles == Roles()  # nothing changed
    s.set_roles(ROLES)
    assert s.learner is learner and s.steps == 3 and s.unsaved  # the roles are not in the file yet
    assert encode_document(s.model(), "我")[0] == s.model().special_ids["<s>"]
    s.save(tmp_path / "m.json")
    assert not s.unsaved and load_any(tmp_path / "m.json").roles == ROLES


def test_hf_post_processor_with_bos_only_reads_back_as_bos_only():
    model = bpe(roles=Roles(bos="<s>"))
    doc = to_hf(model)
    assert [next(iter(p)) for p in doc["post_processor"]["single"]] == ["SpecialToken", "Sequence"]
    assert doc["padding"] is None
    assert from_hf(doc).roles == Roles(bos="<s>")
    assert to_hf(bpe(roles=Roles()))["post_processor"] is None


def test_encode_add_special_says_when_the_model_has_no_boundaries(tmp_path, capsys):
    from tokworkbench.cli import main

    modelfile.save(bpe(roles=Roles(pad="<pad>")), tmp_path / "m.json")
    assert main(["encode", "-m", str(tmp_path / "m.json"), "low", "--add-special"]) == 0
    out, err = capsys.readouterr()
    assert "gives no token the bos or eos role; --add-special adds nothing" in err
    assert [int(i) for i in out.split()] == bpe().encode("low")


def test_a_unigram_model_takes_the_unk_role_and_its_file_keeps_it(tmp_path):
    """Unigram's one special token is its <unk>: it can take the unk role (and no other token can
    take one); the model file records it, and the fingerprint sees it."""
    from tokworkbench.core.compat import fingerprint
    from tokworkbench.core.errors import RoleError
    from tokworkbench.core.models.roles import Roles, with_roles
    from tokworkbench.core.registry import modelfile
    from tokworkbench.core.session.session import Session
    from tokworkbench.core.session.settings import Settings
    from tokworkbench.core.unigram import UnigramConfig, UnigramLearner

    plain = UnigramLearner(["ab ab ba"], UnigramConfig(seed_size=10)).model()
    model = with_roles(plain, Roles(unk="<unk>"))
    assert fingerprint(model) != fingerprint(plain)
    path = modelfile.save(model, tmp_path / "u.json")
    assert modelfile.load(path).roles == Roles(unk="<unk>")
    docs = tmp_path / "c.txt"
    docs.write_text("ab ab ba abba", encoding="utf-8")
    session = Session.open([str(docs)], Settings(kind="unigram", split="metaspace", seed_size=20, target=10))
    session.set_roles(Roles(unk="<unk>"))
    assert session.model().roles.unk == "<unk>"
    with pytest.raises(RoleError, match="not a special token"):
        session.set_roles(Roles(bos="<s>"))


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_a_special_in_the_text_is_named_where_it_stands_in_what_the_user_gave(kind):
    """encode_document takes a leading BOS off before encoding; the error's offset still counts
    it, so it points into the user's text, not into the slice."""
    from tokworkbench.core.errors import SpecialTokenInTextError

    model = MODELS[kind]()
    text = "<s>low <pad> er"
    with pytest.raises(SpecialTokenInTextError) as raised:
        encode_document(model, text, strict=True)
    assert raised.value.offset == text.index("<pad>") == 7 and "at offset 7" in str(raised.value)
    with pytest.raises(SpecialTokenInTextError, match="at offset 4"):
        encode_document(model, "low <pad> er", strict=True)
