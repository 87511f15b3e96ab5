# SPDX-License-Identifier: MIT
"""Issue 19, phases cut at their marks: every begin/end mark takes a sample of the scope at that instant, so
cumulative figures are exact at phase boundaries and a phase's peak is the largest sample inside it. The
examples of the issue, at 1 s sampling (each failed before: A's peak was B's 300 MiB, C's 100 MiB showed as
about a third, the idle phase was credited with writes it never made).
"""
import pytest

from conftest import MiB, PYTHON

from pathlib import Path

WORKLOAD = Path(__file__).resolve().parent / "workloads" / "phases_cut.py"


def phases(summary):
    return {p["name"]: p for p in summary["phases"]["phases"]}


@pytest.mark.parametrize("cgroup", ["auto", "off"])  # the cgroup's memory.current, or the PSS sum
def test_a_phase_peak_is_not_the_next_phase_allocation(js, cgroup):
    r = js.run([PYTHON, WORKLOAD, js.binary, "cpu_then_alloc", js.tmp], interval="1s", timeout=120,
               extra=["--cgroup", cgroup])
    assert r.returncode == 0, r.proc.stderr
    ph = phases(r.summary)
    a, b = ph["A"], ph["B"]
    assert a["peak_bytes"] < 100 * MiB, a  # a Python interpreter burning CPU
    assert b["peak_bytes"] >= 290 * MiB, b
    # A burned 0.4 s in this process (plus a `jobscope mark` or two); B's page faults are not A's
    assert 0.38 <= a["cpu_s"] <= 0.5, a


def test_cumulative_figures_are_exact_at_phase_boundaries(js):
    r = js.run([PYTHON, WORKLOAD, js.binary, "write_then_sleep", js.tmp], interval="1s", timeout=120)
    assert r.returncode == 0, r.proc.stderr
    ph = phases(r.summary)
    c, idle = ph["C"], ph["idle"]
    assert c["wchar_bytes"] == pytest.approx(100 * MiB, rel=0.05), c
    assert idle["wchar_bytes"] < 1 * MiB, idle
    if r.summary["io"]["write_bytes"] >= 100 * MiB:  # a file system that accounts writes to storage
        assert c["write_bytes"] >= 0.95 * 100 * MiB, c
        assert idle["write_bytes"] < 1 * MiB, idle
    # the self totals still add up to the run's
    total = sum(p["self"]["wchar_bytes"] for p in ph.values()) + r.summary["phases"]["outside"]["wchar_bytes"]
    assert total == pytest.approx(r.summary["phases"]["run"]["wchar_bytes"], rel=1e-6)
