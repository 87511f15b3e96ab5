# SPDX-License-Identifier: MIT
"""Races between the monitor and the processes it reads: a PID reused by an unrelated process between two
samples is a new process (identity is PID and start time), a member that execs under the same name is
announced again with its new command line, and processes that exit while being read leave no partial row."""
import shutil
import sqlite3
import subprocess

import pytest

from conftest import PYTHON, assert_no_crash

REUSE = r"""
sleep 0.5 &
P=$!
wait $P
echo $((P - 1)) > /proc/sys/kernel/ns_last_pid
PYTHON -c 'import time; time.sleep(0.5)' &
Q=$!
echo "$P $Q" > "$1"
wait $Q
"""


def test_pid_reuse_is_a_new_process(js, jobscope_bin):
    """In a PID namespace of its own the monitor sees a PID reused at once (ns_last_pid): the two processes
    keep apart in proc_info and proc (by start time), and the summary counts both."""
    if not shutil.which("unshare"):
        pytest.skip("no unshare")
    script = js.path("reuse.sh")
    script.write_text(REUSE.replace("PYTHON", PYTHON))
    pids = js.path("pids")
    rec = js.path("reuse.db")
    try:
        proc = subprocess.run(["unshare", "-pf", "--mount-proc", str(jobscope_bin), "run", "-q", "-i", "20ms",
                               "-o", str(rec), "--", "sh", str(script), str(pids)],
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the run in a PID namespace did not end")
    if proc.returncode != 0 and ("unshare failed" in proc.stderr or "Operation not permitted" in proc.stderr):
        pytest.skip(f"cannot make a PID namespace here: {proc.stderr.strip()}")
    assert_no_crash(proc)
    assert proc.returncode == 0, proc.stderr
    p, q = map(int, pids.read_text().split())
    if p != q:
        pytest.skip(f"ns_last_pid did not hand the PID back ({p} then {q})")
    con = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
    infos = con.execute("SELECT start_ticks, comm FROM proc_info WHERE pid = ? ORDER BY start_ticks", (p,)).fetchall()
    comms = {c for _, c in infos}
    assert "sleep" in comms and "python3" in comms, infos
    starts = sorted({s for s, _ in infos})
    assert len(starts) == 2, infos  # two processes, one PID
    spans = con.execute("SELECT start_ticks, MIN(sample), MAX(sample) FROM proc WHERE pid = ? GROUP BY start_ticks "
                        "ORDER BY start_ticks", (p,)).fetchall()
    assert len(spans) == 2 and spans[0][2] < spans[1][1], spans  # one after the other, never mixed
    con.close()
    s = js.summary_json(rec)
    assert s["processes"]["total"] >= 3  # the script, and both holders of the PID


def test_exec_same_comm_is_announced_again(js):
    """`exec sh ...` from sh keeps the comm; the new command line is still recorded."""
    r = js.run(["sh", "-c", "sleep 0.4; exec sh -c 'sleep 0.5; true' second"], interval="20ms", timeout=60)
    assert r.returncode == 0, r.proc.stderr
    con = sqlite3.connect(f"file:{r.recording}?mode=ro", uri=True)
    root = con.execute("SELECT pid FROM proc_info ORDER BY sample LIMIT 1").fetchone()[0]
    rows = con.execute("SELECT comm, cmdline FROM proc_info WHERE pid = ? ORDER BY sample", (root,)).fetchall()
    con.close()
    cmdlines = [c for _, c in rows]
    assert any("second" in c for c in cmdlines), rows
    assert rows[0][0] == "sh" and all(c == "sh" for c, _ in rows), rows
    assert len(set(cmdlines)) == len(cmdlines) == 2, rows  # once per image, not per sample


def test_exiting_processes_leave_no_partial_row(js):
    """A tree churning short-lived processes, sampled every 10 ms: every proc row holds what stat gives (the
    row is written only once stat was read whole), however many processes exit while being read."""
    churn = ("import subprocess\n"
             "for i in range(300):\n"
             "    ps = [subprocess.Popen(['true']) for _ in range(4)]\n"
             "    [p.wait() for p in ps]\n")
    r = js.run([PYTHON, "-c", churn], interval="10ms", timeout=120)
    assert r.returncode == 0, r.proc.stderr
    con = sqlite3.connect(f"file:{r.recording}?mode=ro", uri=True)
    n = con.execute("SELECT COUNT(*) FROM proc").fetchone()[0]
    partial = con.execute("SELECT COUNT(*) FROM proc WHERE start_ticks IS NULL OR ppid IS NULL OR state IS NULL "
                          "OR utime_ticks IS NULL OR stime_ticks IS NULL OR rss_bytes IS NULL OR threads IS NULL").fetchone()[0]
    pids = con.execute("SELECT COUNT(DISTINCT pid || '/' || start_ticks) FROM proc").fetchone()[0]
    con.close()
    assert n > 50
    assert pids > 5  # short-lived processes were seen
    assert partial == 0, f"{partial} of {n} rows partial"
