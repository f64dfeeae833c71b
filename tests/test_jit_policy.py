"""core/jit.py's bar: a process loads numba only once it has asked for enough work, and the
result is the same either side of it. Each case runs in a process of its own, without the
conftest's TOKWORKBENCH_JIT_FROM=0, since whether numba is loaded is a fact about a process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tokworkbench.core import jit
from tokworkbench.core.text import fastsplit

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not jit._importable(), reason="numba is not installed here")

PROGRAM = r"""
import json, pathlib, sys
from tokworkbench.core.text.pretokenize import pre_tokenizer

texts = [p.read_text(encoding="utf-8") for p in sorted(pathlib.Path("sample_texts").glob("*.txt"))]
pre = pre_tokenizer("gpt4")
counts = pre.counts("\n".join(texts))
loaded_after_counting = "numba" in sys.modules
pre.split(" ".join(texts) * int(sys.argv[1]))
print(json.dumps({"counted_with_numba": loaded_after_counting, "numba_at_end": "numba" in sys.modules,
                  "counts": sorted(counts.items())[:2000]}))
"""


def run(times: int, program: str = PROGRAM, **env) -> dict:
    environ = {k: v for k, v in os.environ.items() if k != jit.FROM_VARIABLE}
    environ.update(env)
    done = subprocess.run([sys.executable, "-c", program, str(times)], cwd=ROOT, env=environ,
                          capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout)


def test_small_work_takes_the_numpy_path_and_enough_loads_numba():
    small = run(1)  # the sample texts once: well under the bar
    assert not small["counted_with_numba"] and not small["numba_at_end"]
    big = run(12)  # about 1.3 MB of text in one split: over it
    assert not big["counted_with_numba"] and big["numba_at_end"]
    forced = run(1, **{jit.FROM_VARIABLE: "0"})
    assert forced["counted_with_numba"]
    assert small["counts"] == big["counts"] == forced["counts"]


def test_a_bad_bar_is_the_default():
    env = {jit.FROM_VARIABLE: "lots"}
    assert not run(1, **env)["numba_at_end"]


def test_the_bar_is_the_work_asked_for_in_all_and_counting_asks_once():
    program = r"""
import json, sys
from tokworkbench.core import jit
from tokworkbench.core.text import fastsplit
from tokworkbench.core.text.pretokenize import pre_tokenizer

text = "Small calls, many of them: a corpus of short documents. " * 2000
pre_tokenizer("gpt4").counts(text)
charged = jit._Asked.total
answers = [jit.available(200_000) for _ in range(5)]
print(json.dumps({"chars": len(text), "charged": charged, "answers": answers, "numba": "numba" in sys.modules}))
"""
    got = run(0, program)
    assert got["charged"] == got["chars"]  # counted once, not by each decision on the way
    total = got["chars"]
    expected = []
    for _ in range(5):
        total += 200_000
        expected.append(total >= jit.WORTH_FROM)
    assert got["answers"] == expected and expected[-1] and not expected[0]
    assert got["numba"]


def test_the_split_tables_wait_for_the_same_bar():
    """fastsplit's class tables (0.1-0.2 s to build) are built once a process has asked to split
    about a megabyte; before that `regex` splits, chunk for chunk the same."""
    program = r"""
import json, pathlib, regex
from tokworkbench.core.text import fastsplit, unicodeclasses
from tokworkbench.core.text.patterns import PRESETS

text = " ".join(p.read_text(encoding="utf-8") for p in sorted(pathlib.Path("sample_texts").glob("*.txt")))
same = [fastsplit.split_llama3(text) == regex.findall(PRESETS["llama3"], text)]
built = [unicodeclasses.tables.cache_info().currsize]
big = text * 12
same.append(fastsplit.split_llama3(big) == regex.findall(PRESETS["llama3"], big))
built.append(unicodeclasses.tables.cache_info().currsize)
print(json.dumps({"same": same, "built": built, "chars": [len(text), len(big)]}))
"""
    got = run(0, program, TOKWORKBENCH_NO_JIT="1")  # the numpy scan's own decision
    assert got["chars"][0] > fastsplit.FAST_FROM and got["chars"][0] + got["chars"][1] > jit.WORTH_FROM
    assert got["same"] == [True, True]
    assert got["built"] == [0, 1]
