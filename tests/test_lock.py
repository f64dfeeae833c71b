"""The regression lock: `lock` pins the ids a tokenizer gives on texts, `check` finds the first
change (one merge is enough), and a damaged lock file is one error line with exit status 2."""

import json
import shutil
import unicodedata
from pathlib import Path

import pytest

from tokworkbench.cli import main
from tokworkbench.core import TrainConfig, Trainer
from tokworkbench.core.compat import fingerprint
from tokworkbench.core.inspection.lock import gather_texts, lock_json, make_lock, parse_lock
from tokworkbench.core.inspection.lockcheck import check_lock
from tokworkbench.core.models.roles import Roles, encode_content, with_roles
from tokworkbench.core.registry import modelfile
from tokworkbench.core.text.pretokenize import pre_tokenizer

TEXTS = {
    "a.txt": "the theme of these three theses is the thermal theory\n",
    "b.txt": "unrelated words: apple banana cherry\nthere and then\n",
    "sub/c.txt": "then they thought the theatre was there\n",
}
CORPUS = ["the theme there then these theses thermal theory theatre thought the the the"] * 3


def trained(merges: int, tie_break: str = "first"):
    t = Trainer(CORPUS, TrainConfig(pre_tokenizer=pre_tokenizer("gpt2"), tie_break=tie_break,
                                    special_tokens=("<s>",)))
    list(t.run(merges=merges))
    return t.model()


@pytest.fixture
def texts(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "texts"
    for name, text in TEXTS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return root


def first_parting(a, b, texts: list[tuple[str, str]]):
    """The first (name, id index, character offset) where the two models' ids part, found
    here from the two encodings alone (offset: characters the agreed ids decode to)."""
    for name, text in texts:
        x, y = encode_content(a, text), encode_content(b, text)
        if x != y:
            k = next((k for k, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
            return name, k, len(b.decode_bytes(y[:k]).decode("utf-8", "ignore"))
    return None


def run(argv, capsys) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_the_lock_detects_a_change_of_one_merge(texts, tmp_path, capsys):
    old, new = trained(12), trained(11)  # one merge less
    modelfile.save(old, tmp_path / "old.json")
    modelfile.save(new, tmp_path / "new.json")
    status, out, _ = run(["lock", "old.json", "texts", "-o", "t.lock.json"], capsys)
    assert status == 0 and "locked 3 texts" in out
    listed = [(t.name, t.text) for t in gather_texts(["texts"], lines=False)]
    expected = first_parting(old, new, listed)
    assert expected is not None  # the dropped merge is used by these texts
    name, index, offset = expected
    status, out, _ = run(["check", "t.lock.json", "new.json"], capsys)
    assert status == 1
    number = [n for n, _ in listed].index(name) + 1
    assert out.splitlines()[0] == (f"CHANGED: {name} (text {number} of 3): the ids part at character {offset}, "
                                   f"id {index} ({len(encode_content(old, dict(listed)[name])):,} ids locked, "
                                   f"{len(encode_content(new, dict(listed)[name])):,} now)")
    assert "fingerprint changed" in out  # a merge less is a token less
    assert (f"  model    locked: bpe, vocabulary {old.vocab_size:,} (old.json); "
            f"now: bpe, vocabulary {new.vocab_size:,} (new.json)") in out.splitlines()
    now_line = next(line for line in out.splitlines() if line.startswith("  now"))
    assert f"[{index}] {encode_content(new, dict(listed)[name])[index]} " in now_line


def test_a_different_tie_break_is_found_at_its_first_text_and_offset(texts, tmp_path, capsys):
    old, new = trained(20, "first"), trained(20, "lexmax")
    assert old.merges != new.merges  # the corpus has ties, so the rule matters
    modelfile.save(old, tmp_path / "old.json")
    modelfile.save(new, tmp_path / "new.json")
    assert run(["lock", "old.json", "texts", "--lines", "-o", "t.lock.json"], capsys)[0] == 0
    lines = [(t.name + f" line {t.line}", t.text) for t in gather_texts(["texts"], lines=True)]
    name, index, offset = first_parting(old, new, lines)
    status, out, _ = run(["check", "t.lock.json", "new.json"], capsys)
    assert status == 1
    assert out.startswith(f"CHANGED: {name} (text ") and f"at character {offset}, id {index} " in out


def test_an_unchanged_model_is_one_line_and_exit_0(texts, tmp_path, capsys):
    model = trained(12)
    modelfile.save(model, tmp_path / "m.json")
    assert run(["lock", "m.json", "texts", "-o", "t.lock.json"], capsys)[0] == 0
    ids = sum(len(encode_content(model, t)) for t in TEXTS.values())
    assert run(["check", "t.lock.json", "m.json"], capsys) == (0, f"3 texts, {ids} ids: identical\n", "")
    # the texts found under another folder, as the lock names them
    shutil.copytree(tmp_path, tmp_path.parent / "moved")
    assert run(["check", "t.lock.json", "m.json", "--texts", str(tmp_path.parent / "moved")], capsys)[0] == 0


def test_the_lock_file_holds_the_model_and_each_texts_hash_and_ids(texts, tmp_path):
    model = trained(12)
    lock = make_lock(model, "m.json", gather_texts(["texts"], lines=True), lines=True)
    doc = json.loads(lock_json(lock))
    assert doc["model"] == {"kind": "bpe", "vocab_size": model.vocab_size, "source": "m.json",
                            "fingerprint": fingerprint(model)}
    assert [(t["name"], t["line"]) for t in doc["texts"]] == [
        ("texts/a.txt", 1), ("texts/b.txt", 1), ("texts/b.txt", 2), ("texts/sub/c.txt", 1)]
    assert doc["texts"][2]["ids"] == encode_content(model, "there and then")
    assert parse_lock(lock_json(lock)) == lock
    assert check_lock(lock, model).identical


def test_ids_that_stay_but_mean_other_tokens_are_a_change(texts, tmp_path, capsys):
    """A role moved: every id is the same, but the fingerprint says the ids mean other things."""
    model = trained(12)
    modelfile.save(model, tmp_path / "m.json")
    modelfile.save(with_roles(model, Roles(bos="<s>")), tmp_path / "roles.json")
    run(["lock", "m.json", "texts", "-o", "t.lock.json"], capsys)
    status, out, _ = run(["check", "t.lock.json", "roles.json"], capsys)
    assert status == 1 and out.startswith("CHANGED: 3 texts, ") and "fingerprint changed" in out


def test_a_text_changed_since_the_lock_is_an_error_not_an_answer(texts, tmp_path, capsys):
    modelfile.save(trained(12), tmp_path / "m.json")
    run(["lock", "m.json", "texts", "-o", "t.lock.json"], capsys)
    (texts / "b.txt").write_text("something else\n", encoding="utf-8")
    status, out, err = run(["check", "t.lock.json", "m.json"], capsys)
    assert (status, out) == (2, "") and err.count("\n") == 1 and "texts/b.txt: the text is not the one locked" in err


def test_the_lock_is_never_written_over_an_input(texts, tmp_path, capsys):
    modelfile.save(trained(12), tmp_path / "m.json")
    status, _, err = run(["lock", "m.json", "texts", "-o", "texts/a.txt"], capsys)
    assert status == 1 and err.count("\n") == 1
    assert (texts / "a.txt").read_text(encoding="utf-8") == TEXTS["a.txt"]


def _good_lock() -> dict:
    return json.loads(lock_json(make_lock(trained(12), "m.json", gather_texts(["texts"], lines=False), False)))


DAMAGE = [
    ("not JSON", lambda d: "{"),
    ("a JSON list", lambda d: []),
    ("another format", lambda d: {**d, "format": "tiktoken"}),
    ("version 2", lambda d: {**d, "version": 2}),
    ("version true", lambda d: {**d, "version": True}),
    ("a field missing", lambda d: {k: v for k, v in d.items() if k != "model"}),
    ("an unknown field", lambda d: {**d, "extra": 1}),
    ("lines a string", lambda d: {**d, "lines": "no"}),
    ("vocab size negative", lambda d: {**d, "model": {**d["model"], "vocab_size": -1}}),
    ("vocab size huge", lambda d: {**d, "model": {**d["model"], "vocab_size": 10 ** 40}}),
    ("fingerprint short", lambda d: {**d, "model": {**d["model"], "fingerprint": "abc"}}),
    ("kind a number", lambda d: {**d, "model": {**d["model"], "kind": 5}}),
    ("tokens a list", lambda d: {**d, "tokens": []}),
    ("token key not an id", lambda d: {**d, "tokens": {**d["tokens"], "07": "x"}}),
    ("token key huge", lambda d: {**d, "tokens": {**d["tokens"], "9" * 30: "x"}}),
    ("token text a number", lambda d: {**d, "tokens": {k: 1 for k in d["tokens"]}}),
    ("texts an object", lambda d: {**d, "texts": {}}),
    ("a text not an object", lambda d: {**d, "texts": [1]}),
    ("an id a float", lambda d: _first_text(d, ids=[1.0])),
    ("an id a bool", lambda d: _first_text(d, ids=[True])),
    ("an id negative", lambda d: _first_text(d, ids=[-1])),
    ("an id huge", lambda d: _first_text(d, ids=[10 ** 30])),
    ("an id not in tokens", lambda d: _first_text(d, ids=[max(map(int, d["tokens"])) + 1])),
    ("ids a string", lambda d: _first_text(d, ids="1 2 3")),
    ("sha256 upper case", lambda d: _first_text(d, sha256=d["texts"][0]["sha256"].upper())),
    ("a line in a lock of files", lambda d: _first_text(d, line=1)),
    ("a name empty", lambda d: _first_text(d, name="")),
    ("a name with NUL", lambda d: _first_text(d, name="a\0b")),
    ("a text twice", lambda d: {**d, "texts": d["texts"] + d["texts"][:1]}),
]


def _first_text(d: dict, **fields) -> dict:
    return {**d, "texts": [{**d["texts"][0], **fields}, *d["texts"][1:]]}


@pytest.mark.parametrize("what, damage", DAMAGE, ids=[w for w, _ in DAMAGE])
def test_a_damaged_lock_is_one_line_and_exit_2(what, damage, texts, tmp_path, capsys):
    modelfile.save(trained(12), tmp_path / "m.json")
    damaged = damage(_good_lock())
    (tmp_path / "bad.json").write_text(damaged if isinstance(damaged, str) else json.dumps(damaged))
    status, out, err = run(["check", "bad.json", "m.json"], capsys)
    assert (status, out) == (2, ""), what
    assert err.count("\n") == 1 and err.startswith("tokworkbench: error: bad.json: "), err


@pytest.mark.parametrize("raw", [b'{"a": 1, "a": 2}', b'{"version": NaN}', b'{"v": ' + b"1" * 5000 + b"}",
                                 b"\xff\xfe", b"[" * 100000], ids=["duplicate key", "NaN", "5000 digits",
                                                                  "not UTF-8", "deep"])
def test_json_tricks_are_one_line_too(raw, texts, tmp_path, capsys):
    modelfile.save(trained(12), tmp_path / "m.json")
    (tmp_path / "bad.json").write_bytes(raw)
    status, out, err = run(["check", "bad.json", "m.json"], capsys)
    assert (status, out) == (2, "") and err.count("\n") == 1 and "bad.json: " in err


def test_texts_outside_the_folder_are_refused(texts, tmp_path, capsys):
    modelfile.save(trained(12), tmp_path / "m.json")
    doc = _first_text(_good_lock(), name="../../etc/passwd")
    (tmp_path / "evil.json").write_text(json.dumps(doc))
    status, _, err = run(["check", "evil.json", "m.json", "--texts", "texts"], capsys)
    assert status == 2 and "is not a path inside a folder" in err and err.count("\n") == 1


def test_the_offset_of_a_normalizing_model_counts_the_text_it_sees(tmp_path):
    """NFKC makes 'ﬁ' (one character) 'fi' (two): the ids spell the normalized text, and the
    offset counts characters there, as the model's token spans do."""
    corpus = ["ﬁne ﬁnds the theme there then these theses"] * 3

    def model(merges):
        t = Trainer(corpus, TrainConfig(normalizer="nfkc", pre_tokenizer=pre_tokenizer("gpt2")))
        list(t.run(merges=merges))
        return t.model()

    old, new = model(12), model(11)
    text = "ﬁﬁﬁ ﬁne the theme there then these theses"
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    lock = make_lock(old, "old", gather_texts([tmp_path / "t.txt"], lines=False), False)
    change = check_lock(lock, new).change
    a, b = encode_content(old, text), encode_content(new, text)
    k = next(k for k, (x, y) in enumerate(zip(a, b)) if x != y)
    seen = unicodedata.normalize("NFKC", text)
    assert change.index == k and change.offset == len(new.decode_bytes(b[:k]).decode())
    assert change.offset != len(text.encode()[:len(new.decode_bytes(b[:k]))].decode("utf-8", "ignore"))
    assert change.context[change.context_at:] == seen[change.offset:change.offset + 20]


def test_a_text_the_model_no_longer_encodes_is_a_change(texts, tmp_path, capsys):
    from tokworkbench.core.fixed.model import FixedVocab

    modelfile.save(trained(12), tmp_path / "m.json")
    modelfile.save(FixedVocab(("t", "h", "e", " ", "\n")), tmp_path / "few.json")  # no 'm' in 'theme'
    run(["lock", "m.json", "texts", "-o", "t.lock.json"], capsys)
    status, out, _ = run(["check", "t.lock.json", "few.json"], capsys)
    lines = out.splitlines()
    assert status == 1 and lines[0] == "CHANGED: texts/a.txt (text 1 of 3): it no longer encodes"
    assert lines[1].startswith("  error    ") and "fingerprint changed" in lines[2]
