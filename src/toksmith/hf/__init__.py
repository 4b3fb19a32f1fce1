"""Hugging Face tokenizer.json support: typed components, the reader, model folders, the pipeline."""
