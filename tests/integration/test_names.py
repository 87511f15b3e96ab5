# SPDX-License-Identifier: MIT
"""Process names that break naive /proc/<pid>/stat parsing: `a) b (c` and one with a newline."""
import csv
import io
import json
import os
import shutil

import pytest

from conftest import PYTHON

def strings(o):
    """Every string value nested in a decoded JSON value."""
    if isinstance(o, str):
        yield o
    elif isinstance(o, dict):
        for v in o.values():
            yield from strings(v)
    elif isinstance(o, list):
        for v in o:
            yield from strings(v)


NAMES = {"parens": "a) b (c", "newline": "new\nline", "sixteen": "abcdefghijklmnopqrstuvwxyz"}


@pytest.mark.parametrize("kind", list(NAMES))
def test_sleep_copy_with_odd_name(js, kind):
    name = NAMES[kind]
    exe = js.path(name)
    shutil.copy("/bin/sleep", exe)
    os.chmod(exe, 0o755)
    r = js.run([str(exe), "0.6"], interval="0.05s", timeout=60)
    assert r.returncode == 0, r.proc.stderr
    s = r.summary
    assert s["command"] == [str(exe), "0.6"]
    # garbled parsing shows as absurd figures: sleep uses almost no CPU and a few MiB
    assert 0 <= s["cpu"]["total_s"] < 0.5, s["cpu"]
    assert 64 * 1024 < s["memory"]["peak_rss_sum_bytes"] < 64 * 1024 * 1024, s["memory"]
    assert s["processes"]["total"] == 1, s["processes"]
    assert s["processes"]["max_threads"] == 1, s["processes"]
    # text cells are escaped alike in CSV and JSON Lines: a newline in a name is the two characters \\n
    comm = name[:15].replace("\\", "\\\\").replace("\n", "\\n")
    text = js("export", "--format", "csv", "--scope", "process", r.recording, check=True).stdout
    assert "\r" not in text and all(line.count(",") == text.splitlines()[0].count(",") or '"' in line
                                     for line in text.splitlines()), "a row spans lines"
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert rows, "no rows in the process-scope export"
    assert any(comm in v for row in rows for v in row.values() if v), (
        f"process named {comm!r} not found in the process-scope export:\n{text[:1000]!r}"
    )
    lines = js("export", "--format", "jsonl", "--scope", "process", r.recording, check=True).stdout.splitlines()
    objs = [json.loads(line) for line in lines if line.strip()]
    assert any(comm in v for o in objs for v in strings(o)), "process not found in the jsonl export"
    js("summary", r.recording, check=True)


def test_cpu_of_process_with_parenthesised_name(js, tmp_path):
    """A symlink to python named `a) b (c`: its comm is the link name; its CPU must still be read right."""
    link = tmp_path / "x) y (z"
    os.symlink(os.path.realpath(PYTHON), link)
    code = "import time\nt=time.process_time()+0.6\nwhile time.process_time()<t: pass\n"
    r = js.run([str(link), "-c", code], interval="0.05s", timeout=60)
    assert r.returncode == 0, r.proc.stderr
    cpu = r.summary["cpu"]
    assert cpu["total_s"] >= 0.6 * 0.97, cpu
    assert cpu["total_s"] < 2.0, cpu
    assert cpu["sampled_s"] is not None and 0.3 <= cpu["sampled_s"] <= cpu["total_s"] + 0.05, cpu
