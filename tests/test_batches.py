"""Windows and padded batches over the document stream: shapes, shifts, masks, -100 targets,
the uniform loss ln V (checked with a numpy cross-entropy), random starts by seed, files."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.core.batching import IGNORE, BatchSpec, document_stream, make_batch, save_npz, to_json
from tokworkbench.core.compat import fingerprint
from tokworkbench.core.errors import BatchError, RoleError
from tokworkbench.core.fixed.model import FixedVocab
from tokworkbench.core.models.roles import Roles, encode_document

VOCAB = ("<s>", "</s>", "<pad>", "<unk>", "我", "喜欢", "学习", "机器", "机器学习", "。", "你", "好")
ROLES = Roles(bos="<s>", eos="</s>", pad="<pad>", unk="<unk>")
MODEL = FixedVocab(VOCAB, ROLES)
TEXTS = ["我喜欢机器学习。", "你好。", "我喜欢学习"]
PIECES = st.lists(st.sampled_from(["我", "喜欢", "学习", "机器", "。", "你", "好", "x"]), max_size=12).map("".join)


def cross_entropy(logits: np.ndarray, targets: np.ndarray, ignore_index: int = IGNORE) -> float:
    """torch.nn.functional.cross_entropy(logits.view(-1, V), targets.view(-1), ignore_index=-100),
    written in numpy: the mean of -log softmax at the target over the targets not ignored."""
    flat = logits.reshape(-1, logits.shape[-1]).astype(np.float64)
    t = targets.reshape(-1)
    keep = t != ignore_index
    shifted = flat - flat.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return float(-logp[keep, t[keep]].mean())


def test_stream_is_every_document_with_boundaries_in_order():
    s = document_stream(MODEL, TEXTS)
    assert s.dtype == np.int64
    assert s.tolist() == [i for t in TEXTS for i in encode_document(MODEL, t)]
    assert s.tolist()[:7] == [0, 4, 5, 8, 9, 1, 0]


def test_windows_at_given_starts():
    b = make_batch(MODEL, TEXTS, BatchSpec(4, "starts", (0, 5)))
    s = document_stream(MODEL, TEXTS)
    assert b.inputs.tolist() == [s[0:4].tolist(), s[5:9].tolist()]
    assert b.targets.tolist() == [s[1:5].tolist(), s[6:10].tolist()]
    assert b.inputs.dtype == b.targets.dtype == b.starts.dtype == np.int64
    assert b.attention_mask is None and b.valid_targets == 8 and b.uniform_loss is None
    assert b.fingerprint == fingerprint(MODEL)


def test_strided_windows_stop_where_a_whole_window_no_longer_fits():
    n = len(document_stream(MODEL, TEXTS))  # 17
    b = make_batch(MODEL, TEXTS, BatchSpec(4, "stride", stride=3))
    assert b.starts.tolist() == list(range(0, n - 4, 3))
    assert make_batch(MODEL, TEXTS, BatchSpec(4, "stride", stride=3, batch=2)).starts.tolist() == [0, 3]


def test_random_starts_are_reproduced_by_the_seed_and_drawn_from_the_whole_range():
    n = len(document_stream(MODEL, TEXTS))
    spec = BatchSpec(5, "random", batch=200, seed=7)
    b = make_batch(MODEL, TEXTS, spec)
    expected = np.random.default_rng(7).integers(0, n - 5, size=200)
    assert b.starts.tolist() == expected.tolist()
    assert set(b.starts.tolist()) == set(range(n - 5))  # 0 … len−T−1, both ends reached
    assert make_batch(MODEL, TEXTS, spec).inputs.tolist() == b.inputs.tolist()
    assert make_batch(MODEL, TEXTS, BatchSpec(5, "random", batch=200, seed=8)).starts.tolist() != b.starts.tolist()


@settings(max_examples=80, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=5), st.integers(1, 12), st.integers(1, 6), st.integers(0, 2**32))
def test_targets_are_inputs_shifted_by_one(texts, t, b, seed):
    n = len(document_stream(MODEL, texts))
    if n <= t:
        with pytest.raises(BatchError, match=f"needs at least {t + 1} ids"):
            make_batch(MODEL, texts, BatchSpec(t, "random", batch=b, seed=seed))
        return
    batch = make_batch(MODEL, texts, BatchSpec(t, "random", batch=b, seed=seed))
    assert batch.shape == (b, t)
    assert (batch.targets[:, :-1] == batch.inputs[:, 1:]).all()
    s = document_stream(MODEL, texts)
    for row, start in enumerate(batch.starts):
        assert 0 <= start <= n - t - 1
        assert batch.targets[row, -1] == s[start + t]


# -- padded documents ----------------------------------------------------------------------------
def test_padded_rows_cut_pad_mask_and_ignore():
    b = make_batch(MODEL, TEXTS, BatchSpec(5, "pad"))
    assert b.inputs.tolist() == [[0, 4, 5, 8, 9],      # 6 ids, cut to 5
                                 [0, 10, 11, 9, 1],    # exactly 5
                                 [0, 4, 5, 6, 1]]
    assert b.targets.tolist() == [[4, 5, 8, 9, 1],     # the last target is still the document's next id
                                  [10, 11, 9, 1, IGNORE],
                                  [4, 5, 6, 1, IGNORE]]
    b = make_batch(MODEL, ["你好", "我"], BatchSpec(5, "pad"))
    assert b.inputs.tolist() == [[0, 10, 11, 1, 2], [0, 4, 1, 2, 2]]
    assert b.targets.tolist() == [[10, 11, 1, IGNORE, IGNORE], [4, 1, IGNORE, IGNORE, IGNORE]]
    assert b.attention_mask.tolist() == [[True] * 4 + [False], [True] * 3 + [False] * 2]
    assert b.valid_targets == 5
    assert b.starts.tolist() == [0, 4]  # where each document starts in the stream


@settings(max_examples=80, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=6), st.integers(1, 10))
def test_mask_and_ignored_targets_agree(texts, t):
    b = make_batch(MODEL, texts, BatchSpec(t, "pad"))
    mask, targets = b.attention_mask, b.targets
    pad = MODEL.special_ids["<pad>"]
    assert ((b.inputs == pad) == ~mask).all()           # PAD exactly where the mask is 0
    assert (targets[~mask] == IGNORE).all()             # nothing is predicted from PAD
    assert ((targets[:, :-1] != IGNORE) == mask[:, 1:]).all()  # a target is valid iff its next position is real
    for row, text in enumerate(texts):
        doc = encode_document(MODEL, text)
        assert (targets[row, -1] != IGNORE) == (len(doc) > t)
    assert b.valid_targets == int((targets != IGNORE).sum())


@settings(max_examples=40, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=6), st.integers(1, 10))
def test_uniform_logits_give_ln_v_under_ignore_index(texts, t):
    b = make_batch(MODEL, texts, BatchSpec(t, "pad"))
    v = MODEL.vocab_size
    loss = cross_entropy(np.zeros((*b.shape, v)), b.targets)
    assert b.uniform_loss == pytest.approx(math.log(v)) and loss == pytest.approx(b.uniform_loss)


def test_numpy_cross_entropy_is_right_on_a_known_case():
    logits = np.log(np.array([[[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]]))
    assert cross_entropy(logits, np.array([[0, IGNORE]])) == pytest.approx(math.log(2))
    assert cross_entropy(logits, np.array([[1, 2]])) == pytest.approx((math.log(4) - math.log(0.8)) / 2)


def test_allowed_is_causal_and_padding_together():
    b = make_batch(MODEL, ["我", "你好"], BatchSpec(4, "pad"))
    assert b.allowed(0).astype(int).tolist() == [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 0]]
    t = b.shape[1]
    for row in range(2):
        a = b.allowed(row)
        for i in range(t):
            for j in range(t):
                assert a[i, j] == (j <= i and b.attention_mask[row, j])
    w = make_batch(MODEL, TEXTS, BatchSpec(3, "starts", (0,)))
    assert (w.allowed(0) == np.tri(3, dtype=bool)).all()
    with pytest.raises(BatchError, match="row 5 is out of range"):
        b.allowed(5)


# -- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, match", [
    (dict(context=0), "the context T must be a whole number of at least 1"),
    (dict(context=-3), "at least 1"),
    (dict(context=4, mode="random", batch=0), "the batch size B must be"),
    (dict(context=4, mode="random"), "random starts need the batch size B"),
    (dict(context=4, mode="stride", stride=0), "the stride K"),
    (dict(context=4, mode="starts"), "give at least one start"),
    (dict(context=4, mode="starts", starts=(-1,)), "start -1 is out of range"),
    (dict(context=4, mode="windows"), "unknown batch mode"),
])
def test_bad_specs_are_one_clear_error(kwargs, match):
    with pytest.raises(BatchError, match=match):
        BatchSpec(**kwargs)


def test_starts_past_the_end_and_short_streams():
    n = len(document_stream(MODEL, TEXTS))
    with pytest.raises(BatchError, match=f"start {n - 4} is out of range: with {n} ids and a context of 4, "
                                         f"starts go from 0 to {n - 5}"):
        make_batch(MODEL, TEXTS, BatchSpec(4, "starts", (0, n - 4)))
    with pytest.raises(BatchError, match=f"the stream has {n} ids; a context of {n} needs at least {n + 1} ids"):
        make_batch(MODEL, TEXTS, BatchSpec(n, "stride"))
    make_batch(MODEL, TEXTS, BatchSpec(n - 1, "stride"))  # exactly T+1 ids: one window
    with pytest.raises(BatchError, match="no documents"):
        make_batch(MODEL, [], BatchSpec(2, "pad"))


def test_padded_batches_need_pad():
    with pytest.raises(RoleError, match="padded batches need a PAD token"):
        make_batch(FixedVocab(VOCAB, Roles(bos="<s>")), TEXTS, BatchSpec(4, "pad"))


# -- files ---------------------------------------------------------------------------------------
def test_npz_and_json_hold_the_batch(tmp_path):
    b = make_batch(MODEL, TEXTS, BatchSpec(5, "pad"))
    save_npz(b, tmp_path / "b.npz")
    with np.load(tmp_path / "b.npz", allow_pickle=False) as z:
        assert set(z.files) == {"inputs", "targets", "starts", "attention_mask", "valid_targets", "uniform_loss",
                                "fingerprint"}
        assert z["inputs"].dtype == z["targets"].dtype == z["starts"].dtype == np.int64
        assert z["attention_mask"].dtype == bool
        assert (z["targets"] == b.targets).all() and (z["attention_mask"] == b.attention_mask).all()
        assert int(z["valid_targets"]) == b.valid_targets and str(z["fingerprint"]) == fingerprint(MODEL)
    doc = json.loads(json.dumps(to_json(b)))
    assert doc["attention_mask"][2] == [1, 1, 1, 1, 1] and doc["targets"][1][-1] == -100
    assert doc["valid_targets"] == b.valid_targets and doc["uniform_loss"] == pytest.approx(math.log(12))
    w = to_json(make_batch(MODEL, TEXTS, BatchSpec(3, "starts", (1,))))
    assert "attention_mask" not in w and w["fingerprint"] == fingerprint(MODEL) and w["starts"] == [1]


def test_batch_arrays_are_read_only():
    b = make_batch(MODEL, TEXTS, BatchSpec(3, "starts", (1,)))
    with pytest.raises(ValueError):
        b.inputs[0, 0] = 5


def test_an_encoding_error_names_the_document():
    from tokworkbench.core.errors import EncodeError

    no_unk = FixedVocab(VOCAB, Roles(bos="<s>", eos="</s>"))
    with pytest.raises(EncodeError, match=r"^document 1: no token of this fixed vocabulary matches at offset 0"):
        make_batch(no_unk, ["我", "AI"], BatchSpec(2, "stride"))
