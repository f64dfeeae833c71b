"""The BPE kind: the incremental trainer, its model and model file, tie-breaks, and encoding by rank."""
