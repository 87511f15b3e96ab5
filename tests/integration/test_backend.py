# SPDX-License-Identifier: MIT
"""The process-tree source's backends (issue 14): the BPF task reader gives the same figures as /proc for the
same workload, in every scope (run: the run's cgroup or a PID filter; attach: a PID filter that follows
children; watch --user and --node: every process), records which backend produced each sample, and falls back
to /proc with the reason when it is refused (no privilege, a failing load) or not built."""
import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import PYTHON, kill_quietly, needs_stress_ng, wait_for

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the BPF reader needs root (or CAP_BPF + CAP_PERFMON)")


def bpf_built(js):
    r = js("run", "-q", "--backend", "bpf", "-i", "0.05", "-o", js.path("probe.db"), "--", "sleep", "0.2")
    inv = dict(sqlite3.connect(js.path("probe.db")).execute(
        "SELECT key, value FROM inventory WHERE source = 'proc_tree'").fetchall())
    return r.returncode == 0 and inv.get("backend.bpf", "").startswith("loaded")


def backends(rec):
    con = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
    try:
        return {row[0] for row in con.execute("SELECT DISTINCT backend FROM tree")}, dict(con.execute(
            "SELECT key, value FROM inventory WHERE source = 'proc_tree'").fetchall())
    finally:
        con.close()


@needs_root
def test_bpf_and_procfs_agree_on_a_tree(js, workload):
    if not bpf_built(js):
        pytest.skip("the BPF reader is not available on this build or kernel")
    cmd = [PYTHON, workload("short_children.py"), "120", "2", "0.02"]
    results = {}
    for backend in ("bpf", "procfs"):
        r = js.run(cmd, interval="0.2s", extra=["--backend", backend, "--cgroup", "off"], timeout=120)
        assert r.returncode == 0, r.proc.stderr
        used, inv = backends(r.recording)
        results[backend] = (r.summary, used)
        if backend == "bpf":
            assert used == {"bpf-tasks"}, used  # no cgroup: a PID filter that follows children
            assert inv["backend.bpf"].startswith("loaded"), inv
        else:
            assert used == {"procfs"}, used
    b, p = results["bpf"][0], results["procfs"][0]
    # the same workload, measured exactly both ways: 120 x 20 ms of children, through the kernel's accounting
    assert b["cpu"]["total_s"] == pytest.approx(p["cpu"]["total_s"], rel=0.05), (b["cpu"], p["cpu"])
    assert b["exact"]["cpu"] is True
    assert b["memory"]["peak_rss_sum_bytes"] == pytest.approx(p["memory"]["peak_rss_sum_bytes"], rel=0.5)


@needs_root
def test_bpf_cgroup_mode_in_run(js, workload):
    if not bpf_built(js):
        pytest.skip("the BPF reader is not available on this build or kernel")
    r = js.run([PYTHON, workload("short_children.py"), "60", "2", "0.02"], interval="0.2s",
               extra=["--backend", "bpf"], timeout=120)
    used, _ = backends(r.recording)
    c = r.summary["cpu"]
    if used == {"bpf-cgroup"}:  # the run's cgroup has a v2 directory here
        assert c["tree_total_s"] == pytest.approx(c["total_s"], rel=0.01), c  # tree (BPF) vs cgroup counter
    else:
        assert used <= {"bpf-tasks", "procfs"}, used


@needs_root
def test_bpf_attach_follows_children(js, tmp_path):
    if not bpf_built(js):
        pytest.skip("the BPF reader is not available on this build or kernel")
    ready = tmp_path / "go"
    code = ("import os,sys,time\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.01)\n"
            "ps=[__import__('subprocess').Popen(['sleep','1.5']) for _ in range(5)]\n[p.wait() for p in ps]\n")
    p = subprocess.Popen([PYTHON, "-c", code, str(ready)])
    try:
        a = js.popen("attach", "-q", "--backend", "bpf", "-i", "0.2", "-o", js.path("a.db"),
                     "--summary-json", js.path("a.json"), p.pid)
        wait_for(lambda: js.path("a.db").exists(), 10, what="the recording")
        time.sleep(0.5)
        ready.write_text("")
        a.communicate(timeout=60)
        assert a.returncode == 0
    finally:
        kill_quietly(p.pid)
    used, _ = backends(js.path("a.db"))
    assert used == {"bpf-tasks"}, used
    s = json.loads(js.path("a.json").read_text())
    assert s["processes"]["max_concurrent"] == 6, s["processes"]  # the parent and its 5 children, found by BPF


@needs_root
@needs_stress_ng
def test_bpf_watch_node_and_user(js):
    if not bpf_built(js):
        pytest.skip("the BPF reader is not available on this build or kernel")
    busy = subprocess.Popen(["stress-ng", "--cpu", "1", "-t", "3", "--quiet"])
    try:
        r = js("watch", "--node", "--top", "3", "--backend", "bpf", "-q", "-i", "0.5", "--duration", "1.5s",
               "-o", js.path("n.db"), timeout=60)
        assert r.returncode == 0, r.stderr
        r = js("watch", "--user", "root", "--backend", "bpf", "-q", "-i", "0.5", "--duration", "1s",
               "-o", js.path("u.db"), timeout=60)
        assert r.returncode == 0, r.stderr
    finally:
        busy.wait(timeout=30)
    for f in ("n.db", "u.db"):
        used, _ = backends(js.path(f))
        assert used == {"bpf-tasks"}, (f, used)
    rows = [json.loads(l) for l in js("export", "-f", "jsonl", "-s", "process", js.path("n.db"),
                                      check=True).stdout.splitlines()]
    assert any((r["comm"] or "").startswith("stress-ng") for r in rows)
    assert max(sum(1 for r in rows if r["sample"] == s) for s in {r["sample"] for r in rows}) <= 6


def test_bpf_refused_falls_back_with_the_reason(js, shared_dir):
    """As nobody (no privilege), and with a load made to fail: the run goes on through /proc, and the
    recording says why."""
    r = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", js.binary, "run", "-q",
                        "--backend", "bpf", "-i", "0.1", "-o", "n.db", "--", "sleep", "0.3"],
                       cwd=shared_dir, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    used, inv = backends(shared_dir / "n.db")
    assert used == {"procfs"}, used
    assert inv["backend.bpf"].startswith("refused: "), inv
    env = dict(os.environ, JOBSCOPE_BPF_FAULT="load")
    r = subprocess.run([js.binary, "run", "-q", "--backend", "bpf", "-i", "0.1", "-o", str(js.path("f.db")), "--",
                        "sleep", "0.3"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    used, inv = backends(js.path("f.db"))
    assert used == {"procfs"} and inv["backend.bpf"].startswith("refused: "), (used, inv)


@needs_root
def test_auto_backend_stays_on_proc_for_user_and_node(js):
    """auto: a user's processes and the node's are read through /proc however many there are (the reader's
    walk of every task missed the init process on Linux 6.18); --backend bpf still reads them through it."""
    for name, scope in (("u.db", ["--user", "root"]), ("n.db", ["--node", "--top", "3"])):
        r = js("watch", *scope, "-q", "-i", "0.2", "--duration", "1.2s", "-o", js.path(name), timeout=60)
        assert r.returncode == 0, r.stderr
        used, inv = backends(js.path(name))
        assert used == {"procfs"}, (name, used, inv)
        assert "not for a user's or the node's" in inv["backend.bpf"], inv
    if not bpf_built(js):
        return
    r = js("watch", "--node", "--top", "3", "--backend", "bpf", "-q", "-i", "0.2", "--duration", "0.6s", "-o",
           js.path("b.db"), timeout=60)
    assert r.returncode == 0, r.stderr
    assert "bpf-tasks" in backends(js.path("b.db"))[0]


def samples_in(rec):
    try:
        con = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
        try:
            return con.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def test_auto_backend_leaves_small_runs_alone(js):
    """auto: a small tree never pays the reader's load (tenths of a second): /proc."""
    r = js.run(["sleep", "0.3"], interval="0.1s")
    used, inv = backends(r.recording)
    assert used == {"procfs"}, used
    assert "not loaded" in inv["backend.bpf"] or inv["backend.bpf"].startswith("refused"), inv


# ---- issue 25: one load, auto when it pays, descriptors, the reason kept ---------------------------------

TREE = Path(os.environ.get("JOBSCOPE_BUILD", Path(__file__).resolve().parents[2] / "build")) / "bench" / "tree"


def last_inventory(rec, key):
    """The run's value of a proc_tree inventory key: its last row (the inventory is written again when the
    backend changes and at the closing sample), with the sample it was written at."""
    con = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
    try:
        return con.execute("SELECT value, sample FROM inventory WHERE source = 'proc_tree' AND key = ? "
                           "ORDER BY sample DESC, rowid DESC LIMIT 1", (key,)).fetchone()
    finally:
        con.close()


class Tree:
    """bench/tree: N idle processes (a root and N - 1 children in pause())."""

    def __init__(self, n):
        if not TREE.exists():
            pytest.skip(f"{TREE} not built")
        self.p = subprocess.Popen([str(TREE), str(n)], stdout=subprocess.PIPE, text=True)
        self.pid = int(self.p.stdout.readline())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.p.terminate()
        self.p.wait(timeout=30)


def attach_until(js, pid, name, cond, extra=(), timeout=60, env=None, prefix=()):
    """attach to `pid` until cond(recording) holds (checked read-only from outside), then stop it."""
    rec = js.path(f"{name}.db")
    p = subprocess.Popen([*prefix, js.binary, "attach", "-q", "-i", "0.05", "-o", str(rec), *extra, str(pid)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=env, start_new_session=True)
    try:
        def ready():
            try:
                return cond(rec)
            except sqlite3.Error:
                return False
        wait_for(ready, timeout, interval=0.2, what=f"{name}: the condition")
    finally:
        p.terminate()
        _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    return rec


def used_bpf(rec):
    con = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
    try:
        return con.execute("SELECT count(*) FROM tree WHERE backend LIKE 'bpf%'").fetchone()[0] >= 3
    finally:
        con.close()


@needs_root
def test_one_load_for_a_tree_larger_than_the_first_array(js):
    """300 processes, more than the 256 records the output array starts with when nothing says how many to
    expect (--backend bpf loads at the start): the array grows without a reload (it cost a second load of
    0.6 s); with auto, the array is sized from the processes the scope has when it loads: one load, no
    growth."""
    if not bpf_built(js):
        pytest.skip("the BPF reader is not available on this build or kernel")
    with Tree(300) as t:
        rec = attach_until(js, t.pid, "one", used_bpf, extra=["--backend", "bpf"])
    value, _ = last_inventory(rec, "backend.bpf")
    assert value.startswith("loaded at sample 0") and ": 1 load (" in value, value
    assert int(value.split("array of ")[1].split()[0]) >= 300, value
    with Tree(300) as t:
        rec = attach_until(js, t.pid, "auto1", used_bpf)
    value, _ = last_inventory(rec, "backend.bpf")
    assert ": 1 load (" in value and "grown 0 times" in value, value
    # a run whose tree grows past the array after the load: the array grows, the program is not loaded again
    r = js.run([PYTHON, "-c", "import os, time\nfor _ in range(300):\n    if os.fork() == 0:\n        time.sleep(1.5)"
                "\n        os._exit(0)\ntime.sleep(2)"], interval="0.2s", extra=["--backend", "bpf", "--cgroup", "off"])
    assert r.returncode == 0, r.proc.stderr
    value, _ = last_inventory(r.recording, "backend.bpf")
    assert ": 1 load (" in value and "grown 0 times" not in value, value


@needs_root
def test_auto_loads_the_reader_once_it_pays(js):
    """auto without --duration: /proc is used until what it cost beyond the reader reaches the load's cost,
    then the reader is loaded once (the recording says when and why); with --duration, at once when the
    samples left pay for it."""
    if not bpf_built(js):
        pytest.skip("the BPF reader is not available on this build or kernel")
    with Tree(300) as t:
        rec = attach_until(js, t.pid, "auto", used_bpf)
        value, at = last_inventory(rec, "backend.bpf")
        assert value.startswith("loaded at sample ") and ": 1 load (" in value, value
        loaded_at = int(value.split()[3])
        assert loaded_at >= 2, value  # not at the first samples: it had to pay first
        first = sqlite3.connect(f"file:{rec}?mode=ro", uri=True).execute(
            "SELECT value FROM inventory WHERE source = 'proc_tree' AND key = 'backend.bpf' ORDER BY sample "
            "LIMIT 1").fetchone()[0]
        assert first.startswith("not loaded (auto): /proc cost "), first
        r = js("attach", "-q", "-i", "0.05", "--duration", "3s", "-o", js.path("d.db"), str(t.pid), timeout=60)
        assert r.returncode == 0, r.stderr
        value, _ = last_inventory(js.path("d.db"), "backend.bpf")
        assert value.startswith("loaded at sample ") and int(value.split()[3]) <= 2, value
    # one process for a second: never pays
    r = js.run(["sleep", "1"], interval="0.05s")
    value, _ = last_inventory(r.recording, "backend.bpf")
    assert value.startswith("not loaded (auto)"), value


@needs_root
def test_auto_never_competes_with_procfs_for_descriptors(js):
    """A descriptor limit that /proc's kept descriptors fill (the 5000-process case: 19,999 of 20,000 held,
    and the load failed with EMFILE): the descriptors are closed when the reader takes over, the load
    succeeds, and nothing goes unread."""
    if not bpf_built(js):
        pytest.skip("the BPF reader is not available on this build or kernel")
    with Tree(400) as t:
        rec = attach_until(js, t.pid, "fds", used_bpf, prefix=["prlimit", "--nofile=1256:1256"])
    value, _ = last_inventory(rec, "backend.bpf")
    assert value.startswith("loaded at sample ") and ": 1 load (" in value, value
    closed = int(value.rsplit(";", 1)[1].split()[0])
    assert closed >= 900, value  # 200 processes' five descriptors each, at least
    con = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
    assert con.execute("SELECT max(unread) FROM tree WHERE backend LIKE 'bpf%'").fetchone()[0] == 0


@needs_root
def test_auto_records_why_the_reader_failed(js):
    """auto decides after the first sample; a load that fails then is recorded at that sample, not lost
    (the inventory used to be written once, at the first sample)."""
    if not bpf_built(js):
        pytest.skip("the BPF reader is not available on this build or kernel")
    env = dict(os.environ, JOBSCOPE_BPF_FAULT="load")
    with Tree(300) as t:
        rec = attach_until(js, t.pid, "fail", lambda rec: (last_inventory(rec, "backend.bpf") or ("", 0))[0]
                           .startswith("refused"), env=env)
    value, at = last_inventory(rec, "backend.bpf")
    assert value.startswith("refused: BPF load failed: "), value
    assert at > 0
    used, _ = backends(rec)
    assert used == {"procfs"}, used
