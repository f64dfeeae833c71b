"""Text in: reading the corpus, normalizing, pre-tokenizing, and counting chunks (in parallel)."""
