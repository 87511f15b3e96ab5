# SPDX-License-Identifier: MIT
"""A full disk never harms the job: the recording's filesystem fills up mid-run, the command still runs to the
end with its exit status passed through, jobscope says once how many samples it could not record, the summary
still covers the whole run, and what was recorded before the disk filled stays readable."""
import sqlite3
import subprocess
import uuid

import pytest

from conftest import PYTHON, assert_no_crash


@pytest.fixture
def small_fs(tmp_path):
    """A 384 KiB tmpfs (a few commits of the run below fill it); skipped where mounting is not allowed."""
    mnt = tmp_path / f"full-{uuid.uuid4().hex[:8]}"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=384k", "tmpfs", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_full_disk_keeps_job_and_summary(js, small_fs):
    rec = small_fs / "run.db"
    summary = js.path("full.summary.json")
    # ~2 s of 8 processes that keep working, sampled at 10 ms: their rows change at every sample (a process's
    # row is stored when it changes), far more than the file system holds
    busy = "import time\nt = time.time()\nwhile time.time() - t < 2:\n    sum(range(2000))\n    time.sleep(0.003)"
    cmd = [PYTHON, "-c", "import subprocess,sys\n"
           f"ps=[subprocess.Popen([sys.executable, '-c', {busy!r}]) for _ in range(8)]\n"
           "[p.wait() for p in ps]\nraise SystemExit(3)"]
    proc = js("run", "-i", "10ms", "-o", rec, "--summary-json", summary, "--", *cmd, timeout=60)
    assert_no_crash(proc)
    assert proc.returncode == 3, proc.stderr  # the job's status, not a monitor failure
    lines = [l for l in proc.stderr.splitlines() if "could not be recorded" in l]
    assert len(lines) == 1, proc.stderr
    import json
    s = json.loads(summary.read_text())
    assert s["monitor"]["write_errors"] > 0
    assert s["wall_time_s"] >= 1.9
    assert s["processes"]["max_concurrent"] >= 9  # the summary saw samples the recording could not hold
    assert s["samples"]["taken"] > 100  # about 200 at 10 ms; fewer if the machine is busy
    # what was recorded is intact and readable
    con = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stored = con.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
    con.close()
    assert 0 < stored < s["samples"]["taken"]
    out = js("summary", "--json", rec)
    assert_no_crash(out)
    assert out.returncode == 0, out.stderr
