# SPDX-License-Identifier: MIT
"""`jobscope attach PID`: monitors an existing process and its descendants until they are gone."""
import json
import os
import signal
import subprocess
import threading

import pytest

from conftest import PYTHON, assert_no_crash, kill_quietly, read_pidfile, wait_for


def samples_taken(js, rec):
    """Samples in a recording that may still be being written (0 while it cannot be read yet)."""
    if not rec.exists():
        return 0
    proc = js("summary", "--json", rec, timeout=30)
    if proc.returncode != 0:
        return 0
    try:
        return json.loads(proc.stdout)["samples"]["taken"] or 0
    except (ValueError, KeyError, TypeError):
        return 0


def test_attach_until_exit(js, workload, tmp_path):
    go = tmp_path / "go"
    childpid = tmp_path / "child.pid"
    pre, child_cpu = 0.5, 1.0
    w = subprocess.Popen(
        [PYTHON, workload("attach_target.py"), str(go), str(pre), str(child_cpu), "0.6", str(childpid)],
        stdout=subprocess.PIPE,
    )
    # reap the workload as soon as it exits, so jobscope does not wait on a zombie the test holds
    reaper = threading.Thread(target=w.wait, daemon=True)
    try:
        line = w.stdout.readline().decode()
        assert line.startswith("READY"), line
        reaper.start()
        rec, sj = js.path("attach.db"), js.path("attach.json")
        p = js.popen("attach", "-q", "-i", "0.1", "-o", rec, "--summary-json", sj, str(w.pid))
        wait_for(lambda: rec.exists() or p.poll() is not None, 15, what="attach to start recording")
        go.touch()
        out, err = p.communicate(timeout=60)
    finally:
        if w.poll() is None:
            kill_quietly(w.pid)
        pid = read_pidfile(childpid)
        if pid:
            kill_quietly(pid)
    cp = subprocess.CompletedProcess(p.args, p.returncode, out.decode(), err.decode())
    assert_no_crash(cp)
    assert p.returncode == 0, cp.stderr
    s = json.loads(sj.read_text())
    assert s["exact"]["cpu"] is False, "attach cannot see the rusage of children reaped by others"
    assert s["cpu"]["total_s"] is not None
    # CPU burnt after attaching: the workload's 0.5 s and its child's 1.0 s (seen through the workload's
    # cutime after it reaped the child, or by sampling)
    assert s["cpu"]["total_s"] >= 0.8 * child_cpu, s["cpu"]
    assert s["cpu"]["total_s"] <= (pre + child_cpu) * 1.1 + 0.5, s["cpu"]
    assert s["processes"]["total"] >= 2, s["processes"]
    exp = js("export", "--format", "csv", "--scope", "process", rec, check=True)
    assert str(read_pidfile(childpid)) in exp.stdout, "the child started after attach is not in the recording"


def test_attach_stops_on_sigint_and_leaves_the_process(js):
    w = subprocess.Popen(["sleep", "30"])
    threading.Thread(target=w.wait, daemon=True).start()
    rec = js.path("attach-int.db")
    p = None
    try:
        p = js.popen("attach", "-q", "-i", "0.1", "-o", rec, str(w.pid),
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        # wait until attach is really monitoring: its recording (readable while written) holds a sample
        wait_for(lambda: p.poll() is not None or samples_taken(js, rec) >= 1, 30, what="attach's first sample")
        os.kill(p.pid, signal.SIGINT)
        try:
            _, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail("attach did not stop on SIGINT")
        watched_alive = w.poll() is None
    finally:
        kill_quietly(w.pid)
        if p is not None and p.poll() is None:
            kill_quietly(p.pid)
            p.wait()
    assert_no_crash(subprocess.CompletedProcess(p.args, p.returncode, "", err.decode()))
    assert watched_alive, "attach must not kill or signal the process it watched"
    s = js.summary_json(rec)
    assert s["samples"]["taken"] >= 1


def test_attach_ends_when_target_exits_even_with_a_long_interval(js):
    """The watched process exits and stays a zombie (its parent, this test, does not reap it yet): attach
    ends at once, not at the next deadline an hour away, and does not wait for the parent to reap it."""
    target = subprocess.Popen(["sleep", "1"])
    try:
        rec = js.path("long.db")
        t0 = __import__("time").monotonic()
        proc = js("attach", "-q", "-i", "1h", "-o", rec, target.pid, timeout=30)
        elapsed = __import__("time").monotonic() - t0
        assert_no_crash(proc)
        assert proc.returncode == 0, proc.stderr
        assert elapsed < 10, f"attach took {elapsed:.1f}s after its target exited"
        s = js.summary_json(rec)
        assert s["samples"]["taken"] >= 2  # the first sample and the closing one
        assert s["processes"]["total"] == 1
    finally:
        target.wait()
