"""Other libraries' files: Hugging Face tokenizer.json (BPE, Unigram), SentencePiece, tiktoken, minbpe, and the presets."""
