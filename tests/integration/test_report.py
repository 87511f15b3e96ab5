# SPDX-License-Identifier: MIT
"""`jobscope report`, `jobscope compare`, `jobscope run --report` and `jobscope export --format hdf5` on real
recordings: a CPU-bound run (two processes burning CPU) and a memory run (a process growing to ~300 MiB and
freeing it).

Without a browser: the page is valid UTF-8 with balanced tags and no way to request anything, every chart the
recording's sources call for is there with data, the charted peaks equal the summary's, the command line
options behave like every jobscope output. In headless Chromium (chromium.py, DevTools over a pipe, no
network): no console error and no request, every chart drawn (SVG paths with a length, bars, heat-map cells),
a screenshot that is not blank, and the page printed to a non-empty PDF; the same for `compare`. A recording
whose monitor was killed (SIGKILL, no closing metadata) is reported and the page says where the data ends.
HDF5: h5py and the pandas recipe of docs/FORMAT.md read every table of both recordings, and every value equals
the SQLite file's.

With JOBSCOPE_DOCS_SHOTS=1 the Chromium test also writes docs/report-cpu.png, docs/report-memory.png and
docs/report-compare.png (the screenshots docs/REPORT.md shows); nothing here compares against them.
"""
import json
import math
import os
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

import chromium
from conftest import PYTHON, REPO, WORKLOADS, Jobscope, assert_clean_error, assert_no_crash, wait_for
from test_report_render import CHART_STATE, TagChecker, charts_data, png_info

BUILD = Path(os.environ.get("JOBSCOPE_BUILD", REPO / "build"))
METRICS = BUILD / "report_metrics.json"
SHOTS = os.environ.get("JOBSCOPE_DOCS_SHOTS") == "1"

GROW = ("import time\n"
        "chunks = []\n"
        "for i in range(15):\n"
        "    b = bytearray(20 * 1024 * 1024)\n"
        "    for k in range(0, len(b), 4096): b[k] = 1\n"
        "    chunks.append(b); time.sleep(0.1)\n"
        "time.sleep(0.5)\n"
        "chunks.clear(); time.sleep(0.6)\n")


def record(**values):
    data = json.loads(METRICS.read_text()) if METRICS.exists() else {}
    data.update(values)
    METRICS.write_text(json.dumps(data, indent=2) + "\n")
    print(values)


@pytest.fixture(scope="module")
def runs(jobscope_bin, tmp_path_factory):
    """Two real recordings and their reports and comparison."""
    js = Jobscope(jobscope_bin, tmp_path_factory.mktemp("report"))
    burn = str(WORKLOADS / "burn.py")
    cpu = js.run(["sh", "-c", f"{PYTHON} {burn} 2.5 & {PYTHON} {burn} 2.5 & wait"], interval="0.2s", name="cpu")
    assert cpu.returncode == 0, cpu.proc.stderr
    mem = js.run([PYTHON, "-c", GROW], interval="0.1s", name="mem")
    assert mem.returncode == 0, mem.proc.stderr
    out = {"js": js, "cpu": cpu, "mem": mem}
    for name in ("cpu", "mem"):
        t0 = time.monotonic()
        p = js("report", out[name].recording)
        assert_no_crash(p)
        assert p.returncode == 0, p.stderr
        page = js.path(f"{name}.html")
        assert p.stdout.strip() == str(page) and page.is_file()
        out[f"{name}_html"] = page
        record(**{f"report_{name}_s": time.monotonic() - t0, f"report_{name}_bytes": page.stat().st_size})
    p = js("compare", cpu.recording, mem.recording)
    assert p.returncode == 0, p.stderr
    out["compare_html"] = js.path("cpu-vs-mem.html")
    assert out["compare_html"].is_file()
    return out


def figures(text):
    return re.findall(r'<figure class="chart (\w+)" id="([^"]+)">', text)


def check_page(text):
    """Valid, self-contained markup."""
    assert text.startswith("<!DOCTYPE html>\n")
    assert not [c for c in text if ord(c) < 0x20 and c not in "\n\t"]
    checker = TagChecker()
    checker.feed(text)
    checker.close()
    assert not checker.problems, checker.problems[:5]
    assert checker.stack == [], f"unclosed: {checker.stack}"
    assert len(checker.ids) == len(set(checker.ids)), "duplicate ids"
    assert "default-src 'none'" in text
    assert "https:" not in text and text.count("http:") == text.count("http://www.w3.org/2000/svg")


def test_report_page(runs):
    text = runs["cpu_html"].read_text(encoding="utf-8")
    check_page(text)
    kinds = dict((i, k) for k, i in figures(text))
    # the charts a run on this machine always has data for
    for cid in ("cpu", "host-cpu", "mem", "host-mem", "io-calls", "pressure", "procs", "top-cpu", "top-mem"):
        assert cid in kinds, (cid, sorted(kinds))
    data = charts_data(text)
    for cid, kind in kinds.items():
        if kind == "line":
            d = data[cid]
            assert d and d["s"] and all(len(s["v"]) > 0 for s in d["s"]), cid
        elif kind == "bars":
            bars = re.search(rf'id="{cid}">(.*?)</figure>', text, re.S).group(1)
            assert bars.count("<rect") >= 1, cid
    # the cores chart: its peak is the summary's (the model's rate, not smoothed), and two cores were busy
    summary = runs["cpu"].summary
    cores = max(v for v in data["cpu"]["s"][0]["v"] if v is not None)
    assert math.isclose(cores, summary["cpu"]["max_cores"], rel_tol=1e-5)
    assert cores > 0.2 and summary["cpu"]["total_s"] >= 4.9  # two burners of 2.5 s each (the machine is shared)
    # header facts, advice and tables
    assert "sh -c" in text and "burn.py" in text
    assert '<dt>exit status</dt><dd>0</dd>' in text
    assert '<dt>recording</dt><dd>complete</dd>' in text
    assert 'id="advice"' in text and 'id="summary"' in text and 'id="inventory"' in text and 'id="monitor"' in text
    assert "Cost of each source per sample" in text and "proc_tree" in text

    mem = runs["mem_html"].read_text(encoding="utf-8")
    check_page(mem)
    d = charts_data(mem)["mem"]
    rss = next(s for s in d["s"] if s["n"] == "RSS sum (shared pages per process)")
    peak = max(v for v in rss["v"] if v is not None)
    assert math.isclose(peak, runs["mem"].summary["memory"]["peak_rss_sum_bytes"], rel_tol=1e-5)
    assert d["s"][0]["n"] == "memory (no page twice)"  # the headline's series first
    assert peak > 250 * 1024 * 1024
    assert "kernel peak" in mem


def test_compare_page(runs):
    text = runs["compare_html"].read_text(encoding="utf-8")
    check_page(text)
    assert "cpu against mem" in text
    a, b = runs["cpu"].summary, runs["mem"].summary
    row = re.search(r'<th scope="row">CPU time</th>(.*?)</tr>', text).group(1)
    cells = re.findall(r'<td class="n">(.*?)</td>', row)
    assert len(cells) == 4 and cells[3].endswith("\u00d7")
    ratio = float(cells[3][:-1])
    assert math.isclose(ratio, round(b["cpu"]["total_s"] / a["cpu"]["total_s"], 3), rel_tol=2e-3)
    for what in ("wall time", "peak memory", "peak RSS sum, sampled", "read through calls"):
        assert f'<th scope="row">{what}</th>' in text
    data = charts_data(text)
    names = [s["n"] for s in data["cpu"]["s"]]
    assert names == ["cpu: cores in use", "mem: cores in use"]
    assert 'class="s d"' in text  # B dashed


def test_report_cli(runs, tmp_path):
    js = runs["js"]
    rec = runs["cpu"].recording
    # an existing page is not replaced without --force
    p = js("report", rec)
    assert_clean_error(p, rc=1)
    assert "already exists" in p.stderr
    out = tmp_path / "x.html"
    p = js("report", "-o", out, rec)
    assert p.returncode == 0 and out.stat().st_size > 10000
    p = js("report", "--force", "-o", out, rec)
    assert p.returncode == 0
    # never through a symbolic link, never over the recording
    link = tmp_path / "link.html"
    link.symlink_to(tmp_path / "target.html")
    assert_clean_error(js("report", "-o", link, rec), rc=1)
    assert not (tmp_path / "target.html").exists()
    p = js("report", "--force", "-o", rec, rec)
    assert_clean_error(p, rc=1)
    assert "input" in p.stderr
    # bad inputs: one line, and no page left behind
    bad = tmp_path / "bad.db"
    bad.write_text("not a recording")
    assert_clean_error(js("report", bad), rc=1)
    assert not (tmp_path / "bad.html").exists()
    assert_clean_error(js("report"), rc=2)
    assert_clean_error(js("compare", rec), rc=2)
    assert_clean_error(js("report", "--bogus", rec), rc=2)
    p = js("report", "--help")
    assert p.returncode == 0 and "Usage: jobscope report" in p.stdout
    p = js("help", "compare")
    assert p.returncode == 0 and "Usage: jobscope compare" in p.stdout


def test_run_report(js, workload, tmp_path):
    p = js("run", "-i", "0.2s", "--report", "-o", "r.db", "--", PYTHON, workload("burn.py"), "0.5")
    assert_no_crash(p)
    assert p.returncode == 0, p.stderr
    page = js.path("r.html")
    assert page.is_file()
    assert f"jobscope: report {page.name}" in p.stderr
    text = page.read_text(encoding="utf-8")
    check_page(text)
    assert 'id="cpu"' in text and "burn.py" in text
    p = js("run", "-q", "--report=mine.html", "-o", "r2.db", "--", "true")
    assert p.returncode == 0 and p.stderr == ""
    assert js.path("mine.html").stat().st_size > 10000
    # a report path that cannot be created fails before the command runs
    marker = tmp_path / "ran"
    p = js("run", "-q", "--report=mine.html", "-o", "r3.db", "--", "touch", marker)
    assert_clean_error(p, rc=1)
    assert not marker.exists() and not js.path("r3.db").exists()


def test_killed_recording(js, workload, request):
    """A monitor killed with SIGKILL leaves no closing metadata: the report says where the data ends."""
    proc = js.popen("run", "-q", "-i", "0.1s", "-o", "k.db", "--", PYTHON, workload("burn.py"), "30")
    rec = js.path("k.db")

    def samples():
        try:
            with sqlite3.connect(f"file:{rec}?mode=ro", uri=True) as db:
                return db.execute("SELECT count(*) FROM samples").fetchone()[0] >= 10
        except sqlite3.Error:
            return False

    try:
        wait_for(samples, 30, what="10 samples in the recording")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # jobscope and the workload (its own session)
        proc.wait()
    p = js("report", "k.db")
    assert_no_crash(p)
    assert p.returncode == 0, p.stderr
    text = js.path("k.html").read_text(encoding="utf-8")
    check_page(text)
    assert 'id="data-end"' in text
    m = re.search(r'The recording is incomplete: its monitor stopped without closing it .*?The data ends at '
                  r'(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC), ([\d:.]+ ?s?) after the start \(sample (\d+)', text)
    assert m, re.search(r'<p class="note".*?</p>', text, re.S)
    with sqlite3.connect(f"file:{rec}?mode=ro", uri=True) as db:
        last = db.execute("SELECT max(sample) FROM samples").fetchone()[0]
    assert int(m.group(3)) == last
    assert '<dt>recording</dt><dd>incomplete</dd>' in text and '<dt>end</dt><dd>not recorded</dd>' in text
    assert "not closed by its monitor" in text  # the advice too
    assert 'id="cpu"' in text
    if chromium.available():
        check_in_browser(request.getfixturevalue("browser"), js.path("k.html"))


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not chromium.available():
        pytest.skip(f"{chromium.CHROMIUM} not installed")
    b = chromium.Browser(tmp_path_factory.mktemp("chromium"))
    yield b
    b.close()


def screenshot_to_docs(page, name, selector=None, height=1700):
    """docs/NAME: the top of the page (`height` CSS pixels), or the element `selector` with a margin."""
    import base64
    clip = {"x": 0, "y": 0, "width": 1280, "height": height, "scale": 1}
    if selector:
        r = page.evaluate(f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
                          ".getBoundingClientRect(); return {y: r.top + window.scrollY, h: r.height}; })()")
        clip.update(y=max(0, r["y"] - 12), height=r["h"] + 24)
    r = page.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip},
                  timeout=120)
    (REPO / "docs" / name).write_bytes(base64.b64decode(r["data"]))


def check_in_browser(browser, path, shots=()):
    """Load the page: no error or request, every chart drawn, a screenshot that is not blank, a PDF; then write
    the docs screenshots `shots` ((name, selector, height) each) when asked to."""
    page = browser.page(1280, 900)
    timing = page.load(path.as_uri())
    state = page.evaluate(CHART_STATE)
    text = path.read_text(encoding="utf-8")
    for kind, cid in figures(text):
        s = state[cid]
        assert s["w"] > 300 and s["h"] > (20 if kind == "bars" else 50), (cid, s)
        if kind == "line":
            assert s["paths"] >= 1, (cid, s)
        else:  # bars: one per command at least; heat maps: cells
            assert s["rects"] >= (1 if kind == "bars" else 2), (cid, s)
    png = page.screenshot(full=True)
    w, h, distinct = png_info(png)
    assert w == 1280 and h > 2000 and distinct > 50, (w, h, distinct)
    pdf = page.pdf()
    assert pdf.startswith(b"%PDF-") and len(pdf) > 20000
    pages = len(re.findall(rb"/Type\s*/Page[^s]", pdf))
    assert pages >= 2, pages
    if SHOTS:
        for name, selector, height in shots:
            screenshot_to_docs(page, name, selector, height)
    page.collect()
    assert page.errors == [], page.errors
    assert page.requests == []
    return timing, len(pdf), pages


def test_chromium_report_and_compare(runs, browser):
    t, pdf, pages = check_in_browser(browser, runs["cpu_html"], [("report-cpu.png", None, 1500)])
    record(chromium_report_render_ms=t["render_ms"], report_pdf_bytes=pdf, report_pdf_pages=pages)
    check_in_browser(browser, runs["mem_html"], [("report-memory.png", "#sec-memory", 0)])
    t, pdf, pages = check_in_browser(browser, runs["compare_html"], [("report-compare.png", None, 1900)])
    record(chromium_compare_render_ms=t["render_ms"], compare_pdf_bytes=pdf)


# ---- HDF5 ----

def read_table(path, table):
    """The pandas recipe of docs/FORMAT.md: one table of a jobscope HDF5 export as a DataFrame, missing
    integers and text as <NA>, missing reals as NaN."""
    import h5py
    import pandas as pd

    with h5py.File(path, "r") as f:
        g = f[table]
        cols = {}
        for name in g.attrs["columns"]:
            ds = g[name]
            if ds.dtype.kind == "O":
                values = pd.array(ds.asstr()[()], dtype="string")
            elif ds.dtype.kind == "i":
                values = pd.array(ds[()], dtype="Int64")
            else:
                values = ds[()]
            if "_mask" in g and name in g["_mask"]:
                values[g["_mask"][name][()].astype(bool)] = pd.NA
            cols[name] = values
        return pd.DataFrame(cols)


def test_hdf5_export(runs, tmp_path):
    h5py = pytest.importorskip("h5py")
    pd = pytest.importorskip("pandas")
    js = runs["js"]
    for name in ("cpu", "mem"):
        rec = runs[name].recording
        out = tmp_path / f"{name}.h5"
        t0 = time.monotonic()
        p = js("export", "--format", "hdf5", "-o", out, rec)
        assert p.returncode == 0, p.stderr
        record(**{f"hdf5_{name}_s": time.monotonic() - t0, f"hdf5_{name}_bytes": out.stat().st_size,
                  f"recording_{name}_bytes": rec.stat().st_size})
        assert not list(tmp_path.glob(".jobscope-h5-*"))
        db = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        # schema 2 stores the process rows that changed (proc_changes, proc_gone); the HDF5 file holds the
        # table whole, as the view `proc` shows it to SQL
        if "proc_changes" in tables:
            tables = (tables - {"proc_changes", "proc_gone"}) | {"proc"}
        meta = dict(db.execute("SELECT key, value FROM meta"))
        with h5py.File(out, "r") as f:
            assert set(f.attrs["tables"]) == tables - {"meta", "columns"}
            assert set(f.keys()) == set(f.attrs["tables"])
            for k, v in meta.items():
                assert f.attrs[k] == v, k
            for t in f.attrs["tables"]:
                g = f[t]
                cols = list(g.attrs["columns"])
                assert cols[0] == "sample"
                stored = [r[1] for r in db.execute(f"PRAGMA table_info({t})")]
                assert cols == stored, (t, cols, stored)
                order = "sample, pid, start_ticks" if t == "proc" else "rowid"
                rows = db.execute(f"SELECT {', '.join(chr(34) + c + chr(34) for c in cols)} FROM {t} "
                                  f"ORDER BY {order}").fetchall()
                if t == "proc":  # the file's rows of one sample come in the reader's order: sort alike
                    perm = sorted(range(len(g["sample"])), key=lambda i: (g["sample"][i], g["pid"][i],
                                                                          g["start_ticks"][i]))
                assert len(g["sample"]) == len(rows), t
                for j, c in enumerate(cols):
                    ds = g[c]
                    assert ds.shape == (len(rows),)
                    if c != "sample":
                        assert {"unit", "kind", "help"} <= set(ds.attrs), (t, c)
                    vals = ds.asstr()[()] if ds.dtype.kind == "O" else ds[()]
                    mask = g["_mask"][c][()] if "_mask" in g and c in g["_mask"] else None
                    if t == "proc":
                        vals = [vals[i] for i in perm]
                        mask = None if mask is None else [mask[i] for i in perm]
                    for i, r in enumerate(rows):
                        v = r[j]
                        if v is None:
                            assert (mask[i] == 1) if mask is not None else math.isnan(vals[i]), (t, c, i)
                        else:
                            assert mask is None or mask[i] == 0, (t, c, i)
                            assert vals[i] == v, (t, c, i, vals[i], v)
        # pandas, through the recipe, equals SQL
        for t in sorted(tables - {"meta", "columns"}):
            df = read_table(out, t)
            if t == "proc":
                df = df.sort_values(["sample", "pid", "start_ticks"], kind="stable").reset_index(drop=True)
            sql = pd.read_sql(f"SELECT * FROM {t} ORDER BY {'sample, pid, start_ticks' if t == 'proc' else 'rowid'}",
                              db)
            assert list(df.columns) == list(sql.columns), t
            assert len(df) == len(sql), t
            for c in df.columns:
                a, b = df[c].tolist(), sql[c].tolist()
                for x, y in zip(a, b):
                    if y is None or (isinstance(y, float) and math.isnan(y)):
                        assert x is pd.NA or (isinstance(x, float) and math.isnan(x)), (t, c, x, y)
                    else:
                        assert x == y, (t, c, x, y)
        db.close()
    # the CLI: default name next to the recording, no overwrite, no --scope, never the recording
    rec = runs["cpu"].recording
    p = js("export", "--format", "hdf5", rec)
    assert p.returncode == 0, p.stderr
    assert rec.with_suffix(".h5").is_file()
    assert_clean_error(js("export", "--format", "hdf5", rec), rc=1)
    assert_clean_error(js("export", "--format", "hdf5", "--scope", "tree", rec), rc=2)
    assert_clean_error(js("export", "--format", "hdf5", "--force", "-o", rec, rec), rc=1)
    assert sqlite3.connect(f"file:{rec}?mode=ro", uri=True).execute("SELECT count(*) FROM samples").fetchone()[0]


def test_hdf5_export_without_the_library(runs, tmp_path, monkeypatch):
    """The HDF5 library is loaded with dlopen by `export --format hdf5` only: where it cannot be loaded
    ($JOBSCOPE_HDF5_LIBRARY, for tests, names the only file to try) the export prints one line with the
    loader's reason, exits 1 and leaves no file behind; the other formats do not need it."""
    js = runs["js"]
    rec = runs["cpu"].recording
    out = tmp_path / "nolib.h5"
    for lib, why in (("/nonexistent/libhdf5_serial.so.103", "/nonexistent/libhdf5_serial.so.103: cannot open "
                      "shared object file"), ("libm.so.6", "required symbol missing: H5open")):
        monkeypatch.setenv("JOBSCOPE_HDF5_LIBRARY", lib)
        p = js("export", "--format", "hdf5", "-o", out, rec)
        assert_clean_error(p, rc=1)
        assert p.stderr.startswith("jobscope: HDF5 library not loadable: ") and why in p.stderr, p.stderr
        assert not out.exists() and not list(tmp_path.glob(".jobscope-h5-*"))
    p = js("export", "--format", "csv", "-o", tmp_path / "nolib.csv", rec)
    assert p.returncode == 0, p.stderr
