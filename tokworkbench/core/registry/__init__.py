"""Where the kinds are found: the `Kind` records (kinds.py), our model file across kinds
(modelfile.py), opening any tokenizer file by its content (load.py) and exporting (export.py)."""
