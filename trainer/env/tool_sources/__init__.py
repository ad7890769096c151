"""Source of the built-in tools: standalone modules run in the sandbox."""
