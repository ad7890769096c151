"""A checkpoint is a whole folder or nothing: one cut short by a cancel leaves no part."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trainer.reporting.lifecycle import RunCancelled
from trainer.training import checkpoint


def test_a_checkpoint_cut_short_by_a_cancel_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cut_short(tmp: Path, *args: Any) -> None:
        (tmp / "actor.pt").write_bytes(b"half a state dict")
        raise RunCancelled()  # SIGTERM's handler, mid-save

    monkeypatch.setattr(checkpoint, "_write_checkpoint", cut_short)
    with pytest.raises(RunCancelled):
        checkpoint.save_checkpoint(None, None, 2, {}, tmp_path)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
    assert checkpoint.latest_checkpoint(tmp_path) is None
