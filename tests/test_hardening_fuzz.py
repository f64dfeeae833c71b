"""Issue 10, fuzzing: damaged model files of every format load, or fail with our error class.

Valid files (our JSON in byte and char units, HF tokenizer.json, tiktoken ranks with their
companion, minbpe) are mutated by byte flips, truncations, inserted bytes and JSON value swaps;
whatever loads is then used (encode, decode, token text, export checks), which must not raise
anything else either. The mutations that know each format's structure (and the SentencePiece
.model, HF Unigram and .npz count files) are in test_hardening_fuzz_structure.py.
"""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutations import set_at

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.export import FORMATS, check, export
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.text import pretokenize

TEXT = "the cat sat on the mat, the hat 123 — ÄÖÜ 😀 " * 10
PROBE = "the cat 12 ÄÖ <|eot|> 😀 x"
FUZZ = settings(max_examples=120, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _model(units: str):
    t = Trainer([TEXT], TrainConfig(units=units, pre_tokenizer=pre_tokenizer("gpt4"), special_tokens=("<|eot|>",)))
    list(t.run(merges=12))
    return t.model()


@pytest.fixture(scope="module")
def originals(tmp_path_factory):
    """name -> {file name: bytes} of each valid file set."""
    root = tmp_path_factory.mktemp("originals")
    byte, char = _model("byte"), _model("char")
    modelfile.save(byte, root / "byte.json")
    modelfile.save(char, root / "char.json")
    export(byte, "hf", root / "hf.json")
    export(char, "hf", root / "hfchar.json")
    export(byte, "tiktoken", root / "t.tiktoken")
    export(byte, "minbpe", root / "m.model")
    read = lambda *names: {n: (root / n).read_bytes() for n in names}  # noqa: E731
    return {
        "ours-byte": read("byte.json"), "ours-char": read("char.json"), "hf": read("hf.json"),
        "hf-char": read("hfchar.json"), "tiktoken": read("t.tiktoken", "t.tiktoken.json"), "minbpe": read("m.model"),
    }


@pytest.fixture(autouse=True)
def quick_pattern_timeout(monkeypatch):
    """A damaged pattern may backtrack: fail fast (the timeout is what is being tested)."""
    monkeypatch.setattr(pretokenize, "PATTERN_TIMEOUT", 0.2)


# -- mutations -----------------------------------------------------------------------------------
JSON_VALUES = st.one_of(
    st.sampled_from([None, True, False, 0, -1, 1, 255, 256, 2**31, 2**63, -(2**63), 1.5, float("inf"), "",
                     "x", "\ud800", "a b", "Ġ", "byte", "char", "gpt4", "custom", "(a|aa)+c", "\\", [], {},
                     [0], [0, 1], [1, 0], [[97, 97]], {"a": 1}, "minbpe v1", "tokworkbench"]),
    st.integers(min_value=-3, max_value=400),
    st.text(max_size=6),
)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:40]):
            yield from _paths(v, prefix + (i,))


@st.composite
def json_swap(draw, data: bytes) -> bytes:
    doc = json.loads(data)
    paths = list(_paths(doc))
    path = draw(st.sampled_from(paths))
    if draw(st.booleans()) and isinstance(doc, dict):
        other = draw(st.sampled_from(paths))
        value = doc
        for key in other:
            value = value[key]
        value = json.loads(json.dumps(value))  # swap in a copy of another part of the file
    else:
        value = draw(JSON_VALUES)
    text = json.dumps(set_at(doc, path, value), ensure_ascii=draw(st.booleans()))
    return text.encode("utf-8", "surrogatepass")  # a lone surrogate unescaped: bytes that are not UTF-8


@st.composite
def byte_edits(draw, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate"]))
        at = draw(st.integers(0, max(len(out) - 1, 0)))
        if kind == "flip" and out:
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set" and out:
            out[at] = draw(st.sampled_from(b' \n"{}[],:0129-aA\\\xff\x00'))
        elif kind == "insert":
            out[at:at] = draw(st.sampled_from([b"9" * 30, b"[", b"\xef\xbb\xbf", b"\n", b" 0", b"\\u", b"-"]))
        elif kind == "delete" and out:
            del out[at : at + draw(st.integers(1, 8))]
        elif kind == "truncate":
            del out[at:]
    return bytes(out)


def mutated(data: bytes, is_json: bool):
    choices = [byte_edits(data)] + ([json_swap(data)] if is_json else [])
    return st.one_of(*choices)


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


def load_or_our_error(folder, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (folder / name).write_bytes(data)
    try:
        tok = load_any(folder / next(iter(files)))
    except TokWorkbenchError:
        return
    use(tok)


@pytest.mark.parametrize("kind", ["ours-byte", "ours-char", "hf", "hf-char", "minbpe"])
def test_a_mutated_file_loads_or_fails_with_our_error(tmp_path, originals, kind):
    (name, data), = originals[kind].items()

    @FUZZ
    @given(mutated(data, is_json=name.endswith(".json")))
    def run(damaged):
        load_or_our_error(tmp_path, {name: damaged})

    run()


def test_mutated_tiktoken_ranks_and_companion_load_or_fail_with_our_error(tmp_path, originals):
    files = originals["tiktoken"]
    ranks, side = files["t.tiktoken"], files["t.tiktoken.json"]

    @FUZZ
    @given(st.one_of(
        mutated(ranks, is_json=False).map(lambda r: (r, side)),
        mutated(side, is_json=True).map(lambda s: (ranks, s)),
        mutated(side, is_json=True).map(lambda s: (ranks, json.dumps({**json.loads(side), "ranks_sha256": None})
                                                   .encode() if s == side else s)),
    ))
    def run(pair):
        load_or_our_error(tmp_path, {"t.tiktoken": pair[0], "t.tiktoken.json": pair[1]})

    run()


def test_the_originals_load(tmp_path, originals):
    """The fuzz starts from files that are valid, so a refusal is the mutation's doing."""
    for files in originals.values():
        for name, data in files.items():
            (tmp_path / name).write_bytes(data)
        load_any(tmp_path / next(iter(files)))
