"""The chat playground: a project's models and checkpoints answering chat messages, each
from a model server (a Ray job) the studio starts, feeds and releases (docs/evaluate.md)."""
