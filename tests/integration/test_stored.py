# SPDX-License-Identifier: MIT
"""Recordings of schema 2 (issue 25, docs/FORMAT.md): a process's row is stored only when it changed, and the
model's aggregates are stored as it records (the tree point of every sample, its closing summary), so that
summary, report and export need not re-read every process row.

Checked here against the full re-read of the same recording (`--recompute`, what an older recording always
gets) and the summary the monitor printed when the run ended: the same figures, key by key. A recording of
schema 1 (tests/fixtures/recording-v1/run.sql, written by the build before this change) is still read, with
the figures that build gave. Speed belongs to the benchmark (bench/report_bench.py), not here.
"""
import csv
import io
import json
import math
import sqlite3
from pathlib import Path

import pytest

from conftest import PYTHON

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "recording-v1" / "run.sql"


def flat(d, prefix=""):
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(flat(v, f"{prefix}.{k}"))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            out.update(flat(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = d
    return out


def assert_same(a, b, what, skip=("recording",)):
    """Every key of two summaries: numbers equal to rounding (the rows are summed in another order), the rest
    exactly."""
    fa, fb = flat(a), flat(b)
    assert set(fa) == set(fb), (what, sorted(set(fa) ^ set(fb)))
    for k in fa:
        if k.lstrip(".") in skip:
            continue
        x, y = fa[k], fb[k]
        if isinstance(x, float) or isinstance(y, float):
            assert x is not None and y is not None and math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9), (what, k, x, y)
        else:
            assert x == y, (what, k, x, y)


def rows_csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def assert_same_rows(a, b, what):
    assert len(a) == len(b), what
    for ra, rb in zip(a, b):
        assert ra.keys() == rb.keys()
        for k in ra:
            x, y = ra[k], rb[k]
            if x == y:
                continue
            assert math.isclose(float(x), float(y), rel_tol=1e-9, abs_tol=1e-9), (what, k, x, y)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, jobscope_bin):
    """A run with short-lived children, processes that stay and ones that exit, at 50 ms."""
    from conftest import Jobscope

    js = Jobscope(jobscope_bin, tmp_path_factory.mktemp("stored"))
    script = ("import os, time\n"
              "kids = []\n"
              "for k in range(12):\n"
              "    pid = os.fork()\n"
              "    if pid == 0:\n"
              "        x = 0\n"
              "        for i in range(150000 * (k % 3 + 1)):\n"
              "            x += i\n"
              "        time.sleep(0.1 * (k % 4))\n"
              "        os._exit(0)\n"
              "    kids.append(pid)\n"
              "    time.sleep(0.03)\n"
              "open(os.devnull, 'w').write('x' * 5000000)\n"
              "for p in kids:\n"
              "    os.waitpid(p, 0)\n"
              "time.sleep(0.2)\n")
    r = js.run([PYTHON, "-c", script], interval="0.05s", timeout=120)
    assert r.returncode == 0, r.proc.stderr
    return js, r


def test_stored_summary_equals_the_full_read(recorded):
    js, r = recorded
    con = sqlite3.connect(f"file:{r.recording}?mode=ro", uri=True)
    meta = dict(con.execute("SELECT key, value FROM meta"))
    assert meta["schema_version"] == "2"
    samples = con.execute("SELECT count(*) FROM samples").fetchone()[0]
    assert con.execute("SELECT count(*) FROM tree_totals").fetchone()[0] == samples
    assert con.execute("SELECT count(*) FROM summary_state").fetchone()[0] > 40
    stored_rows = con.execute("SELECT count(*) FROM proc_changes").fetchone()[0]
    logical = con.execute("SELECT count(*) FROM proc").fetchone()[0]  # the view: every process at every sample
    assert stored_rows < logical
    con.close()
    stored = js.summary_json(r.recording)
    p = js("summary", "--json", "--recompute", r.recording)
    assert p.returncode == 0, p.stderr
    full = json.loads(p.stdout)
    assert_same(stored, full, "stored vs recomputed")
    assert_same(r.summary, stored, "live vs stored")
    # the text summary too
    a = js("summary", r.recording).stdout
    b = js("summary", "--recompute", r.recording).stdout
    assert a == b


def test_exports_equal_the_full_read(recorded):
    js, r = recorded
    for view in ("tree", "system", "process"):
        a = js("export", "-f", "csv", "-s", view, r.recording)
        b = js("export", "-f", "csv", "-s", view, "--recompute", r.recording)
        assert a.returncode == 0 and b.returncode == 0, (a.stderr, b.stderr)
        assert_same_rows(rows_csv(a.stdout), rows_csv(b.stdout), view)
    # the process view, rebuilt from the changed rows, against the SQL view `proc`
    procs = rows_csv(js("export", "-f", "csv", "-s", "process", r.recording).stdout)
    con = sqlite3.connect(f"file:{r.recording}?mode=ro", uri=True)
    by_sample = dict(con.execute("SELECT sample, sum(rss_bytes) FROM proc GROUP BY sample"))
    con.close()
    mine = {}
    for row in procs:
        mine[int(row["sample"])] = mine.get(int(row["sample"]), 0) + int(row["rss_bytes"] or 0)
    assert mine == {k: v or 0 for k, v in by_sample.items()}


def test_report_from_stored_aggregates(recorded):
    js, r = recorded
    a = js("report", "-o", js.path("a.html"), r.recording)
    b = js("report", "-o", js.path("b.html"), "--recompute", r.recording)
    assert a.returncode == 0 and b.returncode == 0, (a.stderr, b.stderr)
    ta, tb = js.path("a.html").read_text(), js.path("b.html").read_text()
    assert abs(len(ta) - len(tb)) <= 0.001 * len(tb)


def test_schema_1_recording_still_read(js):
    """A recording written before schema 2 (every process row stored, no stored aggregates): read in full, with
    the figures the build that wrote it gave (its `summary --json`: cpu.total_s 0.131384, wall 0.526503318
    s, 7 samples, 5 processes)."""
    db = js.path("v1.db")
    con = sqlite3.connect(db)
    con.executescript(FIXTURE.read_text())
    con.close()
    s = js.summary_json(db)
    assert s["cpu"]["total_s"] == pytest.approx(0.131384, abs=1e-9)
    assert s["wall_time_s"] == pytest.approx(0.526503318, abs=1e-9)
    assert s["samples"]["taken"] == 7
    assert s["processes"]["total"] == 5
    p = js("export", "-f", "csv", "-s", "process", db)
    assert p.returncode == 0, p.stderr
    assert len(rows_csv(p.stdout)) == 15  # the v1 table's rows
    p = js("report", "-o", js.path("v1.html"), db)
    assert p.returncode == 0, p.stderr


def test_unknown_schema_version_refused(js):
    db = js.path("v9.db")
    con = sqlite3.connect(db)
    con.executescript(FIXTURE.read_text())
    con.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    p = js("summary", db)
    assert p.returncode != 0
    assert "schema version 9, this jobscope reads 1 to 2" in p.stderr
