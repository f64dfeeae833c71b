"""Issue 28, files: an export of two files replaces both or neither; count files whose counts
or sizes would overflow or inflate are refused before anything is built; damaged readers' input
gives one line, never a traceback."""

import io
import json
import os
import struct
import tracemalloc
import zipfile

import numpy as np
import pytest

from tokworkbench.cli import main
from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.errors import CountFileError, OutputError, TrainingError
from tokworkbench.core.files.atomic import TMP_TAG
from tokworkbench.core.files.countfile import from_bytes, read_counts, write_counts
from tokworkbench.core.registry.export import export
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.text.chunks import ChunkCounts, count_chunks
from tokworkbench.core.text.patterns import PRESETS

TEXT = "the cat sat on the mat with the hat " * 30


def one_line_error(argv, capsys, match):
    status = main([str(a) for a in argv])
    err = [line for line in capsys.readouterr().err.splitlines() if line]
    assert status == 1 and len(err) == 1 and err[0].startswith("tokworkbench: error: "), err
    assert match in err[0], err[0]


def trained(merges: int):
    t = Trainer([TEXT], TrainConfig(pre_tokenizer=pre_tokenizer("gpt4"), special_tokens=("<|eot|>",)))
    list(t.run(merges=merges))
    return t.model()


# -- item 5: a tiktoken pair is replaced whole or not at all -----------------------------------------
@pytest.fixture
def old_pair(tmp_path):
    out = tmp_path / "t.tiktoken"
    export(trained(5), "tiktoken", out)
    return out, {p: p.read_bytes() for p in (out, tmp_path / "t.tiktoken.json")}


def fail_on_call(monkeypatch, name: str, n: int):
    """os.NAME fails (ENOSPC) on its n-th call, as a full disk would."""
    real = getattr(os, name)
    calls = []

    def failing(*args, **kwargs):
        calls.append(args)
        if len(calls) == n:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(os, name, failing)


def assert_old_pair_intact(out, before):
    assert {p: p.read_bytes() for p in before} == before
    assert not [p for p in os.listdir(out.parent) if TMP_TAG in p]
    tok = load_any(out)  # still a working pair
    assert tok.vocab_size == trained(5).vocab_size


@pytest.mark.parametrize("call", ["fsync", "replace"])
def test_a_tiktoken_export_that_fails_on_its_second_file_keeps_the_old_pair(old_pair, monkeypatch, call):
    out, before = old_pair
    fail_on_call(monkeypatch, call, 2)  # the second file's sync (a full disk) or its rename
    with pytest.raises(OutputError, match="No space left on device; nothing was changed"):
        export(trained(15), "tiktoken", out)
    monkeypatch.undo()
    assert_old_pair_intact(out, before)


def test_a_new_pair_that_fails_on_its_second_rename_leaves_no_first_file(tmp_path, monkeypatch):
    out = tmp_path / "new.tiktoken"
    fail_on_call(monkeypatch, "replace", 2)
    with pytest.raises(OutputError):
        export(trained(15), "tiktoken", out)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_a_tiktoken_export_that_succeeds_replaces_both(old_pair):
    out, before = old_pair
    export(trained(15), "tiktoken", out)
    assert load_any(out).vocab_size == trained(15).vocab_size
    assert sorted(os.listdir(out.parent)) == ["t.tiktoken", "t.tiktoken.json"]
    assert json.loads((out.parent / "t.tiktoken.json").read_bytes())["ranks_sha256"]


# -- item 6: counts whose sum overflows int64 --------------------------------------------------------
def count_file(path, chunks, counts, header=None):
    out = io.BytesIO()
    encoded = [c.encode("utf-8") for c in chunks]
    head = {"format": "tokworkbench-counts", "version": 1, "normalizer": "none", "split": "gpt4",
            "pattern": PRESETS["gpt4"], "documents": 1, "chars": 10, "bytes": 10, "chunks": len(chunks)}
    raw_header = header if header is not None else json.dumps(head).encode()
    np.savez_compressed(out, header=np.frombuffer(raw_header, dtype=np.uint8),
                        chunk_bytes=np.frombuffer(b"".join(encoded), dtype=np.uint8),
                        chunk_ends=np.cumsum([len(e) for e in encoded], dtype=np.int64),
                        counts=np.array(counts, dtype=np.int64))
    path.write_bytes(out.getvalue())
    return path


def test_counts_whose_total_overflows_int64_are_refused_at_read(tmp_path, capsys):
    """2⁶² of 'ab' and of 'abab' make 3 × 2⁶² of the pair (a, b): it used to wrap to a negative
    count, train other merges and report negative token totals, with exit 0."""
    path = count_file(tmp_path / "big.npz", ["ab", "abab", "cd"], [2**62, 2**62, 3])
    with pytest.raises(CountFileError, match="more than 9,223,372,036,854,775,807 bytes"):
        read_counts(path)
    one_line_error(["train", "--from-counts", path, "--merges", "3", "-o", tmp_path / "m.json"], capsys,
                   "64-bit counts")
    assert not (tmp_path / "m.json").exists()


def test_counts_up_to_the_int64_limit_train():
    """Σ count × bytes = 2⁶³ − 1 exactly is the most the trainer's counts hold, and it trains."""
    counted = ChunkCounts(["ab", "c"], np.array([2**61, 2**63 - 1 - 2**62], dtype=np.int64), 1, 3, 3)
    t = Trainer([], TrainConfig(), counted=counted)
    assert t.initial_tokens == 2**63 - 1
    list(t.run(merges=1))
    assert t.history[0].count == 2**61 and t.total_tokens == 2**63 - 1 - 2**61


def test_a_trainer_refuses_counts_beyond_int64():
    counted = ChunkCounts(["ab", "c"], np.array([2**62, 1], dtype=np.int64), 1, 3, 3)
    with pytest.raises(TrainingError, match="64-bit"):
        Trainer([], TrainConfig(), counted=counted)


# -- item 11 and the header: nothing is inflated or allocated before its size is checked -------------
def zip_of(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, data in members.items():
            z.writestr(name + ".npy", data)
    return out.getvalue()


def npy(array: np.ndarray, shape=None) -> bytes:
    """An .npy member; `shape` overrides what its header declares."""
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": np.lib.format.dtype_to_descr(array.dtype),
                                               "fortran_order": False, "shape": shape or array.shape})
    return out.getvalue() + array.tobytes()


def peak_bytes(call) -> int:
    tracemalloc.start()
    try:
        call()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


VALID_HEADER = json.dumps({"format": "tokworkbench-counts", "version": 1, "normalizer": "none", "split": "none",
                           "pattern": None, "documents": 1, "chars": 1, "bytes": 1, "chunks": 1}).encode()


def test_a_count_file_that_would_inflate_a_thousand_times_is_refused_before_inflating():
    size = 128 << 20  # one chunk of 128 MB of NULs: deflated to about 130 KB
    data = zip_of({"header": npy(np.frombuffer(VALID_HEADER.replace(b'"chars": 1', b'"chars": %d' % size)
                                               .replace(b'"bytes": 1', b'"bytes": %d' % size), dtype=np.uint8)),
                   "chunk_bytes": npy(np.zeros(size, dtype=np.uint8)),
                   "chunk_ends": npy(np.array([size], dtype=np.int64)), "counts": npy(np.array([1], dtype=np.int64))})
    assert len(data) < 1 << 20

    def read():
        with pytest.raises(CountFileError, match="would inflate to 128.0 MiB"):
            from_bytes(data)

    assert peak_bytes(read) < 16 << 20


def test_an_npy_header_that_declares_a_huge_shape_is_refused_before_allocating():
    data = zip_of({"header": npy(np.frombuffer(VALID_HEADER, dtype=np.uint8)),
                   "chunk_bytes": npy(np.frombuffer(b"a", dtype=np.uint8)),
                   "chunk_ends": npy(np.array([1], dtype=np.int64), shape=(1 << 27,)),  # 1 GiB declared
                   "counts": npy(np.array([1], dtype=np.int64))})

    def read():
        with pytest.raises(CountFileError, match="declares 134,217,728 items"):
            from_bytes(data)

    assert peak_bytes(read) < 16 << 20


def test_a_count_file_with_a_deeply_nested_header_is_one_line(tmp_path, capsys):
    deep = b'{"format": "tokworkbench-counts", "version": 1, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    path = count_file(tmp_path / "deep.npz", ["ab"], [1], header=deep)
    one_line_error(["train", "--from-counts", path, "--merges", "1", "-o", tmp_path / "m.json"], capsys,
                   "nests too deeply")


def test_a_count_file_with_a_deeply_nested_header_does_not_stop_the_app_at_start(tmp_path):
    """The workbench opens a count file through Session.open, whose errors the app shows as a line."""
    from tokworkbench.core.session.session import Session
    from tokworkbench.core.session.settings import Settings

    deep = b'{"format": "tokworkbench-counts", "version": 1, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    path = count_file(tmp_path / "deep.npz", ["ab"], [1], header=deep)
    with pytest.raises(CountFileError, match="nests too deeply"):
        Session.open([str(path)], Settings())


def test_a_count_file_still_round_trips(tmp_path):
    counted = count_chunks(["the cat sat on the mat, 123 ÄÖ 😀"], "none", pre_tokenizer("gpt4"))
    write_counts(tmp_path / "c.npz", counted, "none", pre_tokenizer("gpt4"))
    back, normalizer, pre = read_counts(tmp_path / "c.npz")
    assert back.chunks == counted.chunks and back.counts.tolist() == counted.counts.tolist()
    assert back.counts.flags.writeable and (normalizer, pre) == ("none", pre_tokenizer("gpt4"))


# -- the named tracebacks: each is one line now ------------------------------------------------------
def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n >> 7 else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _field(number: int, wire: int, payload: bytes) -> bytes:
    return _varint(number << 3 | wire) + (_varint(len(payload)) + payload if wire == 2 else payload)


def sp_model(piece_fields: bytes = b"", trainer: bytes = b"", normalizer: bytes = b"") -> bytes:
    """A SentencePiece ModelProto: <unk> (UNKNOWN), ▁a, and a piece given field by field."""
    unk = _field(1, 2, b"<unk>") + _field(2, 5, struct.pack("<f", 0.0)) + _field(3, 0, b"\x02")
    a = _field(1, 2, "▁a".encode()) + _field(2, 5, struct.pack("<f", -1.0))
    pieces = _field(1, 2, unk) + _field(1, 2, a) + (_field(1, 2, piece_fields) if piece_fields else b"")
    return pieces + _field(2, 2, _field(3, 0, b"\x01") + trainer) + _field(3, 2, normalizer)


@pytest.mark.parametrize("damaged, match", [
    (sp_model(piece_fields=_field(1, 0, b"\x05")), "piece 2's piece (field 1) is a varint, not length-delimited"),
    (sp_model(piece_fields=_field(1, 2, b"b") + _field(2, 0, b"\x01")), "piece 2's score (field 2) is a varint"),
    (sp_model(piece_fields=_field(1, 2, b"b") + _field(3, 2, b"x")), "piece 2's type (field 3) is length-delimited"),
    (sp_model(trainer=_field(40, 2, b"x")), "trainer_spec's unk_id (field 40) is length-delimited"),
    (sp_model(trainer=_field(3, 5, b"\x00" * 4)), "trainer_spec's model_type (field 3) is fixed32"),
    (sp_model(normalizer=_field(1, 0, b"\x07")), "normalizer_spec's name (field 1) is a varint"),
    (sp_model(normalizer=_field(2, 0, b"\x07")), "normalizer_spec's precompiled_charsmap (field 2) is a varint"),
    (sp_model(normalizer=_field(4, 2, b"")), "normalizer_spec's remove_extra_whitespaces (field 4)"),
    (sp_model() + _field(2, 0, b"\x01"), "trainer_spec (field 2) has wire type 0, not a message"),
], ids=["piece text", "piece score", "piece type", "unk_id", "model_type", "normalizer name", "charsmap",
        "remove_extra_whitespaces", "trainer_spec"])
def test_a_sentencepiece_field_of_the_wrong_wire_type_is_one_line(tmp_path, capsys, damaged, match):
    (tmp_path / "sp.model").write_bytes(damaged)
    one_line_error(["inspect", tmp_path / "sp.model"], capsys, match)


def test_a_huge_varint_in_an_int32_field_is_read_as_protobuf_reads_it(tmp_path):
    """Protobuf keeps an int32's low 32 bits: 2**64 - 1 is -1 (no pad piece), 2**32 + 1 is 1."""
    (tmp_path / "a.model").write_bytes(sp_model(trainer=_field(43, 0, _varint(2**64 - 1))))
    assert load_any(tmp_path / "a.model").roles.pad is None
    (tmp_path / "b.model").write_bytes(sp_model(trainer=_field(40, 0, _varint(2**32))))  # unk_id 0
    assert load_any(tmp_path / "b.model").encode("a") == [1]


def _exported(tmp_path, fmt: str, name: str):
    export(trained(5), fmt, tmp_path / name)
    return tmp_path / name


def unigram_json(tmp_path) -> dict:
    from tokworkbench.core.unigram import UnigramConfig, UnigramLearner

    learner = UnigramLearner([TEXT], UnigramConfig(seed_size=80))
    list(learner.run(vocab_size=learner.base_size + 10))
    export(learner.model(), "hf", tmp_path / "hfuni.json")
    return json.loads((tmp_path / "hfuni.json").read_text(encoding="utf-8"))


def test_huge_integers_in_unigram_scores_are_one_line(tmp_path, capsys):
    doc = unigram_json(tmp_path)
    text = json.dumps(doc).replace(json.dumps(doc["model"]["vocab"][3][1]), "9" * 400, 1)
    (tmp_path / "huge.json").write_text(text, encoding="utf-8")
    one_line_error(["inspect", tmp_path / "huge.json"], capsys, "scores must be finite numbers")


def test_an_hf_unigram_normalizer_that_is_a_string_is_one_line(tmp_path, capsys):
    doc = unigram_json(tmp_path)
    doc["normalizer"] = "NFC"
    (tmp_path / "nfc.json").write_text(json.dumps(doc), encoding="utf-8")
    one_line_error(["inspect", tmp_path / "nfc.json"], capsys, "'normalizer' must be an object or null, not a JSON string")


@pytest.mark.parametrize("rank", [b"9" * 5000, b"9" * 400, b"18446744073709551616", b"4294967296"],
                         ids=["5000 digits", "400 digits", "2**64", "2**32"])
def test_huge_tiktoken_ranks_are_one_line(tmp_path, capsys, rank):
    path = _exported(tmp_path, "tiktoken", "t.tiktoken")
    lines = path.read_bytes().split(b"\n")
    lines[200] = lines[200].split(b" ")[0] + b" " + rank
    path.write_bytes(b"\n".join(lines))
    (tmp_path / "t.tiktoken.json").unlink()
    one_line_error(["inspect", path, "--split", "gpt4"], capsys, "is larger than 4,294,967,295")


@pytest.mark.parametrize("where", ["merge", "special", "count"])
def test_huge_minbpe_numbers_are_one_line(tmp_path, capsys, where):
    path = _exported(tmp_path, "minbpe", "m.model")
    lines = path.read_text(encoding="utf-8").split("\n")
    if where == "merge":
        lines[-2] = "9" * 5000 + " 1"
    elif where == "special":
        lines[3] = "<|eot|> " + "9" * 5000
    else:
        lines[2] = "9" * 5000
    path.write_text("\n".join(lines), encoding="utf-8")
    one_line_error(["inspect", path], capsys, "(5,000 digits) is larger than")
