"""WordPiece: BERT's greedy longest-match-first vocabulary, with `##` continuations (not trained here)."""
