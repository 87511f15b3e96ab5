# SPDX-License-Identifier: MIT
"""One summary, every view (issue 26): the summary of one real run is one typed table (src/model/figure.h), and
every view renders it: the JSON, the text (short and full), the figures table (the export's `summary` view,
Python's Recording.figures), the report page, `compare`, the summary of a job merged from it, and Python's
read() and compare(). Each headline figure must show the same value, in its unit, in each of them; every row of
the table must be in the JSON at its path with its value.
"""
import json
import math
import re
import shutil
import sqlite3
import sys

import pytest

from conftest import PYTHON, REPO

pd = pytest.importorskip("pandas")

WORKLOAD = r"""
import os, sys, time
x = bytearray(60 << 20)
for i in range(0, len(x), 4096):
    x[i] = 1
t = time.thread_time()
while time.thread_time() - t < 0.3:
    pass
with open(sys.argv[1], "wb") as f:
    f.write(b"z" * (5 << 20))
    f.flush()
    os.fsync(f.fileno())
time.sleep(0.2)
"""

# (path, unit, text form: a format of the value as the text summary writes it, in the short form too)
HEADLINES = [
    ("wall_time_s", "s", "wall time        {:.3f} s", True),
    ("cpu.total_s", "s", "CPU time         {:.3f} s", True),
    ("cpu.mean_cores", "cores", "mean {:.2f}", True),
    ("memory.peak_bytes", "bytes", "peak {bytes} [", True),
    ("io.write_bytes", "bytes", "written {bytes} (storage)", True),
    ("io.read_chars", "bytes", "{bytes} read, ", False),
    ("processes.total", "count", "processes        {:.0f} seen", True),
    ("memory.peak_rss_kernel_bytes", "bytes", "largest process  {bytes} (", False),
    ("samples.taken", "count", "samples          {:.0f} every", False),
]
# the report's tables and compare's rows: their labels for the same figures
REPORT = {"cpu.total_s": "CPU time", "cpu.mean_cores": "mean cores in use", "memory.peak_bytes":
          "peak memory (request memory by this)", "io.write_bytes": "written to storage", "io.read_chars": "read calls",
          "memory.peak_rss_kernel_bytes": "peak RSS, kernel (one process)"}
COMPARE = {"cpu.total_s": "CPU time", "cpu.mean_cores": "mean cores in use", "memory.peak_bytes": "peak memory",
           "io.write_bytes": "written to storage", "io.read_chars": "read through calls",
           "memory.peak_rss_kernel_bytes": "peak RSS, kernel", "processes.total": "processes seen"}
# Python's compare(): its labels name the unit
PY_COMPARE = {"cpu.total_s": "CPU time (s)", "memory.peak_bytes": "peak memory (bytes)",
              "io.write_bytes": "written to storage (bytes)", "cpu.mean_cores": "mean cores",
              "processes.total": "processes"}


def fmt_bytes(v):
    """The text summary's bytes (src/model/figure.c, fmt_bytes)."""
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    u = 0
    while abs(v) >= 1024 and u < 5:
        v /= 1024
        u += 1
    return f"{v:.2f} {units[u]}" if u else f"{v:.0f} {units[u]}"


def dig(d, path):
    """The value at a figure's path: members by '.', elements by [i], a backslash before a name's own '.'."""
    for name, index in re.findall(r"((?:[^.\[\\]|\\.)+)|\[(\d+)\]", path):
        d = d[int(index)] if index else d[re.sub(r"\\(.)", r"\1", name)]
    return d


PAGE_UNITS = {"B": ("bytes", 1), "KiB": ("bytes", 1024), "MiB": ("bytes", 1024**2), "GiB": ("bytes", 1024**3),
              "s": ("s", 1), "ms": ("s", 1e-3), "cores": ("cores", 1), "%": ("fraction", 0.01), "": ("count", 1)}


def page_value(html, label, cls=""):
    """The number and unit a report or compare table shows in the row `label` (3 significant digits)."""
    m = re.search(r'<th scope="row">' + re.escape(label) + r'</th><td' + cls + r'>([^<]*)</td>', html)
    assert m, f"no row {label!r}"
    text = m.group(1).replace("\u2009", " ")
    n = re.fullmatch(r"(-?[0-9.]+) ?(B|KiB|MiB|GiB|ms|s|cores|%|)", text)
    assert n, (label, text)
    unit, scale = PAGE_UNITS[n.group(2)]
    return float(n.group(1)) * scale, unit


def test_one_summary_every_view(js, tmp_path, monkeypatch):
    out = tmp_path / "out.bin"
    r = js.run([PYTHON, "-c", WORKLOAD, str(out)], interval="0.1s", name="one")
    assert r.returncode == 0, r.proc.stderr
    rec = r.recording
    s = js.summary_json(rec)
    assert s == r.summary  # the run's own --summary-json, and the recording's, the same table

    # the figures table (Python over libjobscope): every row is in the JSON at its path, with its value
    lib = REPO / "build" / "lib" / "libjobscope.so.0"
    monkeypatch.setenv("JOBSCOPE_LIBRARY", str(lib))
    monkeypatch.syspath_prepend(str(REPO / "python"))
    import jobscope

    recording = jobscope.read(rec)
    assert recording.summary == s
    figs = recording.figures
    assert len(figs) > 100
    units = {}
    for row in figs.itertuples():
        v = dig(s, row.figure.replace("\\\\", "\\"))  # the path as exported: its backslashes escaped
        units[row.figure] = None if isinstance(row.unit, float) else row.unit
        if row.kind in ("number", "integer"):
            if v is None:
                assert isinstance(row.value, float) and math.isnan(row.value), row
            else:
                assert float(row.value) == pytest.approx(v, rel=1e-12, abs=0), row
        elif row.kind == "bool":
            assert str(row.value).lower() == str(v).lower(), row
        elif row.kind == "text" and v is not None:  # exports write text escaped (docs/FORMAT.md)
            esc = v.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
            assert str(row.value) == esc, row

    full = js("summary", "--summary=full", rec, check=True).stdout
    short = js("summary", rec, check=True).stdout
    report = tmp_path / "r.html"
    assert js("report", "-o", report, rec).returncode == 0
    page = report.read_text()
    cmp_page = tmp_path / "c.html"
    assert js("compare", "-o", cmp_page, rec, rec).returncode == 0
    cpage = cmp_page.read_text()
    diff = jobscope.compare(rec, rec)

    for path, unit, form, in_short in HEADLINES:
        v = dig(s, path)
        assert v is not None and units[path] == unit, (path, units.get(path))
        # the text summary, short and full
        text = form.format(v, bytes=fmt_bytes(v)) if "{bytes}" in form else form.format(v)
        assert text in full, (text, full)
        if in_short:
            assert text in short, (text, short)
        # the report's tables and compare's differences (3 significant digits, in a unit of the same kind)
        for labels, html, cls in ((REPORT, page, ""), (COMPARE, cpage, ' class="n"')):
            if path in labels:
                shown, shown_unit = page_value(html, labels[path], cls)
                assert shown_unit == (unit if unit != "count" else "count"), (path, shown_unit)
                assert shown == pytest.approx(v, rel=0.006, abs=1e-9), (path, labels[path], shown, v)
        # Python's compare(): the same value, and the unit in its label
        if path in PY_COMPARE:
            label = PY_COMPARE[path]
            assert diff.loc[label, "a"] == pytest.approx(v, rel=1e-12), label
            assert f"({unit})" in label or unit in ("cores", "count"), label

    # the job summary: a job merged from two copies of this node, renamed
    nodes = []
    for name in ("na", "nb"):
        copy = tmp_path / f"{name}.db"
        shutil.copy(rec, copy)
        con = sqlite3.connect(copy)
        con.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                        [("job_node", name), ("job_id", "26")])
        con.commit()
        con.close()
        nodes.append(copy)
    job = tmp_path / "26.db"
    assert js("merge", "-q", "-o", job, *nodes).returncode == 0
    j = js.summary_json(job)
    jtext = js("summary", job, check=True).stdout
    for path, unit, _, _ in HEADLINES:
        v = dig(s, path)
        for node in j["nodes"]:  # each node: the node's own figures, at the same paths
            assert dig(node, path) == pytest.approx(v, rel=1e-12), (path, node["node"])
    assert j["cpu"]["total_s"] == pytest.approx(2 * s["cpu"]["total_s"], rel=1e-12)
    assert j["io"]["write_bytes"] == 2 * s["io"]["write_bytes"]
    assert j["memory"]["peak_bytes"] == s["memory"]["peak_bytes"]  # the largest node's, not a sum
    assert j["wall_time_s"] == pytest.approx(s["wall_time_s"], rel=1e-12)
    assert j["exact"]["cpu"] == s["exact"]["cpu"]
    row = next(line for line in jtext.splitlines() if line.strip().startswith("na "))
    assert f"{s['cpu']['total_s']:.3f}" in row and fmt_bytes(s["memory"]["peak_bytes"]) in row, row
    assert f"peak {fmt_bytes(s['memory']['peak_bytes'])} on node na" in jtext
    sys.modules.pop("jobscope", None)
