# SPDX-License-Identifier: MIT
"""Durability after kill -9, and the summary's shape and consistency (issue 2, Integration: kill -9)."""
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import time

import psutil
import pytest

from conftest import PYTHON, assert_no_crash, kill_quietly, wait_for

SUMMARY_KEYS = {
    "jobscope_version": None,
    "command": None,
    "host": None,
    "exit_status": None,
    "wall_time_s": None,
    "cpu": ["user_s", "system_s", "total_s", "sampled_s", "mean_cores", "max_cores", "efficiency", "cores_available"],
    "memory": ["peak_bytes", "peak_method", "peak_rss_sum_bytes", "peak_rss_kernel_bytes", "peak_swap_bytes", "main",
               "descendants", "peak_private_bytes", "peak_shared_bytes", "peak_pss_bytes", "pss_samples"],
    "io": ["read_bytes", "write_bytes", "read_chars", "write_chars"],
    "processes": ["total", "max_concurrent", "max_threads"],
    "samples": ["interval_s", "taken", "missed"],
    "monitor": ["cpu_s", "max_rss_bytes", "mean_sample_cost_s"],
    "exact": ["cpu", "peak_rss", "memory"],
}


def check_summary_shape(s):
    for key, sub in SUMMARY_KEYS.items():
        assert key in s, f"summary lacks {key!r}: {sorted(s)}"
        for k in sub or ():
            assert k in s[key], f"summary lacks {key}.{k}: {s[key]}"
    assert "peak_rss_bytes" in s["memory"]["main"] and "peak_rss_sum_bytes" in s["memory"]["descendants"], s["memory"]
    for section in ("cpu", "io", "processes", "samples", "monitor"):
        for k, v in s[section].items():
            if k.endswith(("_method", "_file", "_bound")) or k == "ignores_sigchld":
                continue
            assert v is None or isinstance(v, (int, float)) and not isinstance(v, bool), f"{section}.{k} = {v!r}"
            assert v is None or v >= 0, f"{section}.{k} = {v!r} is negative"
    for k in ("cpu", "peak_rss", "memory"):
        assert isinstance(s["exact"][k], bool), s["exact"]


def test_summary_json_shape_and_values(js, workload):
    cmd = [PYTHON, workload("burn.py"), "0.5"]
    r = js.run(cmd, interval="0.1s", timeout=60)
    assert r.returncode == 0, r.proc.stderr
    s = r.summary
    check_summary_shape(s)
    assert s["command"] == cmd
    assert s["host"] == socket.gethostname()
    assert s["exit_status"] == 0
    assert s["samples"]["interval_s"] == pytest.approx(0.1)
    assert s["samples"]["taken"] >= 3, s["samples"]
    assert s["cpu"]["cores_available"] == len(os.sched_getaffinity(0))
    assert s["cpu"]["total_s"] >= 0.5 * 0.97, s["cpu"]
    assert s["cpu"]["mean_cores"] <= s["cpu"]["max_cores"] + 1e-9, s["cpu"]
    assert 0 < s["cpu"]["efficiency"] <= 1.05, s["cpu"]
    assert s["wall_time_s"] >= 0.5 * 0.98, s
    assert s["processes"]["total"] >= 1 and s["processes"]["max_concurrent"] >= 1 and s["processes"]["max_threads"] >= 1
    assert s["memory"]["peak_bytes"] > 1024 * 1024, s["memory"]
    assert s["memory"]["peak_rss_sum_bytes"] > 1024 * 1024, s["memory"]
    assert s["monitor"]["cpu_s"] is not None and s["monitor"]["max_rss_bytes"] > 0, s["monitor"]
    version = js("--version", check=True)
    assert s["jobscope_version"] and s["jobscope_version"] in version.stdout + version.stderr


def test_summary_command_matches_end_of_run_summary(js, workload):
    r = js.run([PYTHON, workload("burn.py"), "0.3"], interval="0.1s", timeout=60)
    assert r.returncode == 0, r.proc.stderr
    later = js.summary_json(r.recording)
    check_summary_shape(later)
    for section in ("cpu", "io", "processes", "samples"):
        for k, v in r.summary[section].items():
            w = later[section].get(k)
            if isinstance(v, float) and isinstance(w, float):
                assert w == pytest.approx(v, rel=1e-6, abs=1e-9), f"{section}.{k}: end of run {v}, summary {w}"
            else:
                assert w == v, f"{section}.{k}: end of run {v!r}, summary {w!r}"
    for k in ("peak_bytes", "peak_rss_sum_bytes", "peak_pss_bytes"):
        assert later["memory"][k] == r.summary["memory"][k], k
    assert later["exit_status"] == r.summary["exit_status"]
    text = js("summary", r.recording, check=True)
    assert text.stdout.strip() or text.stderr.strip()


def test_recording_is_sqlite_with_schema_version(js):
    """Written in WAL mode while it runs; a cleanly closed recording is one file (rollback journal, no -wal or
    -shm beside it) so it can be copied alone and read from a read-only place."""
    r = js.run(["sleep", "0.3"], interval="0.1s")
    assert r.returncode == 0
    assert not os.path.exists(f"{r.recording}-wal") and not os.path.exists(f"{r.recording}-shm")
    con = sqlite3.connect(f"file:{r.recording}?mode=ro", uri=True)
    try:
        assert con.execute("PRAGMA journal_mode").fetchone()[0].lower() == "delete"
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        tables = [row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        assert tables, "no tables in the recording"
        # the schema version: PRAGMA user_version, or a column / key named like schema_version
        found = con.execute("PRAGMA user_version").fetchone()[0] > 0
        for t in tables:
            cols = [c[1] for c in con.execute(f'PRAGMA table_info("{t}")')]
            if any("schema" in c.lower() for c in cols):
                found = True
            for c in cols:
                q = f'SELECT 1 FROM "{t}" WHERE CAST("{c}" AS TEXT) LIKE \'%schema%\' LIMIT 1'
                if con.execute(q).fetchone():
                    found = True
        assert found, f"no schema version found in the recording (tables {tables})"
    finally:
        con.close()


def test_kill_9_leaves_a_readable_recording(js, workload, tmp_path):
    rec = js.path("killed.db")
    p = js.popen("run", "-q", "-i", "0.1", "-o", rec, "--", PYTHON, workload("tree.py"), tmp_path, "2", "30", "0")
    leftovers = []
    try:
        wait_for(lambda: rec.exists(), 15, what="the recording to be created")
        # let it record for about a second, with the workload's children running
        wait_for(lambda: len(psutil.Process(p.pid).children(recursive=True)) >= 3, 15, what="the workload tree")
        time.sleep(1.0)
        leftovers = psutil.Process(p.pid).children(recursive=True)
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
    finally:
        for c in leftovers:
            kill_quietly(c.pid)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == -signal.SIGKILL

    # check a byte-for-byte copy of what was left (database, WAL, shared memory) with SQLite itself
    copy = tmp_path / "copy"
    copy.mkdir()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{rec}{suffix}"):
            shutil.copy(f"{rec}{suffix}", copy / f"killed.db{suffix}")
    con = sqlite3.connect(copy / "killed.db")
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()

    text = js("summary", "--summary=full", rec)
    assert_no_crash(text)
    assert text.returncode == 0, f"summary of a killed recording failed: {text.stderr}"
    assert (text.stdout + text.stderr).strip(), "summary printed nothing"
    s = js.summary_json(rec)
    check_summary_shape(s)
    assert s["samples"]["taken"] >= 2, s["samples"]
    assert s["cpu"]["total_s"] is None or s["cpu"]["total_s"] > 0, s["cpu"]
    assert s["exit_status"] is None, f"the exit status was never seen, yet the summary gives {s['exit_status']!r}"
    # an unfinished recording says so, and nothing in it is labelled exact
    assert s["state"] == "incomplete", s["state"]
    assert s["exact"]["cpu"] is False and s["exact"]["peak_rss"] is False and s["exact"]["memory"] is False, s["exact"]
    assert "incomplete" in s["exact"]["cpu_reason"], s["exact"]
    assert "INCOMPLETE" in text.stdout and "exit status      unknown" in text.stdout, text.stdout
    assert "[exact" not in text.stdout, text.stdout


def test_late_samples_are_counted_as_missed_not_shifted(js):
    """Deadlines are absolute: stopping jobscope for 1 s at -i 0.1 makes about 10 samples missed, and taken +
    missed still matches wall time / interval (no drift)."""
    rec, sj = js.path("missed.db"), js.path("missed.json")
    p = js.popen("run", "-q", "-i", "0.1", "-o", rec, "--summary-json", sj, "--", "sleep", "3")
    try:
        wait_for(lambda: any(c.name() == "sleep" for c in psutil.Process(p.pid).children()), 15, what="sleep to start")
        time.sleep(0.3)
        os.kill(p.pid, signal.SIGSTOP)
        time.sleep(1.0)
        os.kill(p.pid, signal.SIGCONT)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 0, p.stderr.read().decode(errors="replace")
    s = json.loads(sj.read_text())
    smp = s["samples"]
    assert smp["missed"] >= 5, f"1 s stopped at a 0.1 s interval, yet {smp}"
    expected = s["wall_time_s"] / 0.1
    assert expected - 3 <= smp["taken"] + smp["missed"] <= expected + 3, (
        f"taken + missed = {smp['taken'] + smp['missed']} for {s['wall_time_s']:.2f} s at 0.1 s: {smp}"
    )


def test_default_output_name(js):
    proc = js("run", "-q", "-i", "0.1", "--", "true", check=True)
    names = [p.name for p in js.tmp.iterdir() if p.suffix == ".db"]
    host = socket.gethostname()
    pattern = re.compile(rf"jobscope-{re.escape(host)}-\d{{8}}T\d{{6}}\.\d{{3}}\.db")
    assert len(names) == 1 and pattern.fullmatch(names[0]), f"recordings in cwd: {names}"
    assert proc.returncode == 0


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["run", "--help"], ["attach", "--help"],
                                  ["summary", "--help"], ["export", "--help"]], ids=lambda a: " ".join(a))
def test_help_and_version(js, args):
    proc = js(*args, timeout=30)
    assert_no_crash(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip(), "nothing on stdout"
    assert not [p for p in js.tmp.iterdir() if p.suffix == ".db"], "--help/--version created a recording"
