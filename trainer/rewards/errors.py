"""Errors shared by the loader and the sandbox (a leaf module: imports nothing)."""


class RewardCodeError(ValueError):
    """The reward code cannot be used; the message says what is wrong and where."""


class InvalidReturn(ValueError):
    """A user function's return value that is not a reward."""


class SandboxUnavailableError(RuntimeError):
    """The sandbox cannot start here (or not with the protections it was asked for)."""
