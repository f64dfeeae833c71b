"""Files: our model format, Hugging Face, tiktoken and minbpe, and the atomic writes under them."""
