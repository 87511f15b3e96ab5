# SPDX-License-Identifier: MIT
"""A full disk never harms the job: the recording's filesystem fills up mid-run, the command still runs to the
end with its exit status passed through, jobscope says once how many samples it could not record, the summary
still covers the whole run, and what was recorded before the disk filled stays readable."""
import os
import sqlite3
import subprocess
import uuid
from pathlib import Path

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


# ---- every output onto a full disk (docs/RELIABILITY.md, "shared node", 9) ---------------------------------
#
# Before: HDF5 crashed (rc 139 in H5F__close_cb, from the library's exit handler closing again a file whose
# close had failed), CSV and JSONL left a truncated file under the final name (300 KB of a 300 KB tmpfs).
# Now every output is written under a temporary name beside it and renamed when complete and synced: a
# failure leaves the final name as it was (absent, or the old file under --force) and no temporary.

def synth_recording(js, tmp_path, hours="1"):
    build = Path(os.environ.get("JOBSCOPE_BUILD", js.binary.rsplit("/", 1)[0]))
    synth = build / "bench" / "synth_recording"
    if not synth.exists():
        pytest.skip(f"{synth} not built")
    rec = tmp_path / "synth.db"
    subprocess.run([str(synth), str(rec), hours, "1"], check=True, capture_output=True, timeout=120)
    return rec


def hdf5_available():
    try:
        import ctypes.util
        return any(ctypes.util.find_library(n) for n in ("hdf5_serial", "hdf5"))
    except Exception:
        return False


def assert_refused_cleanly(proc, final, fs, before=()):
    assert_no_crash(proc)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and "No space left on device" in lines[0], proc.stderr
    assert sorted(p.name for p in fs.iterdir()) == sorted(before), list(fs.iterdir())  # no temporary left
    return lines[0]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "hdf5"])
def test_export_onto_a_full_disk(js, small_fs, tmp_path, fmt):
    if fmt == "hdf5" and not hdf5_available():
        pytest.skip("no HDF5 library")
    rec = synth_recording(js, tmp_path)
    out = small_fs / f"out.{fmt}"
    args = ["export", "--format", fmt, "-o", out] + ([] if fmt == "hdf5" else ["--scope", "process"]) + [rec]
    p = js(*args, timeout=120)
    assert_refused_cleanly(p, out, small_fs)
    assert not out.exists()
    # --force over an existing file: the old one stays whole
    out.write_text("the old file\n")
    p = js(*args[:1], "--force", *args[1:], timeout=120)
    assert_refused_cleanly(p, out, small_fs, before=[out.name])
    assert out.read_text() == "the old file\n"


def test_report_and_run_outputs_onto_a_full_disk(js, small_fs, tmp_path):
    rec = synth_recording(js, tmp_path)
    for args, name in ((["report", "-o", small_fs / "r.html", rec], "r.html"),
                       (["compare", "-o", small_fs / "c.html", rec, rec], "c.html")):
        p = js(*args, timeout=120)
        assert_refused_cleanly(p, small_fs / name, small_fs)
    # run's summary files and report: the disk is full when the run ends
    with open(small_fs / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    p = js("run", "-i", "0.1", "-o", tmp_path / "r.db", "--summary-json", small_fs / "s.json",
           "--summary", small_fs / "s.txt", "--report=" + str(small_fs / "r.html"), "-q", "--", "true")
    assert_no_crash(p)
    assert p.returncode == 0, p.stderr  # the job's status: its recording is elsewhere and complete
    assert sorted(x.name for x in small_fs.iterdir()) == ["filler"]
    assert all("No space left on device" in l for l in p.stderr.splitlines())
    assert len(p.stderr.splitlines()) == 3, p.stderr


def test_stale_temporaries_of_a_killed_writer_are_removed(js, tmp_path):
    rec = synth_recording(js, tmp_path, hours="0.05")
    out = tmp_path / "out.csv"
    host = os.uname().nodename.replace(".", "_").replace("/", "_")
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"out.csv.tmp.{host}.{dead.pid}.0123abcd"
    stale.write_text("left by a writer killed with SIGKILL")
    live = tmp_path / f"out.csv.tmp.{host}.{os.getpid()}.0123abcd"  # its writer lives: kept
    live.write_text("being written")
    other = tmp_path / f"out.csv.tmp.otherhost.{dead.pid}.0123abcd"  # another host's: kept
    other.write_text("another node's")
    p = js("export", "--format", "csv", "-o", out, rec, timeout=120)
    assert p.returncode == 0, p.stderr
    assert out.stat().st_size > 1000
    assert not stale.exists() and live.exists() and other.exists()
