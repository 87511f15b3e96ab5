# SPDX-License-Identifier: MIT
"""`jobscope watch`: a cgroup the test makes and fills, a user the test creates whose processes start after the
watch began, the whole node with --top on a busy machine, and the stop conditions (--duration, --until-file in
both forms, a signal, a removed cgroup). Needs root (cgroups, users)."""
import json
import os
import pwd
import signal
import subprocess
import sqlite3
import time
from pathlib import Path

import pytest

from conftest import PYTHON, assert_clean_error, assert_no_crash, kill_quietly, needs_stress_ng, wait_for

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="makes cgroups and users: needs root")
CG = Path("/sys/fs/cgroup")
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
    name = "jswatch"
    try:
        pwd.getpwnam(name)
    except KeyError:
        r = subprocess.run(["useradd", "--system", "--no-create-home", name], capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"cannot create a user: {r.stderr.strip()}")
    return name


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
    assert s["wall_time_s"] == pytest.approx(2.0, abs=0.1)
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
    and at the closing one (the walk was most of its cost at 1 s); the samples between carry the last count."""
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


def test_watch_duration_and_until_file(js, tmp_path):
    t0 = time.monotonic()
    r = js("watch", "--node", "-q", "-i", "0.5", "--duration", "1.2s", "-o", js.path("d.db"), timeout=30)
    assert r.returncode == 0, r.stderr
    assert 1.1 <= time.monotonic() - t0 < 5
    d = summary(js, js.path("d.db"))
    assert d["wall_time_s"] == pytest.approx(1.2, abs=0.05)
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


def test_attach_duration(js):
    p = subprocess.Popen(["sleep", "30"])
    try:
        r = js("attach", "-q", "-i", "0.2", "--duration", "1s", "-o", js.path("a.db"), p.pid, timeout=30)
        assert r.returncode == 0, r.stderr
        assert p.poll() is None, "attach must not touch the process"
    finally:
        kill_quietly(p.pid)
    assert summary(js, js.path("a.db"))["wall_time_s"] == pytest.approx(1.0, abs=0.05)
