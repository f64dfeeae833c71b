"""A batch as JSON (lists of ids) or NPZ (int64 arrays, a bool mask), written atomically.

Both carry the tokenizer's fingerprint, so a training pipeline can refuse ids from another
tokenizer. NPZ loads with `numpy.load(path)` (no pickle: the fingerprint is a unicode array).
"""

import io
import json
from pathlib import Path

import numpy as np

from tokworkbench.core.batching.batch import Batch, check_writable_as_text
from tokworkbench.core.files.atomic import write_atomic


def to_json(batch: Batch) -> dict:
    """inputs, targets, starts and the fingerprint; a padded batch adds attention_mask (1 on
    real ids, 0 on PAD), valid_targets and uniform_loss."""
    check_writable_as_text(batch)
    out = {
        "fingerprint": batch.fingerprint,
        "mode": batch.spec.mode,
        "context": batch.spec.context,
        "vocab_size": batch.vocab_size,
        "inputs": batch.inputs.tolist(),
        "targets": batch.targets.tolist(),
        "starts": batch.starts.tolist(),
    }
    if batch.attention_mask is not None:
        out["attention_mask"] = batch.attention_mask.astype(np.int64).tolist()
        out["valid_targets"] = batch.valid_targets
        out["uniform_loss"] = batch.uniform_loss
    return out


def npz_arrays(batch: Batch) -> dict[str, np.ndarray]:
    arrays = {"inputs": batch.inputs, "targets": batch.targets, "starts": batch.starts,
              "fingerprint": np.array(batch.fingerprint)}
    if batch.attention_mask is not None:
        arrays["attention_mask"] = batch.attention_mask
        arrays["valid_targets"] = np.array(batch.valid_targets, np.int64)
        arrays["uniform_loss"] = np.array(np.nan if batch.uniform_loss is None else batch.uniform_loss, np.float64)
    return arrays


def save_npz(batch: Batch, path: str | Path) -> Path:
    """Write the batch as NPZ through a temp file (see files/atomic.py); OutputError if not."""
    buf = io.BytesIO()
    np.savez(buf, **npz_arrays(batch))
    return write_atomic(path, buf.getvalue())


def save_json(batch: Batch, path: str | Path) -> Path:
    return write_atomic(path, (json.dumps(to_json(batch)) + "\n").encode("utf-8"))
