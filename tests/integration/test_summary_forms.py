# SPDX-License-Identifier: MIT
"""Issue 19, what a user reads: a short text summary by default (what a `seff` or `time -v` user reads at a
glance, at most about 12 lines), the full one with --summary=full (run, attach, watch, job and `jobscope
summary`), while `--summary FILE` still writes the text to a file; no "n/a% of n/a core-s", one name for the
cores' bound, bytes never labelled as calls; the same JSON keys for the same figures in a run's and a merged
job's summary (the job's nodes are run summaries).
"""
import re

import pytest

from conftest import PYTHON


def test_short_by_default_full_on_request(js, tmp_path):
    r = js.run([PYTHON, "-c", "import time; x = bytearray(30 << 20); time.sleep(0.3)"], interval="0.1s", quiet=False)
    assert r.returncode == 0, r.proc.stderr
    short = r.proc.stderr.splitlines()
    assert 6 <= len(short) <= 12, r.proc.stderr
    labels = [x[:19].strip() for x in short[1:]]
    for label in ("wall time", "CPU time", "memory", "I/O", "processes", "flags", "recording"):
        assert label in labels, (label, r.proc.stderr)
    assert "request memory by this figure" in r.proc.stderr
    assert "--summary=full" in short[-1]
    full = js("summary", "--summary=full", r.recording, check=True).stdout
    assert len(full.splitlines()) > len(short)
    for label in ("page faults", "context switches", "largest process", "RSS sum", "PSS", "monitor"):
        assert label in full, (label, full)
    assert js("summary", "--full", r.recording, check=True).stdout == full
    assert js("summary", r.recording, check=True).stdout.splitlines()[1:-1] == short[1:-1]  # the recording line
    for text in (full, r.proc.stderr):
        assert "n/a%" not in text and "n/a core-s" not in text, text
        assert "calls)" not in text, text  # bytes are not calls
    # the text to a file, and the form, together
    f = tmp_path / "full.txt"
    r2 = js.run(["true"], extra=["--summary=full", "--summary", f], quiet=False)
    assert r2.returncode == 0 and "page faults" in f.read_text() and "CPU time" not in r2.proc.stderr
    bad = js("summary", "--summary=long", r.recording)
    assert bad.returncode == 2 and "short or full" in bad.stderr


def test_one_name_for_the_cores_bound(js, tmp_path):
    f = tmp_path / "full.txt"
    r = js.run(["sh", "-c", "sleep 0.2"], quiet=False, extra=["--cgroup", "off", "--summary", "full", "--summary", f])
    text = f.read_text()
    bounds = set(re.findall(r"\((affinity|cpuset|cpu\.max|SLURM[^)]*)\)|bound: ([a-z.]+)", text))
    names = {a or b for a, b in bounds}
    assert len(names) == 1, (names, text)  # the cores line and the CPU efficiency line name the same bound


def test_one_schema_for_run_node_and_job(js, tmp_path):
    """A merged job's summary has the keys of a run's for the same figures, and each node is the summary of
    that node's own recording (plus the job's facts about the node)."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_", "OAR_"))}
    recs = []
    for node in ("na", "nb"):
        env.update({"SLURM_JOB_ID": "71", "SLURMD_NODENAME": node, "SLURM_JOB_NODELIST": node,
                    "SLURM_CPUS_ON_NODE": "1"})
        proc = subprocess.run([js.binary, "job", "-d", str(tmp_path), "--duration", "1", "-i", "0.25", "--no-merge",
                               "-q"], env=env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        recs.append(tmp_path / f"71-{node}.db")
    out = tmp_path / "71.db"
    assert js("merge", "-q", "-o", out, *recs).returncode == 0
    job = js.summary_json(out)
    nodes = [js.summary_json(r) for r in recs]
    for section, keys in {"cpu": ["total_s", "mean_cores", "efficiency"], "memory": ["peak_bytes", "peak_method"],
                          "io": ["read_bytes", "write_bytes", "read_chars", "write_chars"]}.items():
        for k in keys:
            assert k in job[section], (section, k, job[section])
            assert k in nodes[0][section], (section, k)
    assert job["cpu"]["total_s"] == pytest.approx(sum(n["cpu"]["total_s"] for n in nodes), abs=1e-9)
    peaks = [n["memory"]["peak_bytes"] for n in nodes if n["memory"]["peak_bytes"] is not None]
    assert job["memory"]["peak_bytes"] == (max(peaks) if peaks else None)  # no process: n/a, not 0
    assert job["node_count"] == 2 and isinstance(job["exact"]["cpu"], bool)
    for own, inside in zip(nodes, job["nodes"]):
        assert inside["node"] == own["host"] or inside["node"] in ("na", "nb")
        for key in own:
            if key in ("recording",):
                continue
            assert key in inside, key
        assert inside["cpu"] == own["cpu"] and inside["memory"] == own["memory"] and inside["io"] == own["io"]
    text = js("summary", out, check=True).stdout
    assert "memory         peak" in text
    full = js("summary", "--summary=full", out, check=True).stdout
    assert "node na:" in full and "page faults" in full
