# SPDX-License-Identifier: MIT
"""`run --cgroup auto` on this machine (issue 7): the command in a cgroup of its own, exact totals from it.

Needs root (a cgroup can be made under every v1 hierarchy and the v2 mount); skipped otherwise. The checks:
a 300 MiB spike between two samples is caught by the cgroup's tree high-water mark; the CPU of 300
short-lived children agrees with the tree accounting within 1%; children auto-reaped under SIGCHLD=SIG_IGN,
whose CPU the tree loses, are counted by the cgroup; the cgroup is removed at the end and a process left in
it is named in one warning; `--cgroup off`; a user who may not make a cgroup falls back with one line.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import MiB, PYTHON, assert_no_crash, kill_quietly, read_pidfile, stderr_lines, wait_for

IS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not IS_ROOT, reason="making a cgroup needs root here (no delegated v2 subtree)")


def meta(recording, key):
    with sqlite3.connect(str(recording)) as db:
        row = db.execute("select value from meta where key = ?", (key,)).fetchone()
    return row[0] if row else None


def cgroup_dirs(recording):
    """The directories of the run's cgroup (inventory cgroup.path.*), one per hierarchy."""
    with sqlite3.connect(str(recording)) as db:
        rows = db.execute("select distinct value from inventory where source = 'cgroup' and key like 'cgroup.path.%'")
        return sorted({r[0] for r in rows})


def cgroup_samples(recording, column, table="cgroup_memory"):
    with sqlite3.connect(str(recording)) as db:
        return [r[0] for r in db.execute(f"select {column} from {table} order by sample")]


@pytest.fixture(scope="module")
def cgroup_ok(jobscope_bin, tmp_path_factory):
    """Whether this machine lets jobscope make a cgroup (checked once with a trivial run)."""
    if not IS_ROOT:
        pytest.skip("not root")
    tmp = tmp_path_factory.mktemp("probe")
    sj = tmp / "s.json"
    proc = subprocess.run([str(jobscope_bin), "run", "-q", "-o", str(tmp / "p.db"), "--summary-json", str(sj), "--", "true"],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0 or "cgroup" not in sj.read_text():
        pytest.skip(f"no cgroup could be made here: {proc.stderr.strip()}")
    return True


@needs_root
def test_spike_between_samples_caught_by_cgroup_peak(js, workload, cgroup_ok):
    """300 MiB touched and freed between two samples: no sample sees it, the cgroup's high-water mark does.

    The issue asks for the spike within a fraction of a 1 s interval; on this VM first-touch page faults run
    at about 60 MB/s (300 MiB take about 5 s, the host backs each page on demand), so the interval is made
    longer than the spike instead: samples at 0 s and at the exit, the spike in between.
    """
    r = js.run([PYTHON, workload("spike_mem.py"), "300", "0.5", "0.05", "0"], interval="60s", timeout=120)
    assert r.returncode == 0, r.proc.stderr
    cg = r.summary["cgroup"]
    peak = cg["memory"]["peak_kernel_tree_bytes"]
    assert peak >= 300 * MiB, cg["memory"]
    assert cg["memory"]["peak_kernel_tree_method"].startswith("kernel:")
    # what the samples saw: far below the spike, for the cgroup's usage and for the tree's RSS
    sampled = max(v for v in cgroup_samples(r.recording, "current_bytes") if v is not None)
    assert sampled < 100 * MiB, f"a sample landed in the spike ({sampled / MiB:.0f} MiB)"
    assert cg["memory"]["peak_sampled_bytes"] == sampled
    assert r.summary["memory"]["peak_rss_sum_bytes"] < 100 * MiB
    assert r.summary["memory"]["peak_bytes"] >= peak  # the headline: the cgroup's high-water mark (or above)
    assert cg["memory"]["anon_peak_bytes"] < 100 * MiB  # sampled too
    assert "allocation" in r.summary


@needs_root
def test_short_children_cpu_agrees_within_1pct(js, workload, cgroup_ok):
    """300 short-lived children: the tree total (reaped rusage) and the cgroup's cpuacct.usage/cpu.stat agree."""
    r = js.run([PYTHON, workload("short_children.py"), "300", "2", "0.01"], interval="1s", timeout=300)
    assert r.returncode == 0, r.proc.stderr
    tree = r.summary["cpu"]["tree_total_s"]
    cg = r.summary["cgroup"]["cpu"]["total_s"]
    assert r.summary["cpu"]["total_s"] == pytest.approx(cg, rel=1e-9)  # the summary's total is the cgroup's
    assert r.summary["exact"]["cpu"] is True
    assert cg > 2.5, r.summary["cgroup"]["cpu"]  # 300 x 10 ms plus the interpreters
    assert abs(cg - tree) <= 0.01 * cg, f"tree {tree:.4f} s vs cgroup {cg:.4f} s"
    assert r.summary["cgroup"]["cpu"]["tree_total_s"] == pytest.approx(tree, rel=1e-6)
    assert r.summary["cgroup"]["created"] is True


@needs_root
def test_auto_reaped_children_counted_by_cgroup(js, workload, cgroup_ok):
    """SIGCHLD ignored: the kernel reaps the children, no cutime carries their CPU; the cgroup has it. (The tree
    keeps what sampling saw of each child before it vanished: less than the cgroup by what each did after its
    last sample, which shrinks as a loaded machine stretches the children's lives.)"""
    r = js.run([PYTHON, workload("sigign_children.py"), "5", "0.3"], interval="1s", timeout=120)
    assert r.returncode == 0, r.proc.stderr
    cg = r.summary["cgroup"]["cpu"]["total_s"]
    tree = r.summary["cpu"]["tree_total_s"]
    assert cg >= 0.9 * 5 * 0.3, r.summary["cgroup"]["cpu"]
    assert cg - tree >= 0.05, f"tree {tree:.3f} s should miss part of the children's CPU (cgroup {cg:.3f} s)"


@needs_root
def test_command_inside_and_cgroup_removed(js, cgroup_ok):
    out = js.path("cg.txt")
    r = js.run(["sh", "-c", f"cat /proc/self/cgroup > {out}"], interval="1s")
    assert r.returncode == 0, r.proc.stderr
    text = out.read_text()
    name = Path(meta(r.recording, "cgroup_path")).name
    assert name.startswith("jobscope-")
    # in every hierarchy jobscope made it in, from the first instruction (cat ran in it)
    assert sum(name in line for line in text.splitlines()) >= 2, text
    dirs = cgroup_dirs(r.recording)
    assert dirs and all(name in d for d in dirs if not d.endswith("/cpuset")), dirs
    for d in dirs:
        if name in d:
            assert not os.path.exists(d), f"{d} left behind"
    assert meta(r.recording, "cgroup_version") in ("v1", "v2", "hybrid")
    assert r.proc.stderr == ""


@needs_root
def test_leftover_process_named_once(js, cgroup_ok):
    """--until-main-exits leaves a process in the cgroup: named in one warning, moved out at exit, cgroup gone."""
    pidfile = js.path("bg.pid")
    r = js.run(["sh", "-c", f"sleep 30 & echo $! > {pidfile}"], interval="1s", extra=["--until-main-exits"])
    pid = read_pidfile(pidfile)
    try:
        assert r.returncode == 0
        lines = stderr_lines(r.proc)
        assert len(lines) == 1, r.proc.stderr
        assert "still in it" in lines[0] and str(pid) in lines[0], lines[0]
        name = Path(meta(r.recording, "cgroup_path")).name
        for d in cgroup_dirs(r.recording):
            if name in d:
                assert not os.path.exists(d), f"{d} left behind"
        # the sleeper lives on, in the cgroup that encloses the run's
        assert os.path.exists(f"/proc/{pid}")
        assert name not in Path(f"/proc/{pid}/cgroup").read_text()
    finally:
        kill_quietly(pid)
        # should the removal have failed, leave no cgroup behind
        for d in cgroup_dirs(r.recording):
            if "jobscope-" in d and os.path.isdir(d):
                wait_for(lambda d=d: _rmdir(d), 5, what=f"rmdir {d}")


def _rmdir(d):
    try:
        os.rmdir(d)
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False


@needs_root
def test_cgroup_off(js, cgroup_ok):
    out = js.path("cg.txt")
    r = js.run(["sh", "-c", f"cat /proc/self/cgroup > {out}"], interval="1s", extra=["--cgroup", "off"])
    assert r.returncode == 0, r.proc.stderr
    assert "cgroup" not in r.summary
    assert "jobscope-" not in out.read_text()
    assert meta(r.recording, "cgroup_path") is None
    # the allocation is still resolved, from the command's own cgroup and affinity mask
    assert r.summary["allocation"]["cores"] >= 1
    assert r.proc.stderr == ""


@needs_root
def test_unprivileged_user_falls_back_with_one_line(js, jobscope_bin, cgroup_ok):
    # pytest's own temporary directories are private to root: nobody writes in a directory of its own
    work = Path(tempfile.mkdtemp(prefix="jobscope-nobody-"))
    try:
        os.chmod(work, 0o777)
        rec, sj = work / "nobody.db", work / "nobody.json"
        proc = subprocess.run(
            ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", str(jobscope_bin), "run", "-q", "-i",
             "1s", "-o", str(rec), "--summary-json", str(sj), "--", "sh", "-c", "exit 3"],
            cwd=str(work), capture_output=True, text=True, timeout=60)
        assert_no_crash(proc)
        assert proc.returncode == 3, proc.stderr
        lines = stderr_lines(proc)
        assert len(lines) == 1, proc.stderr
        assert "no cgroup for the command" in lines[0] and "tree only" in lines[0], lines[0]
        summary = json.loads(sj.read_text())
        assert "cgroup" not in summary
        assert summary["cpu"]["total_s"] is not None
        assert meta(rec, "cgroup_error")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_bad_cgroup_option(js):
    proc = js("run", "--cgroup", "maybe", "--", "true")
    assert proc.returncode == 2, proc.stderr
    assert "--cgroup" in proc.stderr
    proc = js("attach", "--cgroup", "off", str(os.getpid()))
    assert proc.returncode == 2, proc.stderr
