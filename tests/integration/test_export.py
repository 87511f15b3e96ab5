# SPDX-License-Identifier: MIT
"""Exports: CSV and JSONL per scope, missing values, and the summary of the same recording (issue 2)."""
import csv
import io
import json
import math
from datetime import datetime

import pytest

from conftest import PYTHON, WORKLOADS, Jobscope, read_pidfile


@pytest.fixture(scope="module")
def recorded(jobscope_bin, tmp_path_factory):
    """One recording of tree.py (main + 2 children of 0.4 s CPU, then 0.5 s idle) at 0.1 s."""
    d = tmp_path_factory.mktemp("export")
    js = Jobscope(jobscope_bin, d)
    r = js.run([PYTHON, str(WORKLOADS / "tree.py"), str(d), "2", "0.4", "0.5"], interval="0.1s", timeout=60)
    assert r.returncode == 0, r.proc.stderr
    pids = {name: read_pidfile(d / name) for name in ("main", "child0", "child1")}
    return js, r, pids


def export(js, rec, fmt, scope=None, out=None):
    args = ["export", "--format", fmt]
    if scope:
        args += ["--scope", scope]
    if out:
        args += ["-o", out]
    return js(*args, rec, check=True)


def parse_csv(text):
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows, "empty CSV"
    header, body = rows[0], rows[1:]
    assert len(set(header)) == len(header), f"duplicate columns: {header}"
    for i, row in enumerate(body):
        assert len(row) == len(header), f"row {i} has {len(row)} fields, header {len(header)}"
    return header, [dict(zip(header, row)) for row in body]


def parse_time(text):
    t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    assert t.tzinfo is not None and t.utcoffset().total_seconds() == 0, f"time {text!r} is not UTC"
    return t


def check_time_columns(header, rows):
    assert header[:2] == ["time", "unix_s"], f"first columns must be time, unix_s: {header[:5]}"
    prev = -math.inf
    for row in rows:
        unix = float(row["unix_s"])
        assert abs(parse_time(row["time"]).timestamp() - unix) < 1.0, row
        assert unix >= prev, "unix_s goes backwards"
        prev = unix


def test_csv_tree(recorded):
    js, r, _ = recorded
    s = js.summary_json(r.recording)
    header, rows = parse_csv(export(js, r.recording, "csv").stdout)
    check_time_columns(header, rows)
    assert len(rows) == s["samples"]["taken"], f"{len(rows)} rows for {s['samples']['taken']} samples"
    assert "cpu_cores" in header and "rss_sum_bytes" in header and "memory_bytes" in header, header
    cores = [float(row["cpu_cores"]) for row in rows if row["cpu_cores"] != ""]
    assert cores, "no cpu_cores values at all"
    assert all(c >= 0 for c in cores), cores
    assert max(cores) <= s["cpu"]["cores_available"] * 1.5 + 0.5, cores
    # the children burn 0.8 s of CPU over a ~1.5 s run: some sample must show real CPU use
    assert max(cores) > 0.2, cores
    rss = [int(row["rss_sum_bytes"]) for row in rows if row["rss_sum_bytes"] != ""]
    assert rss and all(v >= 0 for v in rss)
    assert max(rss) == s["memory"]["peak_rss_sum_bytes"], (
        f"largest rss_sum_bytes in the export {max(rss)} vs summary peak {s['memory']['peak_rss_sum_bytes']}"
    )
    # the headline's series: its peak is the summary's where the run has a cgroup of its own (memory.current is
    # sampled, the high-water mark is not: never above it)
    mem = [int(row["memory_bytes"]) for row in rows if row["memory_bytes"] != ""]
    assert mem and max(mem) <= s["memory"]["peak_bytes"], (max(mem), s["memory"])


def test_csv_to_file_equals_stdout(recorded):
    js, r, _ = recorded
    out = js.path("tree.csv")
    export(js, r.recording, "csv", out=out)
    assert out.read_bytes().decode() == export(js, r.recording, "csv").stdout


def test_jsonl_tree(recorded):
    js, r, _ = recorded
    s = js.summary_json(r.recording)
    text = export(js, r.recording, "jsonl").stdout
    objs = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert len(objs) == s["samples"]["taken"]
    for o in objs:
        assert isinstance(o, dict)
        assert "time" in o and "unix_s" in o, sorted(o)
        parse_time(o["time"])
    cores = [o.get("cpu_cores") for o in objs if o.get("cpu_cores") is not None]
    assert cores and all(c >= 0 for c in cores)


def test_csv_process_scope_contains_the_workload(recorded):
    js, r, pids = recorded
    header, rows = parse_csv(export(js, r.recording, "csv", scope="process").stdout)
    check_time_columns(header, rows)
    assert "pid" in header, header
    seen = {row["pid"] for row in rows}
    for name, pid in pids.items():
        assert pid is not None, f"{name} never wrote its pid"
        assert str(pid) in seen, f"{name} (pid {pid}) missing from the process-scope export; pids: {sorted(seen)}"


def test_jsonl_process_scope_parses(recorded):
    js, r, pids = recorded
    text = export(js, r.recording, "jsonl", scope="process").stdout
    objs = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert objs
    blob = json.dumps(objs)
    assert str(pids["main"]) in blob


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_system_scope(recorded, fmt):
    js, r, _ = recorded
    s = js.summary_json(r.recording)
    text = export(js, r.recording, fmt, scope="system").stdout
    if fmt == "csv":
        header, rows = parse_csv(text)
        check_time_columns(header, rows)
    else:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert len(rows) == s["samples"]["taken"]


def test_missing_value_is_empty_not_zero(js):
    """With --uss-every 0 USS/PSS are never read: the summary gives null, the exports empty fields / null."""
    r = js.run(["sleep", "0.5"], interval="0.1s", extra=["--uss-every", "0"])
    assert r.returncode == 0, r.proc.stderr
    m = r.summary["memory"]
    assert m["peak_private_bytes"] is None, f"USS was never read, yet the summary gives {m['peak_private_bytes']!r}"
    assert m["peak_pss_bytes"] is None, f"PSS was never read, yet the summary gives {m['peak_pss_bytes']!r}"
    for scope in ("tree", "process"):
        header, rows = parse_csv(export(js, r.recording, "csv", scope=scope).stdout)
        cols = [c for c in header if "uss" in c.lower() or "pss" in c.lower()]
        for c in cols:
            values = {row[c] for row in rows}
            assert values <= {""}, f"{scope} column {c} holds {values} though USS/PSS were never read"
        for line in export(js, r.recording, "jsonl", scope=scope).stdout.splitlines():
            o = json.loads(line)
            for k, v in o.items():
                if "uss" in k.lower() or "pss" in k.lower():
                    assert v is None, f"{scope} jsonl {k} = {v!r} though USS/PSS were never read"


def test_uss_read_when_asked(js, workload):
    r = js.run([PYTHON, workload("burn.py"), "0.3"], interval="0.05s", extra=["--uss-every", "1"])
    assert r.returncode == 0, r.proc.stderr
    m = r.summary["memory"]
    assert m["peak_private_bytes"] and m["peak_pss_bytes"], m
    assert m["peak_private_bytes"] <= m["peak_pss_bytes"] * 1.05, m
    assert m["peak_pss_bytes"] <= m["peak_rss_sum_bytes"] * 1.05, m


def test_rates_without_a_previous_sample_are_missing(recorded):
    """A rate needs two samples: where a row has no interval before it (the first row), every rate column
    (cpu_cores and the *_per_s columns) is missing (empty), not an invented 0."""
    js, r, _ = recorded
    header, rows = parse_csv(export(js, r.recording, "csv").stdout)
    rate_cols = [c for c in header if c == "cpu_cores" or c.endswith("_per_s")]
    assert "cpu_cores" in rate_cols
    first = rows[0]
    bad = {c: first[c] for c in rate_cols if first[c] != ""}
    assert not bad, f"first row (no previous sample) has rate values {bad}; expected empty fields"
