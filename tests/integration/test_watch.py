# SPDX-License-Identifier: MIT
"""`jobscope watch`: a cgroup the test makes and fills, a user the test creates whose processes start after the
watch began, the whole node with --top on a busy machine, and the stop conditions (--duration, --until-file in
both forms, a signal, a removed cgroup). Needs root (cgroups, users)."""
import json
import os
import pwd
import resource
import shutil
import signal
import subprocess
import sqlite3
import time
from pathlib import Path

import pytest

from conftest import PYTHON, REPO, assert_clean_error, assert_no_crash, kill_quietly, needs_stress_ng, wait_for

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="makes cgroups and users: needs root")
CG = Path("/sys/fs/cgroup")
FIXTURES = REPO / "tests" / "fixtures"
BURN = "import time\nt=time.process_time()+{s}\nwhile time.process_time()<t: pass\n"


def summary(js, rec):
    return json.loads(js("summary", "--json", rec, check=True).stdout)


def v1_or_v2_dirs(name):
    """Directories for a test cgroup `name` in every hierarchy jobscope reads CPU and memory from here."""
    if (CG / "cgroup.controllers").exists():  # pure v2
        return [CG / name]
    dirs = [CG / c / name for c in ("cpuacct", "memory", "pids") if (CG / c).is_dir()]
    return dirs or [CG / "unified" / name]


@pytest.fixture
def test_cgroup():
    name = f"jobscope-watch-test-{os.getpid()}"
    dirs = v1_or_v2_dirs(name)
    for d in dirs:
        d.mkdir()
    yield name, dirs
    for d in dirs:
        for pid in (d / "cgroup.procs").read_text().split() if d.exists() else ():
            kill_quietly(int(pid))
        time.sleep(0.2)
        try:
            d.rmdir()
        except OSError:
            pass


def usage_ns(dirs):
    for d in dirs:
        if (d / "cpuacct.usage").exists():
            return int((d / "cpuacct.usage").read_text())
        if (d / "cpu.stat").exists():
            for line in (d / "cpu.stat").read_text().splitlines():
                if line.startswith("usage_usec"):
                    return int(line.split()[1]) * 1000
    raise AssertionError("no CPU usage file")


@needs_root
def test_watch_cgroup_totals_and_rows(js, test_cgroup):
    name, dirs = test_cgroup
    ready, started = js.path("ready"), js.path("started")
    # the interpreter's start-up is done before it joins the cgroup: only the burn is counted there
    p = subprocess.Popen([PYTHON, "-c", "import os,sys,time\nopen(sys.argv[2],'w').close()\n"
                          "while not os.path.exists(sys.argv[1]): time.sleep(0.05)\n" + BURN.format(s=1.5),
                          str(ready), str(started)])
    try:
        wait_for(started.exists, 30, what="the workload to start")
        for d in dirs:
            (d / "cgroup.procs").write_text(str(p.pid))
        before = usage_ns(dirs)
        w = js.popen("watch", "--cgroup", f"/{name}", "-q", "-i", "0.25", "-o", js.path("w.db"),
                     "--summary-json", js.path("w.json"))
        wait_for(lambda: js.path("w.db").exists(), 10, what="the recording")
        time.sleep(0.5)
        ready.write_text("go")
        p.wait(timeout=30)
        time.sleep(0.5)
        after = usage_ns(dirs)
        w.send_signal(signal.SIGTERM)
        out, err = w.communicate(timeout=30)
        assert w.returncode == 0, err
    finally:
        kill_quietly(p.pid)
    s = json.loads(js.path("w.json").read_text())
    assert s["stop_reason"] == "signal SIGTERM"
    assert s["mode"] == "watch" and s["scope"].startswith("cgroup /") and name in s["scope"], s["scope"]
    assert s["exact"]["cpu"] is True and s["cpu"]["total_method"].startswith("cgroup"), s["cpu"]
    # the watch's total is the cgroup's counter over the watch (it started before the burn, ended after)
    assert s["cpu"]["total_s"] == pytest.approx((after - before) / 1e9, abs=0.05), s["cpu"]
    assert s["cpu"]["total_s"] >= 1.5 * 0.97
    assert s["processes"]["total"] >= 1 and s["processes"]["max_concurrent"] == 1, s["processes"]
    con_rows = js("export", "-f", "jsonl", "-s", "process", js.path("w.db"), check=True).stdout.splitlines()
    assert {json.loads(r)["pid"] for r in con_rows} == {p.pid}


PEAK_WORKLOAD = """
import os, sys, time
joined, started, go, big = sys.argv[1:5]
while not os.path.exists(joined): time.sleep(0.02)
b = b"x" * (300 << 20); del b             # before the watch: the cgroup's mark reaches 300 MiB
open(started, "w").close()
while not os.path.exists(go): time.sleep(0.02)
b = b"y" * (int(big) << 20); time.sleep(0.8); del b
"""


@needs_root
@pytest.mark.parametrize("big", [100, 420])
def test_watch_cgroup_peak_is_the_windows(js, test_cgroup, big):
    """watch --cgroup reports the window's peak, not the cgroup's all-time high-water mark (404.5 MiB for a
    window whose peak was 211 MiB, labelled exact). Where the kernel mark cannot be reset for the watch (v1
    max_usage_in_bytes is one mark shared with every reader: never written), it is the window's only when it
    rose during it (420 MiB here); else the peak is the sampled usage and the mark is named as since the
    cgroup's creation. (A v2 memory.peak is reset for jobscope's own descriptor on Linux 6.12+.)"""
    name, dirs = test_cgroup
    f = {k: js.path(k) for k in ("joined", "started", "go")}
    p = subprocess.Popen([PYTHON, "-c", PEAK_WORKLOAD, *map(str, f.values()), str(big)])
    try:
        for d in dirs:
            (d / "cgroup.procs").write_text(str(p.pid))
        f["joined"].write_text("")
        wait_for(f["started"].exists, 30, what="the workload's 300 MiB before the watch")
        w = js.popen("watch", "--cgroup", f"/{name}", "-q", "-i", "0.2", "-o", js.path("p.db"), "--summary-json",
                     js.path("p.json"))
        wait_for(lambda: js.path("p.db").exists(), 10, what="the recording")
        time.sleep(0.3)
        f["go"].write_text("")
        p.wait(timeout=60)
        time.sleep(0.3)
        w.send_signal(signal.SIGTERM)
        out, err = w.communicate(timeout=30)
        assert w.returncode == 0, err
    finally:
        kill_quietly(p.pid)
    s = json.loads(js.path("p.json").read_text())
    cgm = s["cgroup"]["memory"]
    MiB = 1 << 20
    if big < 300:  # the mark stays at the pre-watch 300 MiB: not the window's
        assert s["memory"]["peak_kernel_tree_bytes"] is None, s["memory"]
        assert s["exact"]["peak_rss"] is False, s["exact"]
        assert cgm["peak_since_created_bytes"] >= 300 * MiB, cgm
        assert big * MiB <= cgm["peak_kernel_tree_bytes"] < 250 * MiB, cgm  # sampled, the window's
        assert cgm["peak_kernel_tree_method"].startswith("sampled") and "created" in cgm["peak_kernel_tree_method"]
        full = js("summary", "--summary", "full", js.path("p.db"), check=True).stdout
        assert "since the cgroup was created" in full, full
        # the headline is the window's, not the process's VmHWM from before the watch (309 MiB)
        assert s["memory"]["peak_bytes"] < 250 * MiB, s["memory"]
        assert s["memory"]["peak_method"].startswith("sampled"), s["memory"]
    else:  # the mark rose during the watch: it is the window's, exactly
        assert s["memory"]["peak_kernel_tree_bytes"] >= big * MiB, s["memory"]
        assert cgm["peak_since_created_bytes"] is None, cgm
        assert "during this watch" in cgm["peak_kernel_tree_method"], cgm


@needs_root
@pytest.mark.skipif(not (CG / "unified" / "cgroup.procs").exists(), reason="no hybrid host (no cgroup2 at unified/)")
def test_watch_cgroup2_dir_of_a_hybrid_host(js):
    """A cgroup2 directory of a hybrid host (no v1 counterpart): its own cpu.stat is the exact CPU total (it
    was ignored, and the tree's sampled figure reported instead). Oracle: cpu.stat itself around the burn."""
    d = CG / "unified" / f"jobscope-hybrid-test-{os.getpid()}"
    d.mkdir()
    ready = js.path("ready")
    p = subprocess.Popen([PYTHON, "-c", "import os,sys,time\nwhile not os.path.exists(sys.argv[1]): "
                          "time.sleep(0.02)\n" + BURN.format(s=1.5), str(ready)])
    try:
        (d / "cgroup.procs").write_text(str(p.pid))
        before = usage_ns([d])
        w = js.popen("watch", "--cgroup", d, "-q", "-i", "0.25", "-o", js.path("h.db"), "--summary-json",
                     js.path("h.json"))
        wait_for(lambda: js.path("h.db").exists(), 10, what="the recording")
        time.sleep(0.3)
        ready.write_text("go")
        p.wait(timeout=30)
        time.sleep(0.3)
        after = usage_ns([d])
        w.send_signal(signal.SIGTERM)
        out, err = w.communicate(timeout=30)
        assert w.returncode == 0, err
    finally:
        kill_quietly(p.pid)
        p.wait(timeout=10)
        time.sleep(0.1)
        d.rmdir()
    s = json.loads(js.path("h.json").read_text())
    assert s["cpu"]["total_method"].startswith("cgroup") and s["exact"]["cpu"] is True, s["cpu"]
    assert s["cpu"]["total_file"] == "cpu.stat", s["cpu"]
    assert s["cpu"]["total_s"] == pytest.approx((after - before) / 1e9, abs=0.03), s["cpu"]
    assert s["cpu"]["total_s"] >= 1.5 * 0.97, s["cpu"]


@needs_root
def test_watch_cgroup_ends_when_removed(js, test_cgroup):
    name, dirs = test_cgroup
    w = js.popen("watch", "--cgroup", f"/{name}", "-q", "-i", "0.1", "-o", js.path("g.db"))
    wait_for(lambda: js.path("g.db").exists(), 10, what="the recording")
    time.sleep(0.5)
    for d in dirs:
        d.rmdir()
    out, err = w.communicate(timeout=20)
    assert w.returncode == 0, err
    assert summary(js, js.path("g.db"))["state"] == "complete"


def test_watch_bad_scope_is_one_line(js):
    assert_clean_error(js("watch", "--cgroup", "/no/such/cgroup/here", "--duration", "1s"))
    assert_clean_error(js("watch", "--user", "no-such-user-xyz", "--duration", "1s"), rc=1)
    assert_clean_error(js("watch", "--duration", "1s"), rc=2)
    assert_clean_error(js("watch", "--node", "--user", "root"), rc=2)
    assert_clean_error(js("watch", "--user", "root", "--top", "3"), rc=2)
    assert not list(js.tmp.glob("*.db")), "a recording was made for a scope that does not exist"


@pytest.fixture
def test_user():
    """A user of this test alone (its name holds the PID: tests of other checkouts running at the same time
    must not add their processes to the watched user's), removed afterwards."""
    name = f"jsw{os.getpid()}"
    r = subprocess.run(["useradd", "--system", "--no-create-home", name], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot create a user: {r.stderr.strip()}")
    yield name
    subprocess.run(["userdel", name], capture_output=True)


@needs_root
def test_watch_user_sees_processes_started_later(js, test_user, shared_dir):
    w = js.popen("watch", "--user", test_user, "-q", "-i", "0.2", "-o", js.path("u.db"),
                 "--summary-json", js.path("u.json"))
    wait_for(lambda: js.path("u.db").exists(), 10, what="the recording")
    time.sleep(0.4)
    # started after the watch began, as that user
    p = subprocess.Popen(["setpriv", f"--reuid={test_user}", f"--regid={test_user}", "--clear-groups",
                          PYTHON, "-c", BURN.format(s=1.0) + "time.sleep(0.5)\n"], cwd=shared_dir)
    p.wait(timeout=30)
    time.sleep(0.3)
    w.send_signal(signal.SIGINT)
    out, err = w.communicate(timeout=20)
    assert w.returncode == 0, err
    s = json.loads(js.path("u.json").read_text())
    uid = pwd.getpwnam(test_user).pw_uid
    assert s["scope"].startswith(f"user {test_user} (uid {uid})"), s["scope"]
    assert s["processes"]["total"] >= 1, s["processes"]
    assert s["exact"]["cpu"] is False  # no user slice here: sampled
    assert 1.0 * 0.7 <= s["cpu"]["total_s"] <= 1.0 * 1.3, s["cpu"]  # sampled: up to its last sample
    rows = [json.loads(r) for r in js("export", "-f", "jsonl", "-s", "process", js.path("u.db"),
                                      check=True).stdout.splitlines()]
    assert p.pid in {r["pid"] for r in rows}


@needs_root
@pytest.mark.timing
def test_watch_user_says_what_it_misses(js, test_user, shared_dir):
    """Short processes of the user whose parent is root's (a daemon, sudo, cron) end between samples and are
    reaped by a process outside the scope: their CPU is in no member's counters. jobscope does not catch them
    (procfs and the BPF reader see live processes only); the method and the exact label say so. Oracle: the
    20 x 50 ms the children burned (their own CPU clock), against what the watch could count."""
    w = js.popen("watch", "--user", test_user, "-q", "-i", "0.5", "-o", js.path("s.db"),
                 "--summary-json", js.path("s.json"))
    wait_for(lambda: js.path("s.db").exists(), 10, what="the recording")
    burn = "import time\nt=time.thread_time()+0.05\nwhile time.thread_time()<t: pass\n"
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(20):  # root's children, as the user: each reaped by root (this test)
        subprocess.run(["setpriv", f"--reuid={test_user}", f"--regid={test_user}", "--clear-groups", PYTHON, "-c",
                        burn], cwd=shared_dir, check=True, timeout=30)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    w.send_signal(signal.SIGINT)
    out, err = w.communicate(timeout=20)
    assert w.returncode == 0, err
    s = json.loads(js.path("s.json").read_text())
    if s["cpu"]["total_method"].startswith("cgroup"):
        pytest.skip("the user has a cgroup of its own here: exact")
    assert s["exact"]["cpu"] is False, s["exact"]
    assert "another user's" in s["exact"]["cpu_reason"], s["exact"]
    assert "another user's process" in s["cpu"]["total_method"], s["cpu"]
    assert used >= 20 * 0.05
    assert s["cpu"]["total_s"] < used, (s["cpu"], used)  # what it says it misses is missing
    print(f"watch --user: {s['cpu']['total_s']:.3f} s counted of {used:.3f} s the processes used (rusage)")


@needs_stress_ng
def test_watch_node_top(js):
    busy = subprocess.Popen(["stress-ng", "--cpu", "1", "-t", "4", "--quiet"])
    try:
        time.sleep(0.5)
        r = js("watch", "--node", "--top", "5", "-q", "-i", "0.5", "--duration", "2s", "-o", js.path("n.db"),
               "--summary-json", js.path("n.json"), timeout=60)
        assert r.returncode == 0, r.stderr
    finally:
        busy.wait(timeout=30)
    s = json.loads(js.path("n.json").read_text())
    assert s["scope"].startswith("node") and s["exact"]["cpu"] is True, s
    assert s["cpu"]["mean_cores"] >= 0.9, s["cpu"]  # at least the stress-ng worker's core
    assert 1.9 <= s["wall_time_s"] <= 2.3, s["wall_time_s"]  # the closing sample may wake late, never early
    rows = [json.loads(r) for r in js("export", "-f", "jsonl", "-s", "process", js.path("n.db"),
                                      check=True).stdout.splitlines()]
    by_sample = {}
    for row in rows:
        by_sample.setdefault(row["sample"], []).append(row)
    assert all(len(v) <= 10 for v in by_sample.values()), "more rows than top 5 by CPU + top 5 by memory"
    assert any(r["comm"] == "stress-ng-cpu" or (r["comm"] or "").startswith("stress-ng") for r in rows)
    assert s["processes"]["max_concurrent"] > 10  # the node's processes, not only the rows


def test_watch_node_counts_every_10s(js):
    """watch --node without --top walks /proc to count the node's processes at the first sample, every 10 s
    (longer where a walk costs more than 0.5 ms) and at the closing one (the walk was most of its cost at 1 s);
    the samples between carry the last count."""
    r = js("watch", "--node", "-q", "-i", "0.2", "--duration", "1.2s", "-o", js.path("c.db"), timeout=30)
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(js.path("c.db")) as db:
        counts = db.execute("SELECT sample, node_processes FROM tree ORDER BY sample").fetchall()
    assert len(counts) >= 5 and all(n is None for _, n in counts[1:-1]), counts
    assert counts[0][1] > 10 and counts[-1][1] > 10, counts
    rows = [json.loads(x) for x in js("export", "-f", "jsonl", "-s", "tree", js.path("c.db"),
                                      check=True).stdout.splitlines()]
    assert [x["processes"] for x in rows[:-1]] == [counts[0][1]] * (len(rows) - 1)  # the last count carried
    assert summary(js, js.path("c.db"))["processes"]["max_concurrent"] > 10


def test_watch_node_self_rows_every_sample(js):
    """The monitor's own figures (self table) under watch --node: CPU, RSS and its thread's I/O at every
    sample, VmHWM at the status cadence and the closing sample, read through descriptors kept open from the
    first read: the counters move on between samples (a kept descriptor read again, not a stale copy)."""
    r = js("watch", "--node", "-q", "-i", "0.1", "--duration", "1.2s", "--status-every", "3", "-o",
           js.path("self.db"), timeout=30)
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(js.path("self.db")) as db:
        rows = db.execute("SELECT s.sample, s.final, utime_us + stime_us, rss_bytes, maxrss_bytes, rchar_bytes, "
                          "wchar_bytes, syscr, syscw FROM self JOIN samples s USING (sample) "
                          "ORDER BY sample").fetchall()
    assert len(rows) >= 8, rows
    for sample, final, cpu, rss, _, *io in rows:
        assert cpu is not None and rss and rss > 1 << 20, (sample, cpu, rss)
        assert all(v is not None for v in io), (sample, io)
    for a, b in zip(rows, rows[1:]):
        assert all(y >= x for x, y in zip(a[5:], b[5:])), (a, b)  # cumulative I/O counters never go back
    syscr = [row[7] for row in rows]
    assert len(set(syscr)) == len(syscr), syscr  # each sample's reads counted by the next one
    hwm = [(sample, final, m) for sample, final, _, _, m, *_ in rows]
    assert all((m is not None) == (sample % 3 == 0 or bool(final)) for sample, final, m in hwm), hwm
    present = [m for *_, m in hwm if m is not None]
    assert present == sorted(present) and present[0] > 1 << 20, hwm


def test_watch_node_methods_describe_the_node(js):
    """watch --node --json: the method strings say where the node's figures come from (the host's own
    accounting), not the process tree's sums they used to describe."""
    r = js("watch", "--node", "-q", "-i", "0.2", "--duration", "0.6s", "-o", js.path("m.db"), "--summary-json",
           js.path("m.json"), timeout=30)
    assert r.returncode == 0, r.stderr
    for s in (json.loads(js.path("m.json").read_text()), summary(js, js.path("m.db"))):
        assert "/proc/stat" in s["cpu"]["total_method"], s["cpu"]
        assert "MemAvailable" in s["memory"]["peak_method"], s["memory"]
        assert "/proc/stat" in s["exact"]["cpu_reason"], s["exact"]
        strings = [v for sec in ("cpu", "memory", "processes", "context_switches", "exact")
                   for k, v in s[sec].items() if isinstance(v, str) and ("method" in k or "reason" in k)]
        assert not any("tree" in v or "members" in v for v in strings), strings


def test_watch_duration_and_until_file(js, tmp_path):
    t0 = time.monotonic()
    r = js("watch", "--node", "-q", "-i", "0.5", "--duration", "1.2s", "-o", js.path("d.db"), timeout=30)
    assert r.returncode == 0, r.stderr
    assert 1.1 <= time.monotonic() - t0 < 5
    d = summary(js, js.path("d.db"))
    assert 1.15 <= d["wall_time_s"] <= 1.5, d["wall_time_s"]  # a late wake-up on a busy machine, never early
    assert d["stop_reason"] == "duration"

    # the file appears
    stop = tmp_path / "stop"
    w = js.popen("watch", "--node", "-q", "-i", "10s", "--until-file", stop, "-o", js.path("f1.db"))
    wait_for(lambda: js.path("f1.db").exists(), 10, what="the recording")
    time.sleep(0.3)
    stop.write_text("")
    w.communicate(timeout=10)  # well before the 10 s interval
    assert w.returncode == 0

    # it exists already: the word FINISHED in it
    ipc = tmp_path / ".ipc-1234"
    ipc.write_text("RUNNING\n")
    w = js.popen("watch", "--node", "-q", "-i", "10s", "--until-file", ipc, "-o", js.path("f2.db"))
    wait_for(lambda: js.path("f2.db").exists(), 10, what="the recording")
    time.sleep(1.0)
    assert w.poll() is None, "stopped although the file does not say FINISHED"
    ipc.write_text("UNFINISHED\n")  # not the word
    time.sleep(1.0)
    assert w.poll() is None, "stopped on UNFINISHED"
    ipc.write_text("FINISHED\n")
    w.communicate(timeout=10)
    assert w.returncode == 0
    for f in ("f1.db", "f2.db"):
        s = summary(js, js.path(f))
        assert s["state"] == "complete" and s["samples"]["taken"] >= 2, s["samples"]
        assert s["stop_reason"] == "until-file"


def test_watch_node_fifo_in_procfs_does_not_hang(js, tmp_path):
    """A fixture procfs whose `loadavg` is a FIFO: every open outside src/sys/ goes through the path module,
    which never blocks (it hung forever before, in an open SIGTERM could not interrupt); the figure is missing,
    the rest is read, and the watch ends on time."""
    proc = tmp_path / "proc"
    shutil.copytree(FIXTURES / "system", proc)
    (proc / "loadavg").unlink()
    os.mkfifo(proc / "loadavg")
    t0 = time.monotonic()
    r = js("watch", "--node", "--procfs", proc, "-q", "-i", "0.2", "--duration", "1s", "-o", js.path("fifo.db"),
           "--summary-json", js.path("fifo.json"), timeout=30)
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t0 < 10
    s = json.loads(js.path("fifo.json").read_text())
    assert s["samples"]["taken"] >= 4, s["samples"]
    rows = [json.loads(l) for l in js("export", "-f", "jsonl", "-s", "system", js.path("fifo.db"),
                                      check=True).stdout.splitlines()]
    assert rows and all(r.get("load1") is None for r in rows), rows[:2]
    # and a stop signal ends it at once, whatever it reads
    w = js.popen("watch", "--node", "--procfs", proc, "-q", "-i", "0.1", "-o", js.path("fifo2.db"))
    wait_for(lambda: js.path("fifo2.db").exists(), 10, what="the recording")
    time.sleep(0.3)
    w.send_signal(signal.SIGTERM)
    w.communicate(timeout=10)
    assert w.returncode == 0


def test_attach_duration(js):
    p = subprocess.Popen(["sleep", "30"])
    try:
        r = js("attach", "-q", "-i", "0.2", "--duration", "1s", "-o", js.path("a.db"), p.pid, timeout=30)
        assert r.returncode == 0, r.stderr
        assert p.poll() is None, "attach must not touch the process"
    finally:
        kill_quietly(p.pid)
    wall = summary(js, js.path("a.db"))["wall_time_s"]
    assert 0.95 <= wall <= 1.3, wall  # a late wake-up on a busy machine, never early
