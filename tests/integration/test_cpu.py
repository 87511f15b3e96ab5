# SPDX-License-Identifier: MIT
"""CPU totals against GNU time, short-lived children, and orphans (issue 2, Integration: CPU, short-lived, orphans).

GNU time runs INSIDE jobscope (`jobscope run -- /usr/bin/time ... CMD`) so both observe the very same run.
GNU time prints user and system time truncated to 10 ms each, so the comparison allows 2% plus 20 ms.
"""
import csv
import io

import psutil
import pytest

from conftest import (
    GNU_TIME,
    PYTHON,
    gnu_time_seconds,
    kill_quietly,
    needs_gnu_time,
    needs_stress_ng,
    read_pidfile,
    wait_for,
)

TIME_RESOLUTION_S = 0.02  # two fields, each truncated to 10 ms


def assert_within(value, oracle, rel, what):
    tol = rel * oracle + TIME_RESOLUTION_S
    assert abs(value - oracle) <= tol, (
        f"{what}: jobscope {value:.3f}s vs GNU time {oracle:.3f}s, diff {value - oracle:+.3f}s "
        f"({(value - oracle) / oracle * 100 if oracle else float('inf'):+.2f}%), allowed ±{tol:.3f}s"
    )


def assert_sampled_not_above_total(cpu):
    if cpu.get("sampled_s") is not None and cpu.get("total_s") is not None:
        assert cpu["sampled_s"] <= cpu["total_s"] * 1.01 + 0.05, f"sampled CPU above the exact total: {cpu}"


@pytest.mark.timing
@needs_stress_ng
@needs_gnu_time
def test_stress_ng_cpu_total_matches_gnu_time(js):
    tf = js.path("time.out")
    r = js.run([GNU_TIME, "-f", "%U %S", "-o", tf, "stress-ng", "--cpu", "2", "-t", "5", "--quiet"], interval="1s")
    assert r.returncode == 0, r.proc.stderr
    assert r.summary is not None, "no --summary-json written"
    oracle = gnu_time_seconds(tf)
    assert oracle > 1.0, f"stress-ng used only {oracle}s of CPU"
    cpu = r.summary["cpu"]
    print(f"stress-ng: exact {cpu['total_s']:.3f}s, GNU time {oracle:.3f}s, sampled {cpu.get('sampled_s')}s")
    assert_within(cpu["total_s"], oracle, 0.02, "stress-ng --cpu 2 -t 5")
    assert abs(cpu["user_s"] + cpu["system_s"] - cpu["total_s"]) <= 0.01 * cpu["total_s"] + 0.01, cpu
    assert r.summary["exact"]["cpu"] is True
    assert_sampled_not_above_total(cpu)
    # a 5 s run with two busy workers: mean cores ~ total / wall, bounded by the cores available
    wall = r.summary["wall_time_s"]
    assert wall >= 4.9, r.summary
    assert cpu["mean_cores"] == pytest.approx(cpu["total_s"] / wall, rel=0.05, abs=0.02)
    assert 0 <= cpu["efficiency"] <= 1.05, cpu
    assert cpu["max_cores"] <= cpu["cores_available"] * 1.1 + 0.1, cpu


@pytest.mark.timing
@needs_gnu_time
def test_short_lived_children_are_counted_exactly(js, workload):
    """320 children of 20 ms CPU each, two at a time, sampled once a second: the exact total must match GNU
    time within 2%, while what sampling alone saw (cpu.sampled_s) misses most of it."""
    tf = js.path("time.out")
    r = js.run(
        [GNU_TIME, "-f", "%U %S", "-o", tf, PYTHON, workload("short_children.py"), "320", "2", "0.02"],
        interval="1s",
        timeout=180,
    )
    assert r.returncode == 0, r.proc.stderr
    assert r.summary is not None
    oracle = gnu_time_seconds(tf)
    assert oracle >= 320 * 0.02 * 0.95, f"workload used only {oracle}s of CPU"
    cpu = r.summary["cpu"]
    assert_within(cpu["total_s"], oracle, 0.02, "320 short-lived children")
    assert r.summary["exact"]["cpu"] is True
    # the 320 children mostly live between two samples: processes.total cannot be expected to count them all
    assert r.summary["processes"]["total"] >= 2, r.summary["processes"]
    print(
        f"short-lived: exact {cpu['total_s']:.3f}s, GNU time {oracle:.3f}s, sampled {cpu.get('sampled_s')}s, "
        f"wall {r.summary['wall_time_s']:.2f}s"
    )


@needs_gnu_time
def test_short_lived_children_sampling_alone_misses_most(js, workload):
    """The difference a psutil-style sampler makes: cpu.sampled_s (sampling alone) is well below the total."""
    r = js.run([PYTHON, workload("short_children.py"), "320", "2", "0.02"], interval="1s", timeout=180)
    assert r.returncode == 0, r.proc.stderr
    cpu = r.summary["cpu"]
    assert cpu.get("sampled_s") is not None, f"cpu.sampled_s missing or null: {cpu}"
    assert cpu["total_s"] >= 320 * 0.02 * 0.95, cpu
    assert cpu["sampled_s"] < 0.5 * cpu["total_s"], f"sampling alone should miss most of the CPU: {cpu}"
    assert_sampled_not_above_total(cpu)


def test_orphan_is_monitored_until_it_exits(js, workload):
    """A double-forked grandchild burning 2 s of CPU after its parent exited stays in the tree."""
    burn = 2.0
    pidfile = js.path("orphan.pid")
    try:
        r = js.run([PYTHON, workload("orphan.py"), str(burn), pidfile], interval="0.2s", timeout=60)
    finally:
        pid = read_pidfile(pidfile)
        if pid and psutil.pid_exists(pid):
            kill_quietly(pid)
    assert r.returncode == 0, r.proc.stderr
    pid = read_pidfile(pidfile)
    assert pid is not None, "the grandchild never ran"
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, (
        "jobscope returned while the orphan was still running"
    )
    s = r.summary
    # a single thread cannot burn 2 s of CPU in less than 2 s of wall time
    assert s["wall_time_s"] >= burn * 0.98, s
    assert s["cpu"]["total_s"] >= burn * 0.97, f"the orphan's burn is missing from the total: {s['cpu']}"
    # main and the orphan live long enough to be sampled (the middle child lives only a few milliseconds)
    assert s["processes"]["total"] >= 2, f"main and the orphaned grandchild expected: {s['processes']}"
    exp = js("export", "--format", "csv", "--scope", "process", r.recording, check=True)
    rows = list(csv.DictReader(io.StringIO(exp.stdout)))
    assert "pid" in (rows[0].keys() if rows else ()), f"no pid column in process export: {exp.stdout[:300]!r}"
    assert str(pid) in {row["pid"] for row in rows}, f"orphan pid {pid} not in the process-scope export"
    assert s["exact"]["cpu"] is True
    assert_sampled_not_above_total(s["cpu"])


def test_until_main_exits_stops_with_main(js, workload):
    """--until-main-exits: jobscope returns when COMMAND exits even though an orphan still burns CPU."""
    pidfile = js.path("orphan.pid")
    try:
        r = js.run(
            [PYTHON, workload("orphan.py"), "4", pidfile], interval="0.2s", extra=["--until-main-exits"], timeout=60
        )
        assert r.returncode == 0, r.proc.stderr
        assert r.summary is not None
        pid = wait_for(lambda: read_pidfile(pidfile), 10, what="the orphan's pid file")
        alive = psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        assert alive, "jobscope --until-main-exits waited for the orphan (it had already finished its 4 s burn)"
    finally:
        pid = read_pidfile(pidfile)
        if pid:
            kill_quietly(pid)


@pytest.mark.timing
def test_rates_stay_physical_when_many_processes_exit(js, workload):
    """20 idle children and their parent exit at the same moment at -i 50ms. Their exact (rusage) CPU replaces
    the tick-truncated sampled values as they exit; that catch-up must not be reported as a burst of more
    cores than the machine has, neither in the export's cpu_cores nor in the summary's max_cores."""
    r = js.run([PYTHON, workload("many_exit.py"), "20", "0.5"], interval="50ms", timeout=60)
    assert r.returncode == 0, r.proc.stderr
    cores = r.summary["cpu"]["cores_available"]
    bound = cores * 1.5 + 0.5
    exp = js("export", "--format", "csv", r.recording, check=True)
    rows = list(csv.DictReader(io.StringIO(exp.stdout, newline="")))
    spikes = [(row.get("sample"), row.get("dt_s"), row["cpu_cores"]) for row in rows
              if row["cpu_cores"] != "" and float(row["cpu_cores"]) > bound]
    assert not spikes, f"cpu_cores above {bound} on a {cores}-core machine (sample, dt_s, cpu_cores): {spikes}"
    assert r.summary["cpu"]["max_cores"] <= bound, f"max_cores on a {cores}-core machine: {r.summary['cpu']}"
