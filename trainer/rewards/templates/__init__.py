"""Built-in reward functions, one self-contained module each (stdlib only).

Each module is both the built-in's implementation and the studio's "new from
template" source: `builtin_source(name)` returns the file's text unchanged, so what
a user starts from is exactly what the built-in runs.
"""
