"""The BPE engine: the incremental trainer, its flat chunk store, tie-breaks, and encoding by rank."""
