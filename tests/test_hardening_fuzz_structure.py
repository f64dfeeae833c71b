"""Issue 28, structure-aware fuzzing: every reader, fed files damaged where their structure is
(wrong JSON types at every path of ours (BPE, Unigram, fixed), HF's and the companion, huge numbers, deep nesting; protobuf fields of the wrong wire
type, huge varints, lengths past the end; npz members of the wrong dtype or shape, lying .npy
headers, counts that overflow), gives a loaded model or one TokWorkbenchError of one line:
never another exception, never a hang, never a huge allocation.

Seeded random, a few hundred mutations a format, so the whole file runs in seconds; set
TOKWORKBENCH_FUZZ_SEED to draw other mutations (a longer hunt, by hand). Whatever
loads is used (encode, decode, export checks; a count file is trained on for one merge).
"""

import io
import json
import os
import random
import struct
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.formats import modelfile
from tokworkbench.core.formats.countfile import from_bytes as counts_from_bytes, to_bytes as counts_to_bytes
from tokworkbench.core.formats.export import FORMATS, check, export
from tokworkbench.core.formats.load import load_any
from tokworkbench.core.models.fixed import FixedVocab
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.text import pretokenize
from tokworkbench.core.text.chunks import count_chunks
from tokworkbench.core.unigram import UnigramConfig, UnigramLearner

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
TEXT = "the cat sat on the mat, the hat 123 — ÄÖÜ 😀 " * 10
PROBE = "the cat 12 ÄÖ <|eot|> 😀 x\t\x01 ▁y"
SEED = os.environ.get("TOKWORKBENCH_FUZZ_SEED", "")
MAX_PEAK = 64 << 20  # what the readers may allocate at most while reading these small files
DEEP = 200_000  # nesting far past any recursion limit


def _paths(doc, prefix=()):
    """Every path into a JSON document (the first 40 items of each list or object)."""
    yield prefix
    if isinstance(doc, dict):
        for k in list(doc)[:40]:
            yield from _paths(doc[k], prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:40]):
            yield from _paths(v, prefix + (i,))


HUGE_INT = "9" * 400
BAD_JSON = [None, True, False, 0, -1, 1.5, -(2**63) - 1, 2**63, 2**64, 10**30, "", "x", "NFC", "Sequence",
            "Unigram", "BPE", "\u2581", [], {}, [[]], [0, 1], [["a", 0.0]], {"type": "NFC"},
            {"type": "Sequence", "normalizers": "NFC"}, {"type": "Sequence", "normalizers": ["NFC"]},
            {"type": "Precompiled", "precompiled_charsmap": 5}, {"type": "Replace", "pattern": "x", "content": 1},
            {"type": "Metaspace"}, {"Regex": 1}, {"String": None}, "@HUGE", "@-HUGE", "@HUGEFLOAT", "@DEEP"]


TYPE_SWAPS = [None, True, "NFC", 2**64, "@HUGE", 1e308, [], {}, [["x"]], {"type": None}, "@DEEP", -1]


def _set(doc, path, value):
    if not path:
        return value
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return doc


def json_mutations(data: bytes, rng: random.Random, extra: int):
    """Each path once with a random bad value, then `extra` random (path, value) pairs; huge
    numbers and deep nesting are spliced in as text (json.dumps would refuse or recurse)."""
    doc = json.loads(data)
    paths = list(_paths(doc))
    turn = rng.randrange(len(TYPE_SWAPS))
    chosen = [(p, TYPE_SWAPS[(turn + k) % len(TYPE_SWAPS)]) for k, p in enumerate(paths)]  # each path another type
    chosen += [(p, rng.choice(BAD_JSON)) for p in paths]
    chosen += [(rng.choice(paths), rng.choice(BAD_JSON)) for _ in range(extra)]
    for path, value in chosen:
        marker = value if isinstance(value, str) and value.startswith("@") else None
        text = json.dumps(_set(json.loads(data), path, "@MARK" if marker else value), ensure_ascii=False)
        if marker:
            spliced = {"@HUGE": HUGE_INT, "@-HUGE": "-" + HUGE_INT, "@HUGEFLOAT": HUGE_INT + ".5e300",
                       "@DEEP": "[" * DEEP + "]" * DEEP}[marker]
            text = text.replace('"@MARK"', spliced, 1)
        yield f"{path} = {marker or repr(value)[:40]}", text.encode("utf-8")


# -- protobuf ------------------------------------------------------------------------------------
def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def parse_fields(data: bytes) -> list[list]:
    """[number, wire, value] of a valid message (the originals only)."""
    out, pos = [], 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(data, pos)
        elif wire == 2:
            size, pos = _read_varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        else:
            width = 4 if wire == 5 else 8
            value, pos = data[pos : pos + width], pos + width
        out.append([number, wire, value])
    return out


def encode_fields(fields) -> bytes:
    out = bytearray()
    for number, wire, value in fields:
        out += _varint(number << 3 | wire)
        if wire == 0:
            out += value if isinstance(value, bytes) else _varint(value)
        elif wire == 2:
            out += _varint(len(value)) + value
        else:
            out += value
    return bytes(out)


WIRE_VALUES = {0: [0, 1, 2**31, 2**63, 2**64 - 1, 2**70], 1: [b"\xff" * 8, struct.pack("<d", float("nan"))],
               2: [b"", b"\xff\xfe", b"\x0a\x03abc", b"\x08" + b"\xff" * 9 + b"\x7f"],
               5: [struct.pack("<f", float("inf")), struct.pack("<f", 1e30), b"\x00\x00\xc0\x7f"]}


def sp_mutations(data: bytes, rng: random.Random, count: int):
    """Top-level fields and the fields inside pieces, trainer_spec and normalizer_spec: given
    another wire type, a huge varint, a length past the end, an 11-byte varint, repeated,
    removed, nested deeply; the file cut short."""
    top = parse_fields(data)
    for k in range(count):
        fields = [list(f) for f in top]
        # pieces, trainer_spec and normalizer_spec alike (there are a hundred pieces to one of each spec)
        numbers = sorted({f[0] for f in fields})
        number_at = rng.choice(numbers)
        where = rng.choice([i for i, f in enumerate(fields) if f[0] == number_at])
        target = fields
        inner = None
        if fields[where][1] == 2 and fields[where][0] in (1, 2, 3) and rng.random() < 0.8:
            inner = parse_fields(fields[where][2])
            if inner:
                target = inner
        at = rng.randrange(len(target))
        kind = rng.choice(["wire", "wire", "huge", "length", "overlong", "repeat", "drop", "deep", "cut"])
        number = target[at][0]
        if kind == "wire":
            wire = rng.choice([w for w in WIRE_VALUES if w != target[at][1]])
            target[at] = [number, wire, rng.choice(WIRE_VALUES[wire])]
        elif kind == "huge":
            target[at] = [number, 0, rng.choice([2**64 - 1, 2**63, 2**32 + 5])]
        elif kind == "length":
            target[at] = [number, 0, _varint(rng.choice([2**62, 2**31, 1000]))]  # a length-delimited key below
            target[at][1] = 2
            target[at][2] = b""
        elif kind == "overlong":
            target[at] = [number, 0, b"\xff" * 10 + b"\x01"]
        elif kind == "repeat":
            target.insert(at, list(target[at]))
        elif kind == "drop":
            del target[at]
        elif kind == "deep":
            nested = b""
            for _ in range(3000):
                nested = encode_fields([[1, 2, nested]])
            target[at] = [number, 2, nested]
        if inner is not None and kind != "cut":
            fields[where][2] = encode_fields(inner)
        raw = encode_fields(fields)
        if kind == "length":  # a field whose declared length runs past the end
            raw = raw + _varint(1 << 3 | 2) + _varint(rng.choice([2**62, 2**31, 50]))
        if kind == "cut":
            raw = raw[: rng.randrange(1, len(raw))]
        yield f"{kind} field {number} of {'inner ' + str(fields[where][0]) if inner is not None else 'top'}", raw


# -- text formats --------------------------------------------------------------------------------
def line_mutations(data: bytes, rng: random.Random, count: int, numbers=True):
    """Lines of a ranks or minbpe file with numbers made huge, negative, not numbers; lines
    repeated, removed, cut; the file cut short."""
    lines = data.split(b"\n")
    for _ in range(count):
        out = list(lines)
        at = rng.randrange(len(out))
        kind = rng.choice(["number", "number", "number", "repeat", "drop", "cut", "blank"])
        if kind == "number":
            fields = out[at].split(b" ")
            j = len(fields) - 1 if rng.random() < 0.7 else rng.randrange(len(fields))  # most often the number
            fields[j] = rng.choice([HUGE_INT.encode(), b"9" * 5000, b"-1", b"18446744073709551616",
                                    b"9223372036854775807", b"1e9", b"", b"\xff", b"0x10"])
            out[at] = b" ".join(fields)
        elif kind == "repeat":
            out.insert(at, out[at])
        elif kind == "drop":
            del out[at]
        elif kind == "cut":
            out[at] = out[at][: len(out[at]) // 2]
        else:
            out[at] = b""
        yield f"{kind} line {at}", b"\n".join(out)


# -- npz -----------------------------------------------------------------------------------------
def npy(array: np.ndarray | None = None, descr=None, shape=None, fortran=False, version=(1, 0),
        body: bytes | None = None) -> bytes:
    header = {"descr": descr if descr is not None else np.lib.format.dtype_to_descr(array.dtype),
              "fortran_order": fortran, "shape": shape if shape is not None else array.shape}
    text = repr(header).encode("latin1")
    text += b" " * (63 - (len(text) + 10) % 64) + b"\n"
    size = struct.pack("<H", len(text)) if version == (1, 0) else struct.pack("<I", len(text))
    return b"\x93NUMPY" + bytes(version) + size + text + (body if body is not None else array.tobytes())


def npz(members: dict[str, bytes]) -> bytes:
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name + ".npy", data)
    return out.getvalue()


def count_mutations(data: bytes, rng: random.Random, extra: int):
    """The header's JSON at every path; each array swapped for another dtype, shape or content,
    its .npy header lying about its shape, an object dtype, a huge count."""
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    raw = {k: npy(v) for k, v in arrays.items()}
    for what, header in json_mutations(arrays["header"].tobytes(), rng, extra):
        yield f"header {what}", npz({**raw, "header": npy(np.frombuffer(header, dtype=np.uint8))})
    n = len(arrays["counts"])
    swaps = {
        "float counts": npy(arrays["counts"].astype(np.float64)),
        "int32 ends": npy(arrays["chunk_ends"].astype(np.int32)),
        "big-endian counts": npy(arrays["counts"].astype(">i8")),
        "2-d counts": npy(arrays["counts"].reshape(1, n)),
        "0-d counts": npy(np.array(5, dtype=np.int64)),
        "object counts": npy(descr="|O", shape=(n,), body=b"\x80\x04K\x01."),
        "lying shape": npy(arrays["counts"], shape=(1 << 40,)),
        "lying shape 2": npy(arrays["chunk_bytes"], shape=(2**63 - 1,)),
        "negative shape": npy(arrays["counts"], shape=(-1,)),
        "fortran 2-d": npy(arrays["counts"].reshape(n, 1), fortran=True),
        "version 3": npy(arrays["counts"], version=(3, 0)),
        "version 2": npy(arrays["counts"], version=(2, 0)),
        "huge count": npy(np.full(n, 2**63 - 1, dtype=np.int64)),
        "zero count": npy(np.zeros(n, dtype=np.int64)),
        "negative count": npy(np.full(n, -(2**63), dtype=np.int64)),
        "ends backwards": npy(arrays["chunk_ends"][::-1].copy()),
        "ends past the bytes": npy(arrays["chunk_ends"] + 10**15),
        "ends negative": npy(-arrays["chunk_ends"]),
        "header not uint8": npy(arrays["header"].astype(np.int64)),
        "bytes not utf-8": npy(np.full(len(arrays["chunk_bytes"]), 0xFF, dtype=np.uint8)),
        "deep descr": npy(arrays["counts"], descr=[("a", "<i8")] * 1),
        "nested descr": b"\x93NUMPY\x01\x00" + struct.pack("<H", 9000) + b"{" + b"(" * 8990 + b"\n" * 8,
        "cut header": npy(arrays["counts"])[:20],
        "no body": npy(arrays["counts"], body=b""),
    }
    keys = {"float counts": "counts", "int32 ends": "chunk_ends", "big-endian counts": "counts", "2-d counts": "counts",
            "0-d counts": "counts", "object counts": "counts", "lying shape": "counts", "lying shape 2": "chunk_bytes",
            "negative shape": "counts", "fortran 2-d": "counts", "version 3": "counts", "version 2": "counts",
            "huge count": "counts", "zero count": "counts", "negative count": "counts", "ends backwards": "chunk_ends",
            "ends past the bytes": "chunk_ends", "ends negative": "chunk_ends", "header not uint8": "header",
            "bytes not utf-8": "chunk_bytes", "deep descr": "counts", "nested descr": "counts",
            "cut header": "counts", "no body": "counts"}
    for name, member in swaps.items():
        yield name, npz({**raw, keys[name]: member})
    for name in raw:
        yield f"no {name}", npz({k: v for k, v in raw.items() if k != name})
    yield "not a zip", b"PK\x03\x04" + bytes(100)
    yield "empty zip", npz({})


# -- the originals -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def originals(tmp_path_factory):
    """name -> {file name: bytes}, every file valid."""
    root = tmp_path_factory.mktemp("originals")
    out = {}

    def bpe(units):
        t = Trainer([TEXT], TrainConfig(units=units, pre_tokenizer=pre_tokenizer("gpt4"), special_tokens=("<|eot|>",)))
        list(t.run(merges=12))
        return t.tokenizer()

    byte, char = bpe("byte"), bpe("char")
    modelfile.save(byte, root / "byte.json")
    modelfile.save(char, root / "char.json")
    export(byte, "hf", root / "hf.json")
    export(byte, "tiktoken", root / "t.tiktoken")
    export(byte, "minbpe", root / "m.model")
    learner = UnigramLearner([TEXT], UnigramConfig(seed_size=120))
    list(learner.run(vocab_size=learner.base_size + 20))
    modelfile.save(learner.model(), root / "uni.json")
    export(learner.model(), "hf", root / "hfuni.json")
    (root / "controls.tsv").write_text("1\t\n9\t20\n", encoding="ascii")
    (root / "en.txt").write_text((SAMPLES / "01_en_genesis_kjv.txt").read_text(encoding="utf-8")[:30000],
                                 encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(root / "en.txt"), model_prefix=str(root / "sp"),
                                   vocab_size=120, model_type="unigram", minloglevel=2, user_defined_symbols=["<sep>"],
                                   normalization_rule_tsv=str(root / "controls.tsv"))
    sp = load_any(root / "sp.model")
    hf_uni = json.loads((root / "hfuni.json").read_bytes())
    hf_uni["normalizer"] = {"type": "Sequence", "normalizers": [
        sp.text_normalizer.to_hf()["normalizers"][0], {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        {"type": "Strip", "strip_left": False, "strip_right": True}, {"type": "NFKC"}, {"type": "Lowercase"}]}
    (root / "hfnorm.json").write_text(json.dumps(hf_uni), encoding="utf-8")
    modelfile.save(sp, root / "spours.json")  # our file with a model_normalizer
    modelfile.save(FixedVocab(("<s>", "</s>", "<unk>", "the", " cat", "a", "t", " "), Roles(bos="<s>", unk="<unk>")),
                   root / "fixed.json")
    (root / "c.npz").write_bytes(counts_to_bytes(count_chunks([TEXT], "none", pre_tokenizer("gpt4")), "none",
                                                 pre_tokenizer("gpt4")))
    read = lambda *names: {n: (root / n).read_bytes() for n in names}  # noqa: E731
    out.update({"ours-byte": read("byte.json"), "ours-char": read("char.json"), "ours-unigram": read("uni.json"),
                "ours-sp": read("spours.json"), "ours-fixed": read("fixed.json"), "hf-bpe": read("hf.json"), "hf-unigram": read("hfuni.json"),
                "hf-unigram-normalizer": read("hfnorm.json"), "tiktoken": read("t.tiktoken", "t.tiktoken.json"),
                "minbpe": read("m.model"), "sentencepiece": read("sp.model"), "counts": read("c.npz")})
    return out


@pytest.fixture(autouse=True)
def quick_pattern_timeout(monkeypatch):
    """A damaged pattern may backtrack: fail fast (the timeout is what is being tested)."""
    monkeypatch.setattr(pretokenize, "PATTERN_TIMEOUT", 0.2)


# -- the property --------------------------------------------------------------------------------
def use(tok) -> None:
    """Whatever loaded must also work, or fail with our error class."""
    try:
        ids = tok.encode(PROBE, allowed_special="all")
        tok.decode(ids, errors="replace")
        for i in ids[:5]:
            tok.token_text(i)
    except TokWorkbenchError:
        pass
    for fmt in FORMATS:
        try:
            check(tok, fmt)
        except TokWorkbenchError:
            pass


def load_model(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (folder / name).write_bytes(data)
    use(load_any(folder / next(iter(files))))


def load_counts(data: bytes) -> None:
    counted, normalizer, pre = counts_from_bytes(data)
    t = Trainer([], TrainConfig(normalizer=normalizer, pre_tokenizer=pre), counted=counted)
    list(t.run(merges=1))


def failures(cases, load) -> list[str]:
    """The cases that raised anything but one line of TokWorkbenchError, or allocated too much."""
    bad = []
    for what, args in cases:
        tracemalloc.start()
        try:
            load(*args)
        except TokWorkbenchError as exc:
            if "\n" in str(exc) or not str(exc):
                bad.append(f"{what}: not one line: {str(exc)[:200]!r}")
        except Exception as exc:  # noqa: BLE001 - what the test is looking for
            bad.append(f"{what}: {type(exc).__name__}: {str(exc)[:200]}")
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        if peak > MAX_PEAK:
            bad.append(f"{what}: allocated {peak:,} bytes")
    return bad


JSON_KINDS = ["ours-byte", "ours-char", "ours-unigram", "ours-sp", "ours-fixed", "hf-bpe", "hf-unigram", "hf-unigram-normalizer"]


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_json_files_damaged_at_every_path(tmp_path, originals, kind):
    (name, data), = originals[kind].items()
    rng = random.Random(f"json-{kind}" + SEED)
    cases = [(what, (tmp_path, {name: damaged})) for what, damaged in json_mutations(data, rng, 60)]
    bad = failures(cases, load_model)
    assert not bad, "\n".join(bad)


def test_sentencepiece_models_damaged_in_their_protobuf(tmp_path, originals):
    data = originals["sentencepiece"]["sp.model"]
    rng = random.Random("sentencepiece" + SEED)
    cases = [(what, (tmp_path, {"sp.model": damaged})) for what, damaged in sp_mutations(data, rng, 400)]
    bad = failures(cases, load_model)
    assert not bad, "\n".join(bad)


def test_tiktoken_ranks_and_companions_damaged(tmp_path, originals):
    files = originals["tiktoken"]
    ranks, side = files["t.tiktoken"], files["t.tiktoken.json"]
    no_hash = json.dumps({**json.loads(side), "ranks_sha256": None}).encode()
    rng = random.Random("tiktoken" + SEED)
    cases = [(what, (tmp_path, {"t.tiktoken": r, "t.tiktoken.json": no_hash}))
             for what, r in line_mutations(ranks, rng, 150)]
    cases += [(what, (tmp_path, {"t.tiktoken": ranks, "t.tiktoken.json": s}))
              for what, s in json_mutations(no_hash, rng, 40)]
    bad = failures(cases, load_model)
    assert not bad, "\n".join(bad)


def test_minbpe_files_damaged(tmp_path, originals):
    data = originals["minbpe"]["m.model"]
    rng = random.Random("minbpe" + SEED)
    cases = [(what, (tmp_path, {"m.model": damaged})) for what, damaged in line_mutations(data, rng, 150)]
    bad = failures(cases, load_model)
    assert not bad, "\n".join(bad)


def test_count_files_damaged_in_their_structure(originals):
    data = originals["counts"]["c.npz"]
    rng = random.Random("counts" + SEED)
    cases = [(what, (damaged,)) for what, damaged in count_mutations(data, rng, 40)]
    bad = failures(cases, load_counts)
    assert not bad, "\n".join(bad)


def test_the_originals_load(tmp_path, originals):
    """The fuzz starts from files that are valid, so a refusal is the mutation's doing."""
    for kind, files in originals.items():
        if kind == "counts":
            load_counts(files["c.npz"])
        else:
            load_model(tmp_path, files)
