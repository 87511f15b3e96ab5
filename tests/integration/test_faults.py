# SPDX-License-Identifier: MIT
"""Fault injection (src/sys/sysio.h, $JOBSCOPE_FAULTS): system calls fail mid-run the way a real machine makes
them fail: /proc reads cut short, interrupted, failing with EIO, EAGAIN, EACCES, or ESRCH/ENOENT as when a
process vanishes; opens failing with EMFILE, ENOENT, EACCES; the recording's writes failing with ENOSPC or EIO
or written short; closes failing. In every case the job runs to its end with its exit status passed through,
the monitor keeps what it has (the recording stays a valid SQLite file with the samples it could write, the
summary covers the run), says at most once what failed, counts every member it could not read, and recovers
when the fault clears (the last samples are whole). AFTER (the spec's 5th field) lets the setup through so
the faults land in the sampling loop."""
import re
import sqlite3

import pytest

from conftest import assert_no_crash

JOB = ["sh", "-c", "sleep 1.5 & sleep 1.5 & sleep 1.6; wait; exit 3"]

CASES = [
    # /proc and /sys reads
    "read:EIO:4:40:400", "read:EAGAIN:4:40:400", "read:ESRCH:3:40:400", "read:ENOENT:5:40:400",
    "read:EACCES:4:40:400", "read:EINTR:2:40:400", "read:short:2:40:400",
    # opens (/proc files, and the recording's side files)
    "open:EMFILE:3:30:60", "open:ENOENT:3:30:60", "open:EACCES:4:30:60", "open:EIO:5:30:60",
    # the recording's writes (one per WAL frame; at 50 ms a commit holds a second of samples, the first one
    # about 50 writes, about 150 in the whole run: AFTER 60 lands the faults on the commit of the samples of the
    # first second, well before the closing sample; a failed commit loses its second of samples, so one fault
    # for ENOSPC and EIO, else every commit left would fail at its first write; SQLite retries short writes)
    "write:ENOSPC:1:1:60", "write:EIO:1:1:60", "write:short:2:40:60",
    # closes (20 faults: they clear before the summary's own file is closed, which a kept descriptor per
    # source leaves far fewer closes before; a close failing there is reported as that file's error)
    "close:EIO:2:40:20",
]


@pytest.mark.parametrize("spec", CASES)
def test_fault_is_survived(js, monkeypatch, spec):
    monkeypatch.setenv("JOBSCOPE_FAULTS", spec)
    r = js.run(JOB, interval="50ms", timeout=120)
    assert_no_crash(r.proc)
    assert r.returncode == 3, r.proc.stderr  # the job's own status
    report = [l for l in r.proc.stderr.splitlines() if "fault injection:" in l]
    other = [l for l in r.proc.stderr.splitlines() if "fault injection:" not in l and l.strip()]
    assert len(report) == 1, r.proc.stderr
    injected = int(re.search(r": (\d+) faults injected in (\d+) calls", report[0]).group(1))
    assert injected > 0, report  # the fault did land in the run
    assert len(other) <= 1, r.proc.stderr  # said once, if at all
    if other:
        assert "could not be recorded" in other[0], other
    # the summary covers the whole run, whatever the recording could hold
    s = r.summary
    assert s is not None and s["samples"]["taken"] >= 20, r.proc.stderr
    assert s["wall_time_s"] >= 1.4
    monkeypatch.delenv("JOBSCOPE_FAULTS")
    con = sqlite3.connect(f"file:{r.recording}?mode=ro", uri=True)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    taken = int(con.execute("SELECT value FROM meta WHERE key = 'samples_taken'").fetchone()[0])
    stored = con.execute("SELECT COUNT(*), MAX(sample) FROM samples").fetchone()
    assert stored[0] >= 1
    # recovery: the fault cleared (COUNT), so the closing sample is recorded
    assert stored[1] == taken - 1, (stored, taken)
    # no member left unread without being counted; the closing sample is whole
    rows = dict(con.execute("SELECT sample, COUNT(*) FROM proc GROUP BY sample").fetchall())
    for sample, members, unread in con.execute("SELECT sample, members, unread FROM tree"):
        assert rows.get(sample, 0) + (unread or 0) >= members, (sample, members, unread, rows.get(sample))
    con.close()
    js.summary_json(r.recording)  # and it reads back
    print(f"fault {spec}: {injected} injected, job status 3, {stored[0]}/{taken} samples stored")


def test_textfile_write_faults(js, monkeypatch, tmp_path):
    """The textfile sink (node_exporter's collector file) under failing writes: the job and the recording go
    on, no temporary file is left behind, and the file is removed at the end as always."""
    prom = tmp_path / "job.prom"
    monkeypatch.setenv("JOBSCOPE_FAULTS", "write:ENOSPC:3:30:400,close:EIO:5:10:60")
    r = js.run(JOB, interval="50ms", extra=["--textfile", prom], timeout=120)
    assert_no_crash(r.proc)
    assert r.returncode == 3, r.proc.stderr
    injected = sum(int(m) for m in re.findall(r": (\d+) faults injected", r.proc.stderr))
    assert injected > 0, r.proc.stderr
    assert not list(tmp_path.glob("job.prom*")), list(tmp_path.iterdir())
    monkeypatch.delenv("JOBSCOPE_FAULTS")
    con = sqlite3.connect(f"file:{r.recording}?mode=ro", uri=True)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
