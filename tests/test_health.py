"""Vocabulary health (core/inspection/health.py, `tokworkbench health`), judged by the reference
libraries: on r50k_base (GPT-2), cl100k_base and o200k_base every ordinary token is encoded back
by tiktoken, and the tokens health flags must be exactly the ones tiktoken does not give back
(and exactly the ones whose bytes are not UTF-8); a token proven unreachable is never produced by
Hugging Face's BPE on any short text; the corpus checks are recounted with tiktoken's ids."""

import base64
import codecs
import csv
import io
import itertools
import json

import pytest
import tiktoken
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers

from tokworkbench.cli import main
from tokworkbench.core.bytelevel import bytes_to_unicode
from tokworkbench.core.errors import ModelFileError, QueryError
from tokworkbench.core.formats.hf import from_hf
from tokworkbench.core.formats.presets import PRESETS, load_preset, preset_ranks
from tokworkbench.core.formats.tiktoken import parse_ranks
from tokworkbench.core.inspection.health import FLAGS, health, magikarp_form, utf8_partial
from tokworkbench.core.registry.load import load_any


def _reference(name: str):
    """Our preset and tiktoken's Encoding over the same ranks file (skipped without the data)."""
    try:
        raw, _ = preset_ranks(PRESETS[name])
    except ModelFileError as exc:
        pytest.skip(f"no {name} data here ({exc})")
    ours = load_preset(name)
    theirs = tiktoken.Encoding(name, pat_str=ours.pre_tokenizer.pattern, mergeable_ranks=parse_ranks(raw),
                               special_tokens=ours.special_ids)
    return ours, theirs


def _ordinary(theirs) -> list[int]:
    specials = set(theirs._special_tokens.values())
    return [i for i in range(theirs.n_vocab) if i not in specials and _has(theirs, i)]


def _has(enc, tid: int) -> bool:
    try:
        enc.decode_single_token_bytes(tid)
        return True
    except KeyError:
        return False


@pytest.fixture(scope="module", params=["r50k_base", "cl100k_base", "o200k_base"])
def public(request):
    ours, theirs = _reference(request.param)
    return request.param, ours, theirs, health(ours)


def test_roundtrip_and_partial_are_exactly_tiktokens(public):
    name, _, theirs, report = public
    not_back, partial = {}, set()
    for tid in _ordinary(theirs):
        data = theirs.decode_single_token_bytes(tid)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            partial.add(tid)
            continue
        ids = theirs.encode_ordinary(text)
        if ids != [tid]:
            not_back[tid] = ids
    assert report.ordinary == len(_ordinary(theirs))
    assert {r.id: list(r.ids) for r in report.roundtrip} == not_back, name
    assert {p.id for p in report.partial} == partial
    for r in report.roundtrip:
        assert r.text == theirs.decode([r.id]) and r.magikarp == magikarp_form(r.text)
    # tiktoken's merges make every token of its own bytes in these files: nothing is unreachable,
    # and what would be is re-encoded by tiktoken too
    assert report.unreachable_checked
    for tid in report.unreachable:
        assert theirs.encode_ordinary(theirs.decode([tid])) != [tid]


def _completes(data: bytes) -> bool:
    """Whether some continuation bytes after `data` make its last character whole (Python's
    decoder judges)."""
    lead = next((j for j in range(len(data) - 1, max(-1, len(data) - 5), -1) if not 0x80 <= data[j] < 0xC0), None)
    if lead is None:
        return False
    for k, filler in itertools.product((1, 2, 3), (0x80, 0x90, 0xA0, 0xBF)):
        try:
            (data[lead:] + bytes([filler]) * k).decode("utf-8")
            return True
        except UnicodeDecodeError:
            continue
    return False


def test_partial_tokens_start_or_end_inside_a_character_as_pythons_decoder_says(public):
    _, _, theirs, report = public
    for p in report.partial:
        assert p.data == theirs.decode_single_token_bytes(p.id)
        try:
            codecs.getincrementaldecoder("utf-8")().decode(p.data[:1], final=False)
            starts = False
        except UnicodeDecodeError:
            starts = 0x80 <= p.data[0] < 0xC0  # a lead byte UTF-8 never has is not "inside" one
        assert p.starts_inside == starts, p
        assert p.ends_inside == _completes(p.data), p


def test_specials_and_near_duplicates_of_public_encodings(public):
    *_, theirs, report = public
    for s in report.specials:
        assert list(s.ordinary_ids) == theirs.encode_ordinary(s.text)
        assert s.same_as is None and not s.flagged  # no corpus: nothing to clash with
    group_of = {i: g for g in report.near_duplicates for i in g.ids}
    words = [theirs.encode_single_token(w.encode()) for w in ("Hello", " Hello", "hello", " hello")]
    assert len({id(group_of[w]) for w in words}) == 1
    assert group_of[words[0]].case and group_of[words[0]].space
    for g in report.near_duplicates:
        keys = {theirs.decode_single_token_bytes(i).decode().lstrip(" \u2581").casefold() for i in g.ids}
        assert keys == {g.key} and len(g.ids) >= 2


def _abc_model():
    """Byte-level BPE whose merge 'ab'+'c' is always pre-empted by 'b'+'c' (ranked first)."""
    alphabet = [bytes_to_unicode()[b] for b in range(256)]
    vocab = {c: i for i, c in enumerate(alphabet)}
    for t in ("bc", "ab", "abc"):
        vocab[t] = len(vocab)
    hf = HFTokenizer(models.BPE(vocab=vocab, merges=[("b", "c"), ("a", "b"), ("ab", "c")]))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    return hf, from_hf(json.loads(hf.to_str()))


def test_a_merge_always_pre_empted_is_unreachable_and_hf_never_makes_it():
    hf, ours = _abc_model()
    report = health(ours)
    abc = hf.token_to_id("abc")
    assert report.unreachable == (abc,) and report.flagged("roundtrip") == {abc}
    made = set()
    for n in range(1, 7):
        for letters in itertools.product("abc ", repeat=n):
            text = "".join(letters)
            ids = hf.encode(text).ids
            assert ours.encode_ordinary(text) == ids
            made.update(ids)
    assert abc not in made and {hf.token_to_id("bc"), hf.token_to_id("ab")} <= made


def test_a_whole_chunk_only_token_is_reachable_as_tiktoken_reaches_it(tmp_path):
    raw, _ = preset_ranks(PRESETS["r50k_base"])
    ranks = {t: r for t, r in parse_ranks(raw).items() if r < 3000}
    whole = " việc".encode()
    ranks[whole] = len(ranks)
    path = tmp_path / "w.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
    ours = load_any(path, "gpt4")
    theirs = tiktoken.Encoding("w", pat_str=ours.pre_tokenizer.pattern, mergeable_ranks=ranks, special_tokens={})
    report = health(ours)
    tid = ranks[whole]
    assert ours.self_joins([tid]) == [False]  # no merge makes it ...
    assert tid not in report.unreachable and tid not in report.flagged("roundtrip")  # ... but its chunk does
    assert theirs.encode_ordinary(" việc") == [tid]
    assert {r.id for r in report.roundtrip} == {
        t for t in range(len(ranks)) if utf8_partial(theirs.decode_single_token_bytes(t)) is None
        and theirs.encode_ordinary(theirs.decode([t])) != [t]}


def test_cli_json_counts_unseen_tokens_and_specials_in_the_corpus(tmp_path, capsys):
    _, theirs = _reference("r50k_base")
    text = "The corpus says hello <|endoftext|> and hello again.\n"
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    assert main(["health", "gpt2", str(tmp_path / "a.txt"), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    seen = set(theirs.encode_ordinary(text))
    assert set(doc["unseen"]) == set(_ordinary(theirs)) - seen
    assert doc["corpus_tokens"] == len(theirs.encode_ordinary(text))
    (eot,) = doc["specials"]
    assert eot["corpus_hits"] == 1 and eot["flagged"] and eot["ordinary_ids"] == theirs.encode_ordinary("<|endoftext|>")
    assert doc["counts"]["special"] == 1 and doc["counts"]["unseen"] == len(doc["unseen"])
    assert doc["counts"]["partial"] == len(doc["partial"])


def test_cli_csv_markdown_and_table_say_the_same(tmp_path, capsys):
    _, theirs = _reference("r50k_base")
    assert main(["health", "gpt2", "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["flag", "id", "token", "bytes", "detail"]
    partial = [r for r in rows[1:] if r[0] == "partial"]
    for flag, tid, _, hexed, _ in partial:
        assert bytes.fromhex(hexed.replace(" ", "")) == theirs.decode_single_token_bytes(int(tid))
    assert main(["health", "gpt2", "--format", "json"]) == 0
    counts = json.loads(capsys.readouterr().out)["counts"]
    assert len(partial) == counts["partial"]
    assert main(["health", "gpt2", "--format", "markdown", "--show", "2"]) == 0
    md = capsys.readouterr().out
    assert f"| partial | {counts['partial']:,} |" in md and "## partial (first 2)" in md
    assert main(["health", "gpt2", "--show", "0"]) == 0
    table = capsys.readouterr().out
    assert f"partial{' ' * 8}" in table and f"{counts['partial']:,}" in table and "not checked: no corpus" in table


def test_bad_input_is_one_line(tmp_path, capsys):
    assert main(["health", str(tmp_path / "nothing.json")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    _, ours = _abc_model()
    with pytest.raises(QueryError, match="no health flag"):
        health(ours).flagged("glitchy")
    assert set(health(ours).counts()) == set(FLAGS)
