"""write_text_atomically (mechdesign/release/atomic_write.py), used by ``estimate -o`` and ``privatize -o``:
the whole text or the old file, never a temporary file left behind, errors as one-line InputErrors."""

import os
import stat

import pytest

from mechdesign.release.atomic_write import write_text_atomically
from mechdesign.spec.errors import InputError


def test_replaces_an_existing_file_with_the_whole_text(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old contents that are longer than the new ones\n")
    write_text_atomically("a,b\n1,é\n", str(target), prefix=".test-")
    assert target.read_bytes() == "a,b\n1,é\n".encode("utf-8")  # UTF-8, no newline translation
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_a_missing_folder_is_an_input_error_naming_the_file(tmp_path):
    missing = tmp_path / "no-such-dir" / "out.csv"
    with pytest.raises(InputError, match=r"^-o: cannot write .*no-such-dir.*out\.csv: "):
        write_text_atomically("x\n", str(missing), prefix=".test-")


def test_a_failed_rename_removes_the_temporary_file_and_keeps_the_old_target(tmp_path):
    target = tmp_path / "taken"
    target.mkdir()  # os.replace of a file onto a folder fails (IsADirectoryError)
    (target / "inside").write_text("kept")
    with pytest.raises(InputError, match=r"^-o: cannot write "):
        write_text_atomically("x\n", str(target), prefix=".test-")
    assert (target / "inside").read_text() == "kept"
    assert not list(tmp_path.glob(".test-*"))
