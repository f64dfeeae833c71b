"""Issue 28, item 7: a SentencePiece model exported to HF gives SentencePiece's ids, or the export
is refused saying why. HF's Precompiled applies a map per grapheme cluster and SentencePiece by
longest match, which agree on every text only for a map of single control characters; the
whitespace rule is written as regex Replaces (HF's converter writes Strip, which also strips
tabs, CR and NBSP and keeps a ▁ at the end). Models are trained here with sentencepiece."""

import ast
import random
from pathlib import Path

import pytest

from tokworkbench.cli import main
from tokworkbench.core.errors import ExportError
from tokworkbench.core.registry.export import export
from tokworkbench.core.registry.load import load_any

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")
tokenizers = pytest.importorskip("tokenizers")

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
TRAIN = ["01_en_genesis_kjv.txt", "03_udhr_article1.txt", "05_zh_debian_installer.txt", "07_ko_debian_installer.txt",
         "08_ru_fortunes.txt", "11_el_debian_installer.txt", "04_emoji_symbols_numbers.txt"]
WHITESPACE = list(" \t\n\r\x0b\x01\xa0\u2009\u3000\u2581\u0301\u200d") * 4
TRICKY = ["  lead", "trail   ", "a    b", "tab\there\t", "cr\r\n", "x\r", "x ▁", "▁", "\u2581\u2581a", " ▁x",
          "no\u00a0break\u00a0", "a\u3000", "\t", "", " ", "ctrl\x01\x0b x\x01", "e\u0301 \u0301"]


def random_strings(n: int, seed: int = 28) -> list[str]:
    """Half slices of the training text, half draws from its characters and every kind of space."""
    text = "".join((SAMPLES / name).read_text(encoding="utf-8") for name in TRAIN)
    alphabet = sorted(set(text)) + WHITESPACE
    rng = random.Random(seed)
    out = []
    for k in range(n):
        if k % 2:
            out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))))
        else:
            at = rng.randrange(len(text))
            out.append(text[at : at + rng.randint(1, 60)])
    return out


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("sphf")
    (out / "controls.tsv").write_text("1\t\n9\t20\nB\t20\n", encoding="ascii")  # \x01 dropped, \t \v a space

    def train(name: str, **kwargs) -> Path:
        spm.SentencePieceTrainer.train(input=",".join(str(SAMPLES / n) for n in TRAIN), model_prefix=str(out / name),
                                       vocab_size=1000, model_type="unigram", character_coverage=0.995,
                                       minloglevel=2, **kwargs)
        return out / f"{name}.model"

    return {"nmt_nfkc": train("nmt_nfkc"), "nfkc_cf": train("nfkc_cf", normalization_rule_name="nfkc_cf"),
            "identity": train("identity", normalization_rule_name="identity"),
            "controls": train("controls", normalization_rule_tsv=str(out / "controls.tsv"))}


@pytest.mark.parametrize("name", ["identity", "controls"])
def test_an_exported_sentencepiece_model_gives_sentencepiece_ids(trained, tmp_path, name):
    path = trained[name]
    sp = spm.SentencePieceProcessor(model_file=str(path))
    export(load_any(path), "hf", tmp_path / "t.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "t.json"))
    texts = TRICKY + random_strings(1500)
    differ = [t for t in texts if hf.encode(t, add_special_tokens=False).ids != sp.encode(t)]
    assert differ == [], f"{len(differ)} of {len(texts)} differ, e.g. {differ[:3]!r}"
    again = load_any(tmp_path / "t.json")  # the exported file read back with HF's rule: the same ids
    assert [t for t in texts[:300] if again.encode(t) != sp.encode(t)] == []


@pytest.mark.parametrize("name", ["nmt_nfkc", "nfkc_cf"])
def test_a_map_hf_applies_otherwise_is_refused_in_one_line(trained, tmp_path, capsys, name):
    """HF's rule gave other ids than SentencePiece on some of these strings; the export said so
    in a note and wrote the file anyway."""
    status = main(["export", "-m", str(trained[name]), "--format", "hf", "-o", str(tmp_path / "t.json")])
    err = [line for line in capsys.readouterr().err.splitlines() if line]
    assert status == 1 and len(err) == 1 and "per grapheme cluster" in err[0], err
    assert "SentencePiece by longest match" in err[0] and not (tmp_path / "t.json").exists()


def test_the_refusal_names_a_text_that_really_differs(trained, tmp_path):
    """The example in the message is one where HF's own normalizer and SentencePiece's disagree."""
    model = load_any(trained["nmt_nfkc"])
    with pytest.raises(ExportError) as caught:
        export(model, "hf", tmp_path / "t.json")
    probe = ast.literal_eval(str(caught.value).split(": ", 1)[1].split(" becomes ")[0])  # the ascii() literal it names
    hf_rule = tokenizers.normalizers.Precompiled(model.text_normalizer.charsmap.blob)
    sp = spm.SentencePieceProcessor(model_file=str(trained["nmt_nfkc"]))
    assert hf_rule.normalize_str(probe).strip() != sp.normalize(probe).replace("\u2581", " ").strip()
