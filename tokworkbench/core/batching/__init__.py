"""From documents to training batches: the id stream, windows shifted by one, padded rows.

`batch.py` cuts batches (pure numpy); `files.py` writes them (JSON, NPZ). Both work for every
model kind through the `Model` protocol and models/roles.py.
"""

from tokworkbench.core.batching.batch import IGNORE, MODES, Batch, BatchSpec, document_ids, document_stream, make_batch
from tokworkbench.core.batching.files import save_json, save_npz, to_json

__all__ = ["IGNORE", "MODES", "Batch", "BatchSpec", "document_ids", "document_stream", "make_batch",
           "save_json", "save_npz", "to_json"]
