"""The offline demo: a tiny tokenizer and Llama model warm-started on toy arithmetic, its
toy datasets, a demo reward model and a tools model. Built by our code (`python -m trainer
make-demo-model`), never downloaded; no library module depends on it."""
