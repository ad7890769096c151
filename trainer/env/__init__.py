"""Multi-turn environments and tool use: the protocol, tool calls, sandboxed tools,
and the episode rollout (docs/multi-turn.md)."""
