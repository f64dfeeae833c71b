"""Unigram LM: the course's pruning algorithm step by step, and SentencePiece-style EM."""
