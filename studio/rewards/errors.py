"""Why a reward test-run could not produce its rows (shown to the user, with a code)."""

from __future__ import annotations


class TestRunError(Exception):
    """A test-run fails with this message; `code` is a stable machine-readable reason
    (`dataset_unreadable`, `model_unavailable`, `sampling_failed`, `sampling_time_limit`)."""

    __test__ = False  # not a pytest test class, whatever its name says

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
