"""Scratch folders and the removal of a run's folders in the background."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from passbench.stages.sandbox.host.workdirs import ScratchFolders, remove_in_background


def filled(folder: Path, files: int = 50) -> Path:
    (folder / "deep" / "er").mkdir(parents=True)
    for index in range(files):
        (folder / "deep" / "er" / f"f{index}").write_text("x")
    return folder


def test_folders_are_removed_in_a_thread_the_interpreter_waits_for(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept").write_text("kept")
    first = filled(tmp_path / "one")
    second = filled(tmp_path / "two")
    (second / "link").symlink_to(outside)  # a link is removed, never followed
    remover = remove_in_background([first, second, tmp_path / "absent"])
    assert isinstance(remover, threading.Thread)
    assert not remover.daemon
    remover.join(30)
    assert not first.exists() and not second.exists()
    assert (outside / "kept").read_text() == "kept"


def test_a_scratch_folder_closed_in_the_background_goes(tmp_path: Path) -> None:
    scratch = ScratchFolders(tmp_path / "root")
    worker = scratch.for_worker(0, mode=0o700)
    filled(worker)
    assert scratch.path.is_dir()
    remover = scratch.close_in_background()
    assert not remover.daemon
    remover.join(30)
    assert not scratch.path.exists()
    assert os.listdir(tmp_path / "root") == []
    scratch.close()  # once is enough: closing again is harmless
