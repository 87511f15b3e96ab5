# SPDX-License-Identifier: MIT
"""Issue 19, what a user reads: a short text summary by default (what a `seff` or `time -v` user reads at a
glance, at most about 12 lines), the full one with --summary=full (run, attach, watch, job and `jobscope
summary`), while `--summary FILE` still writes the text to a file; no "n/a% of n/a core-s", one name for the
cores' bound, bytes never labelled as calls; the same JSON keys for the same figures in a run's and a merged
job's summary (the job's nodes are run summaries).
"""
import json
import re

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


def test_one_name_for_the_cores_bound(js):
    r = js.run(["sh", "-c", "sleep 0.2"], quiet=False, extra=["--cgroup", "off", "--summary=full"])
    bounds = set(re.findall(r"\((affinity|cpuset|cpu\.max|SLURM[^)]*)\)|bound: ([a-z.]+)", r.proc.stderr))
    names = {a or b for a, b in bounds}
    assert len(names) <= 1, (names, r.proc.stderr)
