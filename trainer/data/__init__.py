"""Datasets: readers (verl parquet, JSONL, prompt/answer tables), prompt encoding,
the resumable sampler and the toy datasets of the demo.

Importing this package stays cheap: `formats`, `toy` and `sampler` need only
pyarrow/numpy, so the studio can read and preview datasets without torch.
`prompts` (tokenisation) pulls transformers and is imported explicitly.
"""
