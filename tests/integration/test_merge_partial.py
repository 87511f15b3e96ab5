# SPDX-License-Identifier: MIT
"""Merging a job with an incomplete node, and a merge killed half-way (docs/RELIABILITY.md, "shared node", 11).

Before: a node whose monitor was killed (its data still in its -wal) was refused as "not a jobscope recording
(no schema_version)", with no way to merge the rest of the job; a merge killed with SIGKILL left
OUT.merging.PID (59 MB for two 27 MB nodes killed after 8 s) that no later merge removed. Now: the node is
said to be incomplete, `merge --partial` merges it up to its last sample from a private snapshot (the
original untouched; one still being written goes on) and the job's summary flags it; the temporary of a killed
merge is removed by the next merge into the same name.
"""
import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import assert_clean_error, assert_no_crash, wait_for


def synth(js, path, hours, node):
    build = Path(os.environ.get("JOBSCOPE_BUILD", js.binary.rsplit("/", 1)[0]))
    exe = build / "bench" / "synth_recording"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    subprocess.run([str(exe), str(path), str(hours), "1", str(node)], check=True, capture_output=True, timeout=300)
    return path


def samples_in(path):
    """Samples committed so far in a recording being written (read through its WAL), 0 before any."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT count(*) FROM samples").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def killed_run(js, path):
    """A real run whose monitor gets SIGKILL after a few samples: its data stays in its -wal."""
    p = js.popen("run", "-i", "0.05", "-o", path, "-q", "--", "sleep", "30")
    wal = Path(str(path) + "-wal")
    wait_for(lambda: samples_in(path) >= 10, 60, what="10 samples")
    assert wal.stat().st_size > 0
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    os.killpg(p.pid, signal.SIGKILL)  # the orphaned `sleep` (its own session)
    return path


def test_merge_with_an_incomplete_node(js, tmp_path):
    a = synth(js, tmp_path / "a.db", 0.05, 0)
    b = synth(js, tmp_path / "b.db", 0.05, 1)
    c = killed_run(js, tmp_path / "c.db")
    wal = Path(str(c) + "-wal")
    wal_before = (wal.stat().st_size, wal.stat().st_mtime_ns)
    direct = js.summary_json(c)  # every reader reads it up to its last sample
    assert direct["state"] == "incomplete"
    out = tmp_path / "job.db"

    p = js("merge", "-o", out, a, b, c)
    assert_clean_error(p, rc=1)
    assert "incomplete recording" in p.stderr and "--partial" in p.stderr
    assert "not a jobscope recording" not in p.stderr
    assert not out.exists()

    p = js("merge", "--partial", "-o", out, a, b, c)
    assert_no_crash(p)
    assert p.returncode == 0, p.stderr
    assert "1 incomplete" in p.stderr
    assert sorted(x.name for x in tmp_path.iterdir() if x.name.startswith("job.db")) == ["job.db"]
    assert (wal.stat().st_size, wal.stat().st_mtime_ns) == wal_before  # the node's own files untouched

    s = js.summary_json(out)
    assert s["node_count"] == 3 and s["incomplete_nodes"] == 1 and s["state"] == "incomplete"
    node = direct["host"]
    states = {n["node"]: n["state"] for n in s["nodes"]}
    assert states[node] == "incomplete" and list(states.values()).count("complete") == 2
    assert {f["node"] for f in s["flags"] if f["kind"] == "incomplete"} == {node}
    merged = next(n for n in s["nodes"] if n["node"] == node)
    assert merged["samples"]["taken"] == direct["samples"]["taken"] > 5
    text = js("summary", out)
    assert f"node {node} incomplete" in text.stdout


def test_merge_of_a_node_still_being_written(js, tmp_path):
    a = synth(js, tmp_path / "a.db", 0.05, 0)
    live = tmp_path / "live.db"
    p = js.popen("run", "-i", "0.05", "-o", live, "--summary-json", tmp_path / "live.json", "-q", "--",
                 "sleep", "3")
    wait_for(lambda: samples_in(live) >= 5, 60, what="5 samples")
    m = js("merge", "--partial", "-o", tmp_path / "job.db", a, live)
    assert m.returncode == 0, m.stderr
    assert p.wait(timeout=60) == 0  # the run goes on and closes its recording as usual
    assert js.summary_json(live)["state"] == "complete"


def test_killed_merge_leaves_nothing_for_long(js, tmp_path):
    nodes = [synth(js, tmp_path / f"n{k}.db", 2, k) for k in range(2)]
    out = tmp_path / "job.db"
    host = os.uname().nodename.replace(".", "_").replace("/", "_")
    p = js.popen("merge", "-q", "-o", out, *nodes)

    def temporary():
        for d in tmp_path.glob(f"job.db.tmp.{host}.{p.pid}.*"):
            f = d / "job.db"
            if f.exists() and f.stat().st_size > 1 << 20:
                return d
        return None

    tmp = wait_for(temporary, 120, interval=0.01, what="the merge's temporary")
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    assert tmp.exists() and not out.exists()
    # a legacy OUT.merging.PID of an earlier version: removed once untouched for a minute
    dead = subprocess.Popen(["true"])
    dead.wait()
    legacy_old, legacy_new = tmp_path / f"job.db.merging.{dead.pid}", tmp_path / f"job.db.merging.{dead.pid + 1}"
    for f in (legacy_old, legacy_new):
        f.write_bytes(b"x" * 1000)
    old = time.time() - 120
    os.utime(legacy_old, (old, old))
    r = js("merge", "-q", "-o", out, *nodes, timeout=300)
    assert r.returncode == 0, r.stderr
    assert out.exists() and not tmp.exists() and not legacy_old.exists()
    try:
        os.kill(dead.pid + 1, 0)
    except ProcessLookupError:
        assert legacy_new.exists()  # recent: its writer may be on another host
    assert json.loads(js("summary", "--json", out).stdout)["node_count"] == 2
