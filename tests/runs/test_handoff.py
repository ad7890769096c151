"""A job's secret file: written before the job is submitted, in the job's own folder,
for the trainer account alone, and never through a symlink the trainer account (which
owns the folders under the checkpoint root) could have planted there."""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

import pytest

from studio.platform.trainer_account import DEFAULT_TRAINER_OS_USER, trainer_os_user
from studio.runs.handoff import HandoffRefused, SecretHandoff

SECRET = "rlb_" + "5" * 64


@pytest.fixture
def root(settings, tmp_path: Path) -> Path:
    settings.RLSTUDIO_CHECKPOINT_ROOT = str(tmp_path / "checkpoints")
    return tmp_path / "checkpoints"


def handoff() -> SecretHandoff:
    return SecretHandoff(folders=("run-7",), name=".bootstrap-a1", secret=SECRET)


def test_the_file_is_the_trainers_alone_in_a_folder_made_for_it(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RLSTUDIO_TRAINER_OS_USER", "root")  # trainers run as ourselves
    handoff().deliver()

    path = root / "run-7" / ".bootstrap-a1"
    assert path.read_text() == SECRET
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.stat().st_uid == path.parent.stat().st_uid == os.geteuid()
    assert [p.name for p in path.parent.iterdir()] == [".bootstrap-a1"]  # no leftovers


@pytest.mark.skipif(os.geteuid() != 0, reason="only root gives files to another account")
def test_a_root_studio_gives_the_file_and_the_folder_to_the_trainer_account(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RLSTUDIO_TRAINER_OS_USER", raising=False)
    # Created when missing, as `rlstudio up` does: the test never depends on another
    # test having made it first.
    assert trainer_os_user() == DEFAULT_TRAINER_OS_USER
    account = pwd.getpwnam(DEFAULT_TRAINER_OS_USER)
    monkeypatch.setenv("RLSTUDIO_TRAINER_OS_USER", DEFAULT_TRAINER_OS_USER)

    handoff().deliver()

    path = root / "run-7" / ".bootstrap-a1"
    for owned in (path, path.parent):
        assert (owned.stat().st_uid, owned.stat().st_gid) == (account.pw_uid, account.pw_gid)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_launch_submitted_again_replaces_the_file_whole(root: Path) -> None:
    handoff().deliver()
    handoff().deliver()

    assert (root / "run-7" / ".bootstrap-a1").read_text() == SECRET
    assert len(list((root / "run-7").iterdir())) == 1


def test_a_symlink_planted_at_the_files_name_is_replaced_not_written_through(
    root: Path, tmp_path: Path
) -> None:
    target = tmp_path / "studio-file"
    target.write_text("the studio's own")
    (root / "run-7").mkdir(parents=True)
    (root / "run-7" / ".bootstrap-a1").symlink_to(target)

    handoff().deliver()

    assert target.read_text() == "the studio's own"
    path = root / "run-7" / ".bootstrap-a1"
    assert not path.is_symlink() and path.read_text() == SECRET


def test_a_symlink_planted_in_place_of_the_folder_is_refused(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root.mkdir()
    (root / "run-7").symlink_to(elsewhere)

    with pytest.raises(HandoffRefused, match="could not be written"):
        handoff().deliver()

    assert list(elsewhere.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can make another account's folder")
def test_a_folder_of_another_account_is_refused(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RLSTUDIO_TRAINER_OS_USER", "root")
    (root / "run-7").mkdir(parents=True)
    nobody = pwd.getpwnam("nobody")
    os.chown(root / "run-7", nobody.pw_uid, nobody.pw_gid)

    with pytest.raises(HandoffRefused, match="not to trainers"):
        handoff().deliver()

    assert list((root / "run-7").iterdir()) == []


def test_withdrawing_removes_the_file_of_a_job_that_will_not_start(root: Path) -> None:
    handoff().deliver()
    handoff().withdraw()
    handoff().withdraw()  # already gone: nothing to do

    assert list((root / "run-7").iterdir()) == []


def test_the_environment_carries_the_secret_only_when_the_operator_says_so(
    root: Path, settings
) -> None:
    assert handoff().job_env() == {"RLSTUDIO_BOOTSTRAP_FILE": str(root / "run-7/.bootstrap-a1")}
    settings.RLSTUDIO_BOOTSTRAP_VIA_ENV = True
    handoff().deliver()
    assert handoff().job_env() == {"RLSTUDIO_BOOTSTRAP": SECRET}
    assert not root.exists()
