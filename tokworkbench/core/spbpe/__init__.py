"""SentencePiece's BPE (Llama 2, Mistral, Gemma): scored pieces merged best score first, with
byte fallback. Read from a `.model` file (or its tokenizer.json form), not trained here."""
