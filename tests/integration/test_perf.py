# SPDX-License-Identifier: MIT
"""perf_event counters of `jobscope run` (issue 8, perf): software counters against independent oracles,
hardware events recorded missing where the machine has none, and an unprivileged run.

Oracles:
- task-clock against the summary's exact CPU total (cpu.total_s: the kernel's rusage of every reaped
  descendant, an accounting perf_event does not use).
- page faults and context switches against the workload's own getrusage(RUSAGE_SELF) + RUSAGE_CHILDREN,
  written by the command itself after reaping its children (workloads/perf_oracle.py): the kernel's rusage
  fields of the very same processes, not perf_event's counters and not jobscope's figures.

What the counters cannot see, and the tolerances allow for (docs/METRICS.md, perf):
- the command's own time between fork and exec (enable_on_exec starts counting at exec), including the
  one context switch of waiting to be released and the faults of jobscope's forked copy;
- each task's exit from the moment the kernel folds its counters into its parent's: on Linux 6.18 that
  happens before the address space is torn down, so the teardown's CPU time and the task's last context
  switch are not counted (measured here: about 1-2 ms of CPU per process).
"""
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import PYTHON, assert_no_crash

SOFTWARE = ["task_clock_ns", "context_switches", "cpu_migrations", "page_faults", "minor_faults", "major_faults"]
HARDWARE = ["cycles", "instructions", "cache_references", "cache_misses", "branch_instructions", "branch_misses"]
ERRNO_PREFIX = ("ENOENT:", "EOPNOTSUPP:", "EACCES:", "ENODEV:", "EINVAL:", "ENOTSUP:")


def has_hardware_pmu():
    """Whether the kernel offers a core PMU (the `cpu` event source, or `cpu_core` on hybrid CPUs)."""
    base = Path("/sys/bus/event_source/devices")
    return (base / "cpu").exists() or (base / "cpu_core").exists() or (base / "armv8_pmuv3_0").exists()


def paranoid():
    try:
        return int(Path("/proc/sys/kernel/perf_event_paranoid").read_text())
    except (OSError, ValueError):
        return None


def inventory(db):
    with sqlite3.connect(db) as c:
        return dict(c.execute("SELECT key, value FROM inventory WHERE source = 'perf'").fetchall())


@pytest.fixture
def perf_children(jobscope_bin):
    """The C workload built with the binary (tests/meson.build): perf_children COUNT PARALLEL MS."""
    build = os.environ.get("JOBSCOPE_BUILD")
    for p in ([Path(build) / "tests" / "perf_children"] if build else []) + [
        Path(jobscope_bin).parent / "tests" / "perf_children"
    ]:
        if p.is_file() and os.access(p, os.X_OK):
            return str(p.resolve())
    pytest.skip("tests/perf_children not built next to the jobscope binary")


def stolen_s():
    """The node's time spent on interrupts and stolen by the hypervisor so far (/proc/stat irq + softirq + steal,
    every CPU), in seconds: time a task may be charged by task-clock (perf's clock runs on) and not by the
    scheduler's runtime (rq_clock_task leaves it out)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return sum(int(x) for x in fields[6:9]) / os.sysconf("SC_CLK_TCK")


@pytest.mark.timing
def test_task_clock_of_short_children_matches_exact_cpu(js, perf_children):
    """200 children, each burning 100 ms of CPU and gone well within the 1 s interval. (Each child's exit
    after its counters were folded, about 1-2 ms here, must stay well under 2% of its life: hence 100 ms.)
    task-clock counts on perf's clock while a task is on a CPU, the exact total on the scheduler's runtime,
    which leaves out interrupt and stolen time: task-clock may exceed it by that much, and no more (it did by
    0.2% unloaded and 0.4% under load on this VM, past the 0.1% + 5 ms once allowed; by 2.2% on a CI machine).
    Oracle for the excess: the node's own irq + softirq + steal over the run."""
    before = stolen_s()
    r = js.run([perf_children, "200", "2", "100"], interval="1s", timeout=600)
    stolen = stolen_s() - before
    assert r.returncode == 0, r.proc.stderr
    perf = r.summary["perf"]
    total = r.summary["cpu"]["total_s"]
    assert r.summary["exact"]["cpu"] is True
    assert total >= 200 * 0.1
    tc = perf["events"]["task_clock_ns"]
    assert tc["running_fraction"] == 1 and tc["scaled"] is False  # software events are never multiplexed
    assert tc["targets"] == 1  # one inherited counter set on the command
    task = tc["count"] / 1e9
    assert task <= total + stolen + 0.005, (
        f"task-clock {task:.3f}s above the exact total {total:.3f}s by more than the node's interrupt and "
        f"stolen time {stolen:.3f}s")
    # Above the exact total only by what the oracle above bounds (CI once saw +2.2%, 0.44 s over 20.1 s, within
    # the node's interrupt and stolen time); below it by at most 2% (the children's exits after folding).
    assert task >= 0.98 * total, (
        f"task-clock {task:.3f}s vs exact CPU {total:.3f}s: {(task - total) / total * 100:+.2f}%"
    )
    assert perf["derived"]["task_clock_s"] == pytest.approx(task)


@pytest.mark.timing
def test_run_counts_a_large_tree_on_its_cgroup(js, perf_children):
    """Issue 25: reading an inherited counter walks one copy per live task. A run whose tree grows past 8
    processes per CPU (64 at least) is counted from then on by counters per CPU on the cgroup made for it: the
    inherited counts up to then are kept in their rows, and the total still matches the exact CPU (the
    allowance of test_task_clock_of_short_children_matches_exact_cpu). Where no v2 cgroup was made for the
    run, it stays on inheritance and says nothing of a switch."""
    parallel = max(100, 8 * os.cpu_count() + 40)
    before = stolen_s()
    r = js.run([perf_children, str(2 * parallel), str(parallel), "10"], interval="0.1s", timeout=600)
    stolen = stolen_s() - before
    assert r.returncode == 0, r.proc.stderr
    inv = inventory(r.recording)
    with sqlite3.connect(r.recording) as c:
        version = (c.execute("SELECT value FROM meta WHERE key = 'cgroup_version'").fetchone() or [None])[0]
        targets = {t for (t,) in c.execute("SELECT DISTINCT target FROM perf WHERE event = 'task_clock_ns'")}
        tree_last = c.execute("SELECT count FROM perf WHERE event = 'task_clock_ns' AND target = 'tree' "
                              "ORDER BY sample DESC LIMIT 1").fetchone()[0]
    if version not in ("v2", "hybrid"):
        assert targets == {"tree"} and "cgroup per CPU" not in inv["perf.target"], (version, targets, inv)
        return
    assert targets == {"tree", "cgroup"}, targets
    assert "from then on its cgroup per CPU" in inv["perf.target"], inv["perf.target"]
    assert tree_last > 0  # what inheritance counted before the switch stays
    total = r.summary["cpu"]["total_s"]
    task = r.summary["perf"]["events"]["task_clock_ns"]["count"] / 1e9
    assert r.summary["perf"]["events"]["task_clock_ns"]["targets"] == 2
    assert task <= total + stolen + 0.005, (task, total, stolen)
    assert task >= 0.98 * total, f"task-clock {task:.3f}s vs exact CPU {total:.3f}s"  # above: bounded just before


@pytest.mark.timing
def test_task_clock_misses_only_a_bounded_exit_cost_per_process(js, workload):
    """Forked Python children of 10 ms each: what task-clock does not see is each process's exit after its
    counters were folded into its parent's (the address space teardown on Linux 6.18): bounded per process,
    never a child's whole life (which is what a counter without inheritance would miss)."""
    n = 100
    before = stolen_s()
    r = js.run([PYTHON, workload("short_children.py"), str(n), "2", "0.01"], interval="1s", timeout=300)
    stolen = stolen_s() - before
    assert r.returncode == 0, r.proc.stderr
    total = r.summary["cpu"]["total_s"]
    task = r.summary["perf"]["events"]["task_clock_ns"]["count"] / 1e9
    gap = total - task
    assert task >= n * 0.01
    assert -(stolen + 0.005) <= gap <= (n + 1) * 0.006, f"task-clock {task:.3f}s, exact {total:.3f}s: {gap * 1e3 / (n + 1):.2f} ms/process"


def test_faults_and_switches_against_the_workloads_own_rusage(js, workload, tmp_path):
    out = tmp_path / "oracle.txt"
    n, pages, sleeps = 40, 256, 10
    r = js.run([PYTHON, workload("perf_oracle.py"), str(n), str(pages), str(sleeps), str(out)], interval="200ms")
    assert r.returncode == 0, r.proc.stderr
    procs, minflt, majflt, nvcsw, nivcsw = map(int, out.read_text().split())
    ev = r.summary["perf"]["events"]

    # faults: the kernel counts a fault for rusage and for the minor/major perf events at the same place
    # (mm_account_fault); perf misses only the faults of jobscope's forked copy before exec (about 10 here)
    faults = minflt + majflt
    counted = ev["minor_faults"]["count"] + ev["major_faults"]["count"]
    assert faults >= n * pages  # the workload did fault its pages in
    assert faults - 100 <= counted <= faults + 20, f"perf {counted} faults, rusage {faults}"
    # page-faults counts every fault entry (retries included): never fewer than the accounted ones
    assert ev["page_faults"]["count"] >= counted

    switches = nvcsw + nivcsw
    assert switches >= n * sleeps
    if "context_switches" in ev:
        cs = ev["context_switches"]["count"]
        # not counted: the wait to be released before exec, and each process's switches after its counters were
        # folded into its parent's at exit: the last one, and on a loaded machine a preemption or two during
        # the address-space teardown that follows on Linux 6.18 (measured: 1.2 to 1.8 per process under load)
        assert switches - 2 * procs - 20 <= cs <= switches + 5, f"perf {cs} context switches, rusage {switches}"
    else:
        assert r.summary["perf"]["missing"]["context_switches"].startswith("EACCES:")


def test_hardware_events_missing_with_errno_and_run_unaffected(js, workload):
    r = js.run([PYTHON, workload("burn.py"), "0.3"], interval="100ms")
    assert r.returncode == 0, r.proc.stderr
    perf = r.summary["perf"]
    assert r.summary["cpu"]["total_s"] >= 0.3
    assert "task_clock_ns" in perf["events"]
    inv = inventory(r.recording)
    if has_hardware_pmu():
        pytest.skip("this machine has a hardware PMU: the absent path is covered by the unit tests")
    for name in HARDWARE:
        assert name not in perf["events"]
        reason = perf["missing"][name]
        assert reason.startswith(ERRNO_PREFIX), reason
        assert inv[f"perf.{name}.status"] == reason  # recorded once, as the summary shows it
        assert inv[f"perf.{name}.kind"] == "hw"
    assert perf["derived"]["ipc"] is None and perf["derived"]["gflop_per_s"] is None
    # the hardware counters' absence leaves no row behind, and no sample without software counts
    with sqlite3.connect(r.recording) as c:
        kinds = {k for (k,) in c.execute("SELECT DISTINCT kind FROM perf")}
        samples = c.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
        tc_rows = c.execute("SELECT COUNT(*) FROM perf WHERE event = 'task_clock_ns'").fetchone()[0]
        stats = c.execute("SELECT COUNT(*) FROM source_stats WHERE source = 'perf' AND rc != 0").fetchone()[0]
    assert kinds == {"sw"}
    assert tc_rows == samples
    assert stats == 0
    # the full text summary names them once, with the reason (the short one leaves perf out)
    text = js("summary", "--summary", "full", r.recording)
    assert text.returncode == 0, text.stderr
    assert text.stdout.count("cycles") == 1
    assert "perf missing" in text.stdout


def test_libpfm_not_loadable_leaves_the_other_events(js, workload, monkeypatch):
    """libpfm4 is loaded with dlopen, not linked: where it cannot be loaded ($JOBSCOPE_LIBPFM_LIBRARY names a
    missing file; LIBPFM_FORCE_PMU makes the source try even on a machine without a hardware PMU), every
    `pfm` event is missing with the loader's reason, recorded once, and the software counters are as usual."""
    monkeypatch.setenv("JOBSCOPE_LIBPFM_LIBRARY", "/nonexistent/libpfm.so.4")
    monkeypatch.setenv("LIBPFM_FORCE_PMU", "skx")
    r = js.run([PYTHON, workload("burn.py"), "0.3"], interval="100ms")
    assert r.returncode == 0, r.proc.stderr
    perf = r.summary["perf"]
    assert perf["events"]["task_clock_ns"]["count"] >= 0.2e9
    inv = inventory(r.recording)
    want = "ENOENT: libpfm4 not loadable: $JOBSCOPE_LIBPFM_LIBRARY: /nonexistent/libpfm.so.4: "
    pfm = [k[5:-5] for k, v in inv.items() if k.endswith(".kind") and v == "pfm"]
    assert {"fp_scalar_double", "fp_flops_any", "mem_cas_read_lines", "mem_cas_write_lines"} <= set(pfm)
    for name in pfm:
        assert inv[f"perf.{name}.status"].startswith(want), inv[f"perf.{name}.status"]
        assert perf["missing"][name] == inv[f"perf.{name}.status"]
    assert inv["perf.libpfm"].startswith("libpfm4 not loadable: ")


def test_summary_and_exports_carry_the_counters(js, workload):
    r = js.run([PYTHON, workload("burn.py"), "0.3"], interval="100ms")
    assert r.returncode == 0
    again = js.summary_json(r.recording)
    assert again["perf"]["events"]["task_clock_ns"]["count"] == r.summary["perf"]["events"]["task_clock_ns"]["count"]
    p = js("export", "--format", "csv", "--scope", "perf", r.recording)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split(",")[3:] == ["event", "kind", "targets", "count", "interval_count", "count_per_s",
                                       "running_fraction", "total_running_fraction"]
    last_tc = [l for l in lines if ",task_clock_ns," in l][-1].split(",")
    assert float(last_tc[6]) == pytest.approx(r.summary["perf"]["events"]["task_clock_ns"]["count"])
    d = js("export", "--format", "jsonl", "--scope", "perf_derived", r.recording)
    assert d.returncode == 0, d.stderr
    rows = [json.loads(l) for l in d.stdout.splitlines()]
    busy = [x["task_clock_cores"] for x in rows if x["task_clock_cores"] is not None]
    assert busy and max(busy) > 0.3  # burn.py keeps a core busy
    assert all(x["ipc"] is None for x in rows) or has_hardware_pmu()


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_unprivileged_run_counts_its_own_processes_or_says_why(jobscope_bin, workload):
    """As nobody, with perf_event_paranoid as it is: software counts of its own processes, user mode only
    where paranoid is 2, or each event missing with its errno; never a failed run."""
    d = tempfile.mkdtemp(prefix="jobscope-perf-nobody-")
    try:
        os.chmod(d, 0o777)
        wl = Path(d) / "burn.py"
        shutil.copy(workload("burn.py"), wl)
        os.chmod(wl, 0o644)
        rec, sj = Path(d) / "run.db", Path(d) / "run.json"
        before = stolen_s()
        p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", str(jobscope_bin),
                            "run", "-q", "-i", "100ms", "-o", str(rec), "--summary-json", str(sj), "--",
                            PYTHON, str(wl), "0.3"],
                           cwd=d, capture_output=True, text=True, timeout=120)
        stolen = stolen_s() - before
        assert_no_crash(p)
        assert p.returncode == 0, p.stderr
        s = json.loads(sj.read_text())
        perf = s["perf"]
        par = paranoid()
        assert perf["paranoid"] == par
        for name in SOFTWARE:
            if name in perf["events"]:
                assert perf["events"][name]["count"] is not None
            else:
                assert perf["missing"][name].startswith(ERRNO_PREFIX), perf["missing"][name]
        if par is not None and par >= 2:
            assert perf["user_mode_only"] is True
            assert perf["missing"]["context_switches"].startswith("EACCES:")
        if "task_clock_ns" in perf["events"]:
            task = perf["events"]["task_clock_ns"]["count"] / 1e9
            # above the total by at most the node's interrupt and stolen time over the run (the suite once saw
            # 0.359 s against 0.331 s; 8 runs under stress-ng --cpu 3: -0.6% to +1.4%), below it by 5%
            total = s["cpu"]["total_s"]
            assert 0.95 * total - 0.02 <= task <= total + stolen + 0.02, (task, total, stolen)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_attach_counts_the_job_not_each_task(js, jobscope_bin):
    """Issue 25: attach to a tree of 100 processes: one row per event and sample (the root's counters with
    inheritance, or the tree's own cgroup per CPU), not one per task (600 rows per sample, 72-74% of a
    recording's bytes at N = 1000); --perf-per-task gives the per-task rows back."""
    tree = Path(jobscope_bin).parent / "bench" / "tree"
    if not tree.exists():
        pytest.skip(f"{tree} not built")
    p = subprocess.Popen([str(tree), "100"], stdout=subprocess.PIPE, text=True)
    try:
        pid = p.stdout.readline().strip()
        rows = {}
        for name, extra in (("job", []), ("each", ["--perf-per-task"])):
            r = js("attach", "-q", "-i", "0.1", "--duration", "0.5s", "-o", js.path(f"{name}.db"), *extra, pid,
                   timeout=120)
            assert r.returncode == 0, r.stderr
            with sqlite3.connect(js.path(f"{name}.db")) as c:
                rows[name] = c.execute("SELECT max(n) FROM (SELECT count(*) n FROM perf GROUP BY sample)").fetchone()[0]
                targets = {t for (t,) in c.execute("SELECT DISTINCT target FROM perf")}
            inv = inventory(js.path(f"{name}.db"))
            if name == "job":
                assert targets <= {"tree", "cgroup"}, targets
                assert "summed" in inv["perf.rows"], inv
            else:
                assert targets == {"task"}, targets
                assert "--perf-per-task" in inv["perf.target"], inv
    finally:
        p.terminate()
        p.wait(timeout=30)
    n_events = rows["each"] // 100
    assert n_events >= 1
    assert rows["job"] == n_events, rows  # one row per event, whatever the tree's size
    assert rows["each"] == 100 * n_events, rows
