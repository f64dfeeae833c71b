"""Structure-aware mutations of tokenizer files, for the fuzz tests: JSON with wrong types at
every path, huge numbers and deep nesting spliced in as text; protobuf fields re-encoded with
another wire type, huge or overlong varints, lengths past the end; ranks and minbpe lines with
huge numbers; npz archives whose members have other dtypes, shapes, lying .npy headers."""

import io
import json
import random
import struct
import zipfile

import numpy as np

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


def set_at(doc, path, value):
    """`doc` with the value at `path` replaced (the root itself for an empty path)."""
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
        text = json.dumps(set_at(json.loads(data), path, "@MARK" if marker else value), ensure_ascii=False)
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
    c, e, b, h = arrays["counts"], arrays["chunk_ends"], arrays["chunk_bytes"], arrays["header"]
    swaps = [  # (what, member, its damaged .npy)
        ("float counts", "counts", npy(c.astype(np.float64))), ("int32 ends", "chunk_ends", npy(e.astype(np.int32))),
        ("big-endian counts", "counts", npy(c.astype(">i8"))), ("2-d counts", "counts", npy(c.reshape(1, n))),
        ("0-d counts", "counts", npy(np.array(5, dtype=np.int64))),
        ("object counts", "counts", npy(descr="|O", shape=(n,), body=b"\x80\x04K\x01.")),
        ("lying shape", "counts", npy(c, shape=(1 << 40,))), ("lying shape", "chunk_bytes", npy(b, shape=(2**63 - 1,))),
        ("negative shape", "counts", npy(c, shape=(-1,))), ("fortran 2-d", "counts", npy(c.reshape(n, 1), fortran=True)),
        ("version 3", "counts", npy(c, version=(3, 0))), ("version 2", "counts", npy(c, version=(2, 0))),
        ("huge count", "counts", npy(np.full(n, 2**63 - 1, dtype=np.int64))),
        ("zero count", "counts", npy(np.zeros(n, dtype=np.int64))),
        ("negative count", "counts", npy(np.full(n, -(2**63), dtype=np.int64))),
        ("ends backwards", "chunk_ends", npy(e[::-1].copy())), ("ends past the bytes", "chunk_ends", npy(e + 10**15)),
        ("ends negative", "chunk_ends", npy(-e)), ("header not uint8", "header", npy(h.astype(np.int64))),
        ("bytes not utf-8", "chunk_bytes", npy(np.full(len(b), 0xFF, dtype=np.uint8))),
        ("structured dtype", "counts", npy(c, descr=[("a", "<i8")])),
        ("nested descr", "counts", b"\x93NUMPY\x01\x00" + struct.pack("<H", 9000) + b"{" + b"(" * 8990 + b"\n" * 8),
        ("cut header", "counts", npy(c)[:20]), ("no body", "counts", npy(c, body=b"")),
    ]
    for what, name, member in swaps:
        yield f"{what} ({name})", npz({**raw, name: member})
    for name in raw:
        yield f"no {name}", npz({k: v for k, v in raw.items() if k != name})
    yield "not a zip", b"PK\x03\x04" + bytes(100)
    yield "empty zip", npz({})
