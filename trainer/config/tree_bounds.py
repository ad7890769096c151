"""How deep and how large a JSON-like tree may be: every JSON body the studio parses, and
every config before it is copied, merged or validated (a request's, a YAML file's, a
stored one being cloned).

Deep copies, merges, YAML and JSON encoders and schema validation all recurse once per
level and run out of Python's recursion limit (1,000 frames, two or three a level)
somewhere between 300 and 1,000 levels, as a server error. So the bound is checked here,
iteratively, before any of them runs. Stdlib only: the studio's JSON parser imports it.
"""

from __future__ import annotations

from typing import Any

# Objects and arrays inside each other: `{"a": [1]}` is 2 deep. No config comes close
# (reward.kwargs, the freest section, allows 8); leaves the copies and checks that follow
# hundreds of frames of headroom.
MAX_DEPTH = 64
# Values (containers and scalars) in one config: far above any real one (a few hundred),
# and far below what a YAML file's aliases can expand to (a "billion laughs").
MAX_CONFIG_VALUES = 100_000

CONTAINERS = (dict, list, tuple)


def tree_problem(tree: Any, max_values: int | None = MAX_CONFIG_VALUES) -> str:
    """Why `tree` is nested deeper than MAX_DEPTH or holds more than `max_values` values
    (None: no count), or ''. Stops at the first problem, so a shared subtree repeated
    without end (YAML aliases) costs at most `max_values` steps."""
    if not isinstance(tree, CONTAINERS):
        return ""
    pending: list[tuple[Any, int]] = [(tree, 1)]
    seen = 1
    while pending:
        node, depth = pending.pop()
        if depth > MAX_DEPTH:
            return f"is nested more than {MAX_DEPTH} levels deep (objects and arrays)"
        children = node.values() if isinstance(node, dict) else node
        seen += len(children)
        if max_values is not None and seen > max_values:
            return f"holds more than {max_values:,} values"
        pending.extend((child, depth + 1) for child in children if isinstance(child, CONTAINERS))
    return ""
