# SPDX-License-Identifier: MIT
"""The BPF task reader (src/sources/bpf/) against /proc, field by field, through tests/bpf_compare.

bpf_compare reads a set of processes with the reader, then at once their stat, statm, status, io and fd count,
and prints both (see its header). The processes compared here are idle while they are read (a multi-threaded
process whose exited threads did I/O and burned CPU, that reaped children and keeps a zombie; a plain sleeper;
a stopped one; one in its own PID namespace), so every counter must be equal, not merely close. Tolerances
apply only to the one busy process (test_busy_process) and are given there.

Also: the reader inside a PID namespace (PIDs as that namespace shows them), the cgroup mode (a cgroup v2
subtree), the follow mode (children and grandchildren of a process found in the pass), a pass larger than the
first output array (the reload path), and the fallbacks: no privilege (an unprivileged user; capabilities
dropped), a failing load, no kernel BTF, and a build with -Dbpf=disabled.

Needs root, and the reader built and loadable here (bpf_compare --available); otherwise the tests are skipped
with the reason.
"""
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import PYTHON, REPO, WORKLOADS, kill_quietly, wait_for

BUILD = Path(os.environ.get("JOBSCOPE_BUILD", REPO / "build"))
COMPARE = BUILD / "tests" / "bpf_compare"
TREE = BUILD / "bench" / "tree"

# fields both sides have (bpf_compare names them alike); "proc" may lack a field (no mm: zombie)
FIELDS = ["pid", "ppid", "start_ticks", "state", "comm", "utime", "stime", "cutime", "cstime", "threads",
          "minflt", "majflt", "cminflt", "cmajflt", "processor", "vsize", "stat_rss_pages", "rss", "shared",
          "rss_anon", "rss_file", "rss_shmem", "swap", "hwm", "vcsw", "ivcsw", "uid", "rchar", "wchar", "syscr",
          "syscw", "read_bytes", "write_bytes", "cancelled_write_bytes", "fds"]
FLAG_RSS_EXACT = 1 << 1
FLAG_DISCOVERED = 1 << 4
FLAG_REUSED = 1 << 7


def run_compare(*args, env=None, prefix=(), timeout=60):
    proc = subprocess.run([*prefix, str(COMPARE), *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=timeout)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return proc, lines


def availability():
    if os.geteuid() != 0:
        return "needs root"
    if not COMPARE.exists():
        return f"{COMPARE} not built"
    proc, lines = run_compare("--available")
    if proc.returncode != 0 or not lines:
        return f"bpf_compare --available failed: {proc.stderr.strip()}"
    a = lines[0]["available"]
    return None if a["rc"] == 0 else f"BPF reader not available: {a['errno']}: {a['why']}"


SKIP = availability()
needs_bpf = pytest.mark.skipif(SKIP is not None, reason=SKIP or "")


def passes(*args, **kw):
    proc, lines = run_compare(*args, **kw)
    assert proc.returncode == 0, f"bpf_compare failed ({proc.returncode}): {proc.stderr}\n{proc.stdout}"
    for line in lines:
        assert "procs" in line, line
    return lines


def by_pid(line):
    return {p["pid"]: p for p in line["procs"]}


def assert_equal_fields(entry, fields=FIELDS, skip=()):
    """Every field /proc shows equals the reader's."""
    bpf, proc = entry["bpf"], entry["proc"]
    assert proc is not None, f"pid {entry['pid']} vanished before /proc was read"
    diffs = {f: (bpf.get(f), proc[f]) for f in fields if f in proc and f not in skip and bpf.get(f) != proc[f]}
    assert not diffs, f"pid {entry['pid']} ({bpf['comm']}): bpf != /proc: {diffs}"
    missing = [f for f in fields if f in proc and f not in bpf and f not in skip]
    assert not missing, f"pid {entry['pid']}: reader lacks {missing}"


@pytest.fixture
def workload(tmp_path):
    ready = tmp_path / "ready.json"
    proc = subprocess.Popen([PYTHON, str(WORKLOADS / "bpf_workload.py"), str(ready)])
    try:
        info = wait_for(lambda: ready.exists() and json.loads(ready.read_text()), 60, what="bpf_workload ready")
        time.sleep(0.2)  # let the last counters settle (the write of the ready file, the rename)
        yield info
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def sleepers():
    """A plain sleeper, a stopped one, and one in a new PID namespace (its host PID)."""
    plain = subprocess.Popen(["sleep", "100000"])
    stopped = subprocess.Popen(["sleep", "100000"])
    os.kill(stopped.pid, signal.SIGSTOP)
    ns = subprocess.Popen(["unshare", "-p", "-f", "--mount-proc", "sleep", "100000"])

    def ns_child():
        try:
            kids = Path(f"/proc/{ns.pid}/task/{ns.pid}/children").read_text().split()
        except FileNotFoundError:
            return None
        return int(kids[0]) if kids else None

    inner = wait_for(ns_child, 10, what="the sleep in the new PID namespace")

    def stopped_state():
        return Path(f"/proc/{stopped.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"

    wait_for(stopped_state, 5, what="the stopped sleeper")
    time.sleep(0.1)
    yield {"plain": plain.pid, "stopped": stopped.pid, "ns_outer": ns.pid, "ns_inner": inner}
    for p in (plain, stopped, ns):
        kill_quietly(p.pid)
        p.wait()
    kill_quietly(inner)


@needs_bpf
@pytest.mark.timing
def test_fields_match_proc(workload, sleepers):
    w, s = workload, sleepers
    pids = [w["pid"], w["zombie"], w["shell"], w["grandchild"], s["plain"], s["stopped"], s["ns_outer"],
            s["ns_inner"]]
    # two passes: the second also checks that the reader's own state (the utime/stime carry) changes nothing
    lines = passes(*pids, "--passes", "2")
    for line in lines:
        assert line["info"]["rss_exact"], f"per-CPU offsets not found (step {line['info']['pcpu_step']})"
        got = by_pid(line)
        assert sorted(got) == sorted(pids)
        for pid in pids:
            assert_equal_fields(got[pid])
            assert got[pid]["bpf"]["flags"] & FLAG_RSS_EXACT or got[pid]["bpf"]["state"] == "Z"

        main = got[w["pid"]]["bpf"]
        # live threads are summed by walking the group: main thread + the blocked ones
        assert main["threads"] == main["threads_walked"] == 1 + w["live_threads"]
        # the exited threads' I/O is in the total (signal->ioac), and their CPU in cpu_ns
        assert main["rchar"] >= w["dead_thread_rchar"]
        assert main["wchar"] >= 4 * 1024 * 1024
        assert main["utime_ns"] + main["stime_ns"] == main["cpu_ns"]
        assert main["cpu_ns"] >= 4 * 40_000_000  # the four exited threads burned 40 ms each
        # reaped children: their CPU and faults moved into cutime/cstime/cminflt
        assert main["cutime"] + main["cstime"] >= 3 * 6 - 3
        assert main["cminflt"] >= 3 * 2048
        # memory by type, exact
        assert main["rss_anon"] >= w["anon_bytes"]
        assert main["rss_shmem"] >= w["shmem_bytes"]
        assert main["rss_file"] > 0
        assert main["hwm"] >= main["rss"]
        assert main["fds"] >= 3

        assert got[w["zombie"]]["bpf"]["state"] == "Z"
        assert got[s["stopped"]]["bpf"]["state"] == "T"
        assert got[s["plain"]]["bpf"]["state"] == "S"
        assert got[w["grandchild"]]["bpf"]["ppid"] == w["shell"]
        # the sleep in its own PID namespace is PID 1 there; the reader gives the PIDs of its own namespace
        inner = got[s["ns_inner"]]["bpf"]
        assert inner["pid"] == inner["host_pid"] == s["ns_inner"]
        assert inner["ppid"] == s["ns_outer"]


@needs_bpf
def test_reused_records_match_proc(tmp_path):
    """A process that has not run since the last pass is not read whole again: its record is completed from the
    last full one (flag REUSED), memory read again. Every pass must still equal /proc, field by field: passes
    after the process changed (CPU, heap, a descriptor, I/O: it was kicked between them) are full reads, the
    passes after those reuse, and a process read whole but for its memory shows its memory as it is now."""
    ack = tmp_path / "ack"
    kicked = subprocess.Popen([PYTHON, str(WORKLOADS / "kicked.py"), str(ack)])
    plain = subprocess.Popen(["sleep", "100000"])
    try:
        wait_for(lambda: ack.exists() and ack.read_text() == "0", 30, what="kicked.py ready")
        time.sleep(0.2)
        # passes 0 1 | kick | 2 3 | kick | 4 5: a kick before passes 2 and 4
        lines = passes(kicked.pid, plain.pid, "--passes", "6", "--interval-ms", "50", "--kick", kicked.pid,
                       "--ack", ack, "--kick-every", "2")
        prev = None
        for k, line in enumerate(lines):
            got = by_pid(line)
            for pid in (kicked.pid, plain.pid):
                assert_equal_fields(got[pid])
            b = got[kicked.pid]["bpf"]
            reused = bool(b["flags"] & FLAG_REUSED)
            if k in (0, 2, 4):
                assert not reused, f"pass {k}: the kicked process ran since the last pass"
            else:
                assert reused, f"pass {k}: the kicked process had not run since pass {k - 1}"
            if k in (1, 3, 5):
                assert got[plain.pid]["bpf"]["flags"] & FLAG_REUSED
            if k in (2, 4):  # what the kick changed is in the full record
                assert b["rss"] >= prev["rss"] + 8 * 1024 * 1024 * 0.9
                assert b["fds"] == prev["fds"] + 1
                assert b["wchar"] >= prev["wchar"] + 65536
                assert b["cpu_ns"] >= prev["cpu_ns"] + 25_000_000
            prev = b
        assert lines[-1]["info"]["reused"] >= 5  # 3 x plain, 2 x kicked (before: pass 5's)
    finally:
        for p in (kicked, plain):
            p.kill()
            p.wait()


@needs_bpf
def test_reuse_needs_the_same_place(tmp_path):
    """A record is reused in place: only while the process holds the place its last full record had in the
    output (the same slot, pass after pass). A process that leaves moves every later one up a slot: those are
    read whole in that pass (equal to /proc), and reused again in the next; one before it keeps its slot."""
    ack = tmp_path / "ack"
    first, leaving, last = (subprocess.Popen(["sleep", "100000"]) for _ in range(3))  # in this (creation) order
    try:
        time.sleep(0.2)
        cmp = subprocess.Popen([str(COMPARE), str(first.pid), str(leaving.pid), str(last.pid), "--passes", "4",
                                "--kick", "0", "--ack", str(ack), "--kick-every", "2"], stdout=subprocess.PIPE,
                               text=True)
        lines = [json.loads(cmp.stdout.readline()) for _ in range(2)]  # passes 0 and 1; then it waits
        leaving.kill()
        leaving.wait()  # reaped: gone from the task list, `last` moves up a slot
        ack.write_text("1")
        lines += [json.loads(cmp.stdout.readline()) for _ in range(2)]
        assert cmp.wait(timeout=60) == 0
        reused = []
        for line in lines:
            got = by_pid(line)
            for pid in (first.pid, last.pid):
                assert_equal_fields(got[pid])
            reused.append({pid: bool(got[pid]["bpf"]["flags"] & FLAG_REUSED) for pid in (first.pid, last.pid)})
        assert [r[first.pid] for r in reused] == [False, True, True, True], reused
        assert [r[last.pid] for r in reused] == [False, True, False, True], reused
    finally:
        for p in (first, leaving, last):
            p.kill()
            p.wait()


@needs_bpf
def test_filter_drop_is_seen_at_once():
    """A process in the slot its record had in the last pass is reported again without a lookup in the filter,
    but only while the filter lost no entry: one taken out of the filter while it still runs (a process that
    left a v1 cgroup) is no longer reported from the next pass on, and the others still are."""
    a, b, c = (subprocess.Popen(["sleep", "100000"]) for _ in range(3))
    try:
        time.sleep(0.1)
        lines = passes(a.pid, b.pid, c.pid, "--passes", "4", "--interval-ms", "20", "--drop", b.pid,
                       "--drop-at", "2")
        got = [sorted(by_pid(line)) for line in lines]
        both = sorted([a.pid, c.pid])
        assert got == [sorted([a.pid, b.pid, c.pid])] * 2 + [both] * 2, got
        for line in lines[2:]:
            for pid in both:
                assert_equal_fields(by_pid(line)[pid])
    finally:
        for p in (a, b, c):
            p.kill()
            p.wait()


PAGED = """
import mmap, os, sys, time
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
s = sum(m[i] for i in range(0, len(m), 4096))
open(sys.argv[2] + ".tmp", "w").write("ready")
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
while True:
    time.sleep(1000)
"""


def page_out(pid, path):
    """MADV_PAGEOUT, from this process, of `pid`'s mapping of `path` (process_madvise, Linux 5.10): its clean
    file pages leave its RSS while it sleeps. Returns the bytes advised, or None where the kernel refuses."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    start = end = None
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        if line.endswith(str(path)):
            a, b = (int(x, 16) for x in line.split()[0].split("-"))
            start, end = (a if start is None else start), b
    if start is None:
        return None

    class Iovec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    pidfd = os.pidfd_open(pid)
    try:
        iov = Iovec(start, end - start)
        libc.syscall.restype = ctypes.c_long
        n = libc.syscall(440, pidfd, ctypes.byref(iov), 1, 21, 0)  # process_madvise, MADV_PAGEOUT
        return n if n > 0 else None
    finally:
        os.close(pidfd)


@needs_bpf
def test_reused_record_reads_memory_again(tmp_path):
    """A process that sleeps while its pages are reclaimed (here: paged out from outside with process_madvise)
    has not run, so its record is reused, yet its RSS is read again: it drops with /proc's."""
    data = tmp_path / "data"
    data.write_bytes(os.urandom(1 << 20) * 32)
    ready, ack = tmp_path / "ready", tmp_path / "ack"
    sleeper = subprocess.Popen([PYTHON, "-c", PAGED, str(data), str(ready)])
    try:
        wait_for(ready.exists, 30, what="the mapping touched")
        time.sleep(0.2)
        cmp = subprocess.Popen([str(COMPARE), str(sleeper.pid), "--passes", "3", "--kick", "0", "--ack", str(ack),
                                "--kick-every", "2"], stdout=subprocess.PIPE, text=True)
        lines = [json.loads(cmp.stdout.readline()) for _ in range(2)]  # passes 0 and 1; then it waits
        advised = page_out(sleeper.pid, data)
        ack.write_text("1")
        lines.append(json.loads(cmp.stdout.readline()))
        assert cmp.wait(timeout=60) == 0
        if advised is None:
            pytest.skip("process_madvise(MADV_PAGEOUT) refused here")
        recs = [by_pid(line)[sleeper.pid] for line in lines]
        for e in recs:
            assert_equal_fields(e)
        assert recs[1]["bpf"]["flags"] & FLAG_REUSED and recs[2]["bpf"]["flags"] & FLAG_REUSED
        assert recs[2]["bpf"]["rss_file"] <= recs[1]["bpf"]["rss_file"] - 16 * 1024 * 1024, (recs[1], recs[2])
    finally:
        sleeper.kill()
        sleeper.wait()


@needs_bpf
def test_reader_inside_a_pid_namespace(tmp_path):
    """bpf_compare as PID 1 of a new namespace: every process it reports is one that namespace's /proc shows,
    under the same (namespace) PID, and nothing else."""
    script = f"sleep 100000 & sleep 100000 & exec {COMPARE} --all"
    proc = subprocess.run(["unshare", "-p", "-f", "--mount-proc", "sh", "-c", script], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    line = json.loads(proc.stdout.splitlines()[0])
    got = by_pid(line)
    assert sorted(got) == [1, 2, 3], got.keys()
    assert got[1]["bpf"]["comm"] == "bpf_compare" and got[1]["bpf"]["ppid"] == 0
    for pid in (2, 3):
        assert got[pid]["bpf"]["comm"] == "sleep"
        assert got[pid]["bpf"]["ppid"] == 1
        assert got[pid]["bpf"]["host_pid"] > 3
        assert_equal_fields(got[pid])
    # bpf_compare itself is busy reading /proc between the two reads: identity only
    assert_equal_fields(got[1], fields=["pid", "ppid", "start_ticks", "comm", "threads", "uid"])


@needs_bpf
def test_busy_process():
    """A process burning CPU: the reader is read first, /proc right after, so /proc may be ahead by the time
    between the reads (a few ms: allow 3 ticks) and never behind; utime and stime never go backwards from
    pass to pass, and always add up to the scheduler's runtime. (The runtime of a thread on a CPU is brought
    up to date at each scheduler tick, so two passes less than a tick apart may see the same figure.)"""
    burner = subprocess.Popen([PYTHON, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        lines = passes(burner.pid, "--passes", "6", "--interval-ms", "20")
        prev = None
        assert by_pid(lines[-1])[burner.pid]["bpf"]["cpu_ns"] > by_pid(lines[0])[burner.pid]["bpf"]["cpu_ns"]
        for line in lines:
            e = by_pid(line)[burner.pid]
            b, p = e["bpf"], e["proc"]
            assert b["utime_ns"] + b["stime_ns"] == b["cpu_ns"]
            total_b, total_p = b["utime"] + b["stime"], p["utime"] + p["stime"]
            assert total_b - 1 <= total_p <= total_b + 3, (b, p)
            assert_equal_fields(e, fields=["pid", "ppid", "start_ticks", "comm", "threads", "uid", "cutime"])
            if prev:
                assert b["utime_ns"] >= prev["utime_ns"] and b["stime_ns"] >= prev["stime_ns"]
                assert b["cpu_ns"] >= prev["cpu_ns"]
            prev = b
    finally:
        burner.kill()
        burner.wait()


@needs_bpf
def test_follow_finds_descendants(workload):
    """A filter entry for the workload as a parent only: its children (the zombie, the shell) and the shell's
    child are reported in the same pass, flagged as discovered, and the workload itself is not."""
    w = workload
    lines = passes("--follow", "--parent", w["pid"])
    got = by_pid(lines[0])
    assert w["pid"] not in got
    for pid in (w["zombie"], w["shell"], w["grandchild"]):
        assert pid in got, f"{pid} not found; got {sorted(got)}"
        assert got[pid]["bpf"]["flags"] & FLAG_DISCOVERED
        assert_equal_fields(got[pid])
    assert lines[0]["info"]["filter_size"] >= 4


@needs_bpf
def test_more_processes_than_the_first_array():
    """300 processes: more than the output array holds at first (256), so the pass puts a larger array in
    place of the first and runs again, without loading the program again (one load, one verification);
    every process is still reported once and matches /proc."""
    if not TREE.exists():
        pytest.skip(f"{TREE} not built")
    tree = subprocess.Popen([str(TREE), "300"], stdout=subprocess.PIPE, text=True)
    try:
        root = int(tree.stdout.readline())
        kids = Path(f"/proc/{root}/task/{root}/children").read_text()
        pids = [root] + [int(x) for x in kids.split()]
        assert len(pids) == 300
        line = passes(*pids)[0]
        assert line["info"]["grows"] >= 1 and line["info"]["capacity"] >= 300
        assert line["info"]["loads"] == 1, line["info"]
        got = by_pid(line)
        assert sorted(got) == sorted(pids)
        for pid in pids:
            assert_equal_fields(got[pid])
    finally:
        tree.send_signal(signal.SIGTERM)
        tree.wait(timeout=30)


def cgroup2_root():
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, right = line.split(" - ", 1)
        if right.split()[0] == "cgroup2":
            return Path(left.split()[4])
    return None


@pytest.fixture
def cgroup():
    root = cgroup2_root()
    if root is None or not os.access(root, os.W_OK):
        pytest.skip("no writable cgroup v2 mount")
    top = root / f"jobscope-bpf-test-{os.getpid()}"
    sub = top / "sub"
    sub.mkdir(parents=True)
    procs = []
    try:
        yield top, sub, procs
    finally:
        for p in procs:
            kill_quietly(p.pid)
            p.wait()
        for d in (sub, top):
            deadline = time.monotonic() + 5
            while True:
                try:
                    d.rmdir()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)


@needs_bpf
def test_cgroup_mode(cgroup):
    """The processes of a cgroup and its child cgroup, and no other, each matching /proc."""
    top, sub, procs = cgroup
    for where in (top, top, sub):
        p = subprocess.Popen(["sleep", "100000"])
        procs.append(p)
        (where / "cgroup.procs").write_text(str(p.pid))
    time.sleep(0.1)
    lines = passes("--mode", "cgroup", "--cgroup", top, "--passes", "2")
    for line in lines:
        got = by_pid(line)
        assert sorted(got) == sorted(p.pid for p in procs)
        assert line["info"]["cgroups"] == 2
        for e in got.values():
            assert_equal_fields(e)
    # only the child cgroup
    line = passes("--mode", "cgroup", "--cgroup", sub)[0]
    assert sorted(by_pid(line)) == [procs[2].pid]


@needs_bpf
def test_cgroup_removed(cgroup):
    """The cgroup goes away between passes: the pass says so (ENOENT) instead of reporting nothing."""
    top, sub, procs = cgroup
    gone = top / "gone"
    gone.mkdir()
    # the first pass, then 1.5 s in which the test removes the cgroup, then a second pass
    script = f"exec {COMPARE} --mode cgroup --cgroup {gone} --passes 2 --interval-ms 1500"
    proc = subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    assert json.loads(first)["procs"] == []
    gone.rmdir()
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1 and "read: No such file or directory" in err, (out, err)


@needs_bpf
def test_cgroup_mode_rejects_a_non_cgroup(tmp_path):
    proc, lines = run_compare("--mode", "cgroup", "--cgroup", tmp_path)
    assert proc.returncode == 3
    assert lines[0]["open"]["errno"] == "EINVAL" and "cgroup v2" in lines[0]["open"]["why"]


# ---- fallbacks ----

def open_error(proc, lines):
    assert proc.returncode == 3, f"expected a refused open, got rc {proc.returncode}: {proc.stdout} {proc.stderr}"
    return lines[0]["open"]


@needs_bpf
def test_no_privilege_unprivileged_user():
    if not shutil.which("setpriv"):
        pytest.skip("no setpriv")
    err = open_error(*run_compare(os.getpid(), prefix=["setpriv", "--reuid=65534", "--regid=65534",
                                                       "--clear-groups"]))
    assert err["errno"] == "EPERM" and "CAP_BPF" in err["why"]


@needs_bpf
def test_no_privilege_capabilities_dropped():
    """Root, but with every capability dropped from the bounding set (so none survives exec)."""
    if not shutil.which("setpriv"):
        pytest.skip("no setpriv")
    err = open_error(*run_compare(os.getpid(), prefix=["setpriv", "--inh-caps=-all", "--bounding-set=-all"]))
    assert err["errno"] == "EPERM" and "CAP_PERFMON" in err["why"]


@needs_bpf
def test_load_failure_gives_the_reason():
    env = dict(os.environ, JOBSCOPE_BPF_FAULT="load")
    err = open_error(*run_compare(os.getpid(), env=env))
    assert err["errno"] == "EINVAL"
    assert "BPF load failed" in err["why"] and "pid_filter" in err["why"]


@needs_bpf
def test_no_btf_gives_the_reason(tmp_path):
    err = open_error(*run_compare("--sysfs", tmp_path, os.getpid()))
    assert err["errno"] == "ENOENT" and "no kernel BTF" in err["why"]
    env = dict(os.environ, JOBSCOPE_BPF_FAULT="btf")
    err = open_error(*run_compare(os.getpid(), env=env))
    assert err["errno"] == "ENOENT" and "no kernel BTF" in err["why"]


def test_build_without_bpf_says_absent(tmp_path_factory):
    """meson -Dbpf=disabled: the library builds without clang, bpftool and libbpf, and the reader says it is
    absent."""
    if not shutil.which("meson") or not shutil.which("ninja"):
        pytest.skip("no meson/ninja")
    build = tmp_path_factory.mktemp("nobpf")
    setup = subprocess.run(["meson", "setup", str(build), "-Dbpf=disabled", "-Dintegration=disabled"],
                           cwd=REPO, capture_output=True, text=True, timeout=300)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    config = (build / "config.h").read_text()
    assert "JOBSCOPE_HAVE_BPF" not in config
    ninja = subprocess.run(["ninja", "-C", str(build), "tests/bpf_compare"], capture_output=True, text=True,
                           timeout=600)
    assert ninja.returncode == 0, ninja.stdout + ninja.stderr
    proc = subprocess.run([str(build / "tests" / "bpf_compare"), "--available"], capture_output=True, text=True,
                          timeout=30)
    a = json.loads(proc.stdout)["available"]
    assert a["errno"] == "EOPNOTSUPP" and "built without the BPF reader" in a["why"]
    proc = subprocess.run([str(build / "tests" / "bpf_compare"), str(os.getpid())], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 3 and json.loads(proc.stdout)["open"]["errno"] == "EOPNOTSUPP"
