"""thirtyone_env.harness.files: atomic writes with the user's umask, no-replace writes,
destination probes and the folder lock that keeps two runs out of one folder."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from thirtyone_env.harness.files import FolderLock, atomic_write, check_new_file, check_writable_dir


def test_atomic_write_keeps_the_umask_and_leaves_no_temporary_file(tmp_path):
    old = os.umask(0o027)
    try:
        path = atomic_write(tmp_path / "a" / "x.json", "{}")
    finally:
        os.umask(old)
    assert path.read_text() == "{}" and path.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in path.parent.iterdir()) == ["x.json"]


def test_a_no_replace_write_never_replaces_a_file_that_appeared(tmp_path):
    path = tmp_path / "record.jsonl"
    path.write_text("someone else's")
    with pytest.raises(ValueError, match="exists: refusing to replace it"):
        atomic_write(path, "mine", replace=False)
    assert path.read_text() == "someone else's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record.jsonl"]  # the temporary file is gone
    assert atomic_write(tmp_path / "new.jsonl", "mine", replace=False).read_text() == "mine"


def test_destinations_are_probed(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        check_writable_dir(tmp_path / "f" / "sub")
    with pytest.raises(ValueError, match="longer than 255 bytes"):
        check_writable_dir(tmp_path / ("x" * 300))
    with pytest.raises(ValueError, match="exists: refusing to replace it"):
        check_new_file(tmp_path / "f")
    with pytest.raises(ValueError, match="is a folder"):
        check_new_file(tmp_path)
    with pytest.raises(ValueError, match="file names take at most 255"):
        check_new_file(tmp_path / ("y" * 300))
    assert check_new_file(tmp_path / "g") == tmp_path / "g"


def test_the_folder_lock_refuses_a_second_process_and_dies_with_its_holder(tmp_path):
    folder = tmp_path / "run"
    probe = (
        f"from thirtyone_env.harness.files import FolderLock; FolderLock({str(folder)!r}, 'run').acquire()"
    )
    with FolderLock(folder, "run"):
        r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
        assert r.returncode == 1 and "run " in r.stderr and "is in use by another running process" in r.stderr
        with pytest.raises(ValueError, match="in use"):
            FolderLock(folder, "run").acquire()  # a second holder in the same process too
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr  # released; a holder that exits releases it as well
    with FolderLock(folder, "run"):
        pass


def test_json_text_writes_strict_json():
    """No ``NaN`` or ``Infinity`` literal (an interval of one sample, a ratio of zero
    variances): they are ``null``; numpy numbers and tuples are plain JSON."""
    import json
    import math

    import numpy as np

    from thirtyone_env.harness.files import json_ready, json_text

    data = {
        "low": math.nan,
        "ratio": np.float64("inf"),
        "n": np.int64(3),
        "pair": (1.5, -math.inf),
        2: Path("a"),
    }
    text = json_text(data)
    assert "NaN" not in text and "Infinity" not in text and text.endswith("\n")
    assert json.loads(text) == {"low": None, "ratio": None, "n": 3, "pair": [1.5, None], "2": "a"}
    assert json_ready({"x": [np.float32(0.5)]}) == {"x": [0.5]}
