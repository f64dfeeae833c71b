"""HF's JSON reader (serde_json without float_roundtrip) reads some scores an ulp off, and some
doubles it cannot read at all. Where two segmentations tie to the ulp, HF's ids then differ
("1,000"); the export says so rather than nothing (closing the gap is left: see the notes)."""

import json

from tokworkbench.cli import main
from tokworkbench.core.text.samples import sample_paths
from tokworkbench.core.unigram.hffloat import hf_score


def test_an_export_whose_scores_hf_reads_otherwise_says_so(tmp_path, capsys):
    model, out = tmp_path / "u.json", tmp_path / "u_hf.json"
    assert main(["train", "--kind", "unigram", "--split", "metaspace", "--vocab-size", "3000", "-o", str(model),
                 *map(str, sample_paths())]) == 0
    capsys.readouterr()
    assert main(["export", "-m", str(model), "--format", "hf", "-o", str(out)]) == 0
    said = capsys.readouterr()


    scores = [s for _, s in json.loads(model.read_text(encoding="utf-8"))["pieces"]]
    off = sum(hf_score(s) != s for s in scores)
    assert off and f"HF reads {off:,} of the {len(scores):,} scores an ulp off" in said.out + said.err
