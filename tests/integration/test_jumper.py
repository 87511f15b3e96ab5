# SPDX-License-Identifier: MIT
"""JUmPER's notebooks on jobscope: `%load_ext jobscope` instead of `%load_ext jumper_extension`.

Real notebooks run through nbclient on a real ipykernel (workloads/run_notebook.py, in a subprocess, so the
kernel can run as another user or inside a SLURM job). Covered: every JUmPER magic with its arguments (cell
ranges 5, 2:8, :5, 3:, -2:), the four levels (process and system here; user with a second user's processes
present; slurm inside the test SLURM cluster), exports and loads, sessions both ways (ours read back, and the
session the real JUmPER 0.3.6 wrote: tests/fixtures/jumper-session), the generated script, JUmPER's analyzer
(its thresholds) beside jobscope's verdict. Figures against oracles in CPU time: the workload's own
getrusage/thread_time and psutil's view of the other processes, so a busy machine changes nothing.
"""
import importlib.util
import json
import os
import pickle
import pwd
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PYTHON, REPO
from infra import slurm_cluster, slurm_missing

pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")
pd = pytest.importorskip("pandas")
psutil = pytest.importorskip("psutil")

PYDIR = REPO / "python"
FIXTURE = REPO / "tests" / "fixtures" / "jumper-session"
RUNNER = REPO / "tests" / "integration" / "workloads" / "run_notebook.py"


def lib_path():
    env = os.environ.get("JOBSCOPE_BUILD")
    return (Path(env).resolve() if env else REPO / "build") / "lib" / "libjobscope.so.0"


LIB = lib_path()
needs_lib = pytest.mark.skipif(not LIB.exists(), reason=f"{LIB} not built")
sys.path.insert(0, str(PYDIR))


def stage(folder):
    """The Python package, the library and the runner copied where any user may read them."""
    folder = Path(folder)
    shutil.copytree(PYDIR / "jobscope", folder / "py" / "jobscope", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(LIB.resolve(), folder / "libjobscope.so.0")
    shutil.copyfile(RUNNER, folder / "run_notebook.py")
    for p in [folder, *folder.rglob("*")]:
        p.chmod(0o777 if p.is_dir() else 0o755)
    return {"PYTHONPATH": str(folder / "py"), "JOBSCOPE_LIBRARY": str(folder / "libjobscope.so.0")}


def run_nb(cells, work, env=None, user=None, timeout=400):
    """Run `cells` as a notebook in `work`; a list of per-cell dicts (text, html, images, errors)."""
    work = Path(work)
    (work / "cells.json").write_text(json.dumps(cells))
    e = {k: v for k, v in os.environ.items() if not k.startswith(("JOBSCOPE_SOCKET", "SLURM_"))}
    e.update(env or {"PYTHONPATH": str(PYDIR), "JOBSCOPE_LIBRARY": str(LIB)})
    e["MPLBACKEND"] = "agg"
    argv = [PYTHON, str(RUNNER if user is None else Path(e["PYTHONPATH"]).parent / "run_notebook.py"),
            str(work / "cells.json"), str(work / "out.json"), str(work)]
    if user:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "env", f"HOME={work}", *argv]
    p = subprocess.run(argv, env=e, cwd=work, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads((work / "out.json").read_text())


def no_errors(out):
    for i, c in enumerate(out):
        assert not c["errors"], f"cell {i} ({c['source'][:60]!r}): {c['errors']}"


def figure(text, label):
    """jobscope's CPU seconds from a text report ("CPU time 1.23 s"), or the oracle a cell printed."""
    m = re.search(rf"{label} ([0-9.]+)", text)
    assert m, f"no {label!r} in:\n{text}"
    return float(m.group(1))


def table(text, metric):
    """JUmPER's table row: (avg, min, max)"""
    m = re.search(rf"^{re.escape(metric)}\S*(?: \S+)*?\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)", text, re.M)
    assert m, f"no {metric!r} row in:\n{text}"
    return tuple(float(x) for x in m.groups())


BURN_MAIN = "t0 = time.thread_time()\nwhile time.thread_time() - t0 < {s}:\n    pass\n"
CHILD = "import time\nt=time.process_time()\nwhile time.process_time()-t<{s}: pass"

# ---- the whole notebook: every magic, process and system levels ---------------------------------------------

CELLS = [
    "%load_ext jobscope",                                                                   # -  (not in history)
    "%perfmonitor_help",                                                                    # 0
    "%perfmonitor_start 0.25",                                                              # 1
    "%perfmonitor_resources\n%perfmonitor_enable_perfreports --level process --text",       # 2
    # 3: CPU in this thread and in a child; the oracle from the workload itself
    "import resource, subprocess, sys, time\nr0 = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "t_start = time.thread_time()\n"
    f"subprocess.run([sys.executable, '-c', {CHILD.format(s=0.6)!r}], check=True)\n"
    + BURN_MAIN.format(s=0.6) +
    "r1 = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "oracle = time.thread_time() - t_start + r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime\n"
    "print(f'ORACLE {oracle:.4f}')",
    # 4: memory, then 2.5 s asleep: about ten whole rows at 0.25 s for the per-row rate check, however long the
    # other cells' marks keep the rows short on a busy machine
    "x = bytearray(300 * 1024 * 1024)\nfor i in range(0, len(x), 4096):\n    x[i] = 1\ntime.sleep(2.5)",
    "y = 1",                                                                                # 5: a short cell
    "%perfmonitor_perfreport --cell 3:4 --text",                                            # 6
    "%perfmonitor_perfreport --cell :4 --level system --text\n%perfmonitor_perfreport --cell 3: --text\n"
    "%perfmonitor_perfreport --cell -4:-3 --text\n%perfmonitor_perfreport --cell 99 --text",  # 7
    "%perfmonitor_perfreport --cell 3 --level user --text\n%perfmonitor_perfreport --cell 3",  # 8: text, html
    "%perfmonitor_disable_perfreports",                                                     # 9
    "%perfmonitor_plot --metrics cpu_summary,memory,io_read --cell 3:4 --level process "
    "--save-jpeg plot.jpg --pickle plot.pkl",                                               # 10
    "%perfmonitor_plot\n%perfmonitor_plot --metrics cpu_all --level system --cell 3",      # 11
    "%perfmonitor_plot --live 0.3 30 --metrics cpu_summary,memory\nimport jobscope.jumper as J\n"
    "lp = J._magics.adapter.live[0]\nt_end = time.monotonic() + 120\n"
    "while lp.updates < 3 and time.monotonic() < t_end:\n    time.sleep(0.1)",          # 12: redrawn meanwhile
    "import jobscope.jumper as J\nlp = J._magics.adapter.live[0]\nprint('LIVE', lp.updates, lp.alive)",  # 13
    "%perfmonitor_export_perfdata --file perf.csv --level process\n"
    "%perfmonitor_export_perfdata --file sys.json --level system\n"
    "%perfmonitor_export_perfdata --name mydf --level user\n"
    "%perfmonitor_export_perfdata\nprint('COLS', list(mydf.columns)[:12], len(perfdata_df))",  # 14
    "%perfmonitor_export_cell_history --file cells.csv\n%perfmonitor_export_cell_history\n"
    "print('CELLS', len(cell_history_df))",                                                 # 15
    "%perfmonitor_load_perfdata perf.csv\n%perfmonitor_load_cell_history cells.csv\n"
    "print('LOADED', len(loaded_perfdata_df), len(loaded_cell_history_df))\n"
    "%perfmonitor_load_perfdata nosuch.csv",                                               # 16
    "%show_cell_history\n%cell_history",                                                    # 17
    "%start_write_script recorded.py",                                                      # 18
    "z = 41 + 1\nprint('RAN', z)",                                                          # 19: recorded, not run
    "%end_write_script",                                                                    # 20
    "%export_session sess\n%export_session sess.zip",                                       # 21
    "%perfmonitor_stop",                                                                    # 22
    "%perfmonitor_fast_setup",                                                              # 23
    "%perfmonitor_stop",                                                                    # 24
    "%import_session sess\n%perfmonitor_resources\n%perfmonitor_perfreport --cell 3 --text\n"
    "%perfmonitor_plot --level system --cell 3:4",                                          # 25
    f"%import_session {FIXTURE}\n%perfmonitor_perfreport --cell 3 --text\n"
    "%perfmonitor_perfreport --cell 1:3 --level user --text\n%perfmonitor_plot --level process --cell 1:3\n"
    "%perfmonitor_export_perfdata --level system --name fx\nprint('FIXTURE', len(fx), list(fx.columns)[:3])",  # 26
    "%import_session sess.zip\n%perfmonitor_perfreport --cell 4 --text\n%import_session nosuch.zip\n"
    "%perfmonitor_start abc",                                                               # 27
]


@pytest.fixture(scope="module")
def notebook(tmp_path_factory):
    if not LIB.exists():
        pytest.skip(f"{LIB} not built")
    work = tmp_path_factory.mktemp("jumper-nb")
    out = run_nb(CELLS, work)
    return out[1:], work  # out[i] is JUmPER's cell i


@needs_lib
def test_every_magic_runs(notebook):
    out, work = notebook
    no_errors(out)
    assert "perfmonitor_plot" in out[0]["text"] and "Cell Range Formats" in out[0]["text"]
    assert "Performance monitoring started" in out[1]["text"]
    assert "CPUs: " in out[2]["text"] and "CPU affinity" in out[2]["text"]
    assert "Performance reports enabled" in out[2]["text"]
    assert "Performance reports for each cell disabled" in out[9]["text"]
    assert "Exported to perf.csv" in out[14]["text"] and "Exported to sys.json" in out[14]["text"]
    assert "'mydf'" in out[14]["text"] and "'perfdata_df'" in out[14]["text"]
    assert "Exported to cells.csv" in out[15]["text"] and "CELLS" in out[15]["text"]
    assert re.search(r"LOADED \d+ \d+", out[16]["text"]) and "Failed to load performance data" in out[16]["text"]
    assert len(out[17]["html"]) == 2  # %show_cell_history and %cell_history
    assert "stopped" in out[22]["text"]
    assert "Fast setup complete" in out[23]["text"] and "ipympl" in out[23]["text"]
    assert "Invalid interval value: abc" in out[27]["text"]
    assert "cannot import the session" in out[27]["text"] and "nosuch.zip" in out[27]["text"]


@needs_lib
def test_cell_reports_against_the_workload(notebook):
    out, _ = notebook
    cpu_cell = out[3]["text"]
    oracle = figure(cpu_cell, "ORACLE")
    # the report after the cell is about that cell: jobscope's exact CPU time, and JUmPER's table
    assert "JUmPER Performance Report" in cpu_cell and "(1 cell)" in cpu_cell
    js_cpu = figure(cpu_cell, "CPU time")
    print(f"process level: oracle {oracle:.3f} s, jobscope {js_cpu:.3f} s")
    assert oracle - 0.05 <= js_cpu <= oracle + 0.3, (oracle, js_cpu)
    # memory: the 300 MiB buffer (PSS, GiB)
    mem = table(out[4]["text"], "Memory (GB)")
    assert mem[2] >= 300 / 1024 * 0.95, mem
    # a cell shorter than the interval still has its report (JUmPER: "No performance data")
    assert "JUmPER Performance Report" in out[5]["text"] and "No performance data" not in out[5]["text"]
    # ranges: 3:4 covers both cells
    rep = out[6]["text"]
    assert "(2 cells)" in rep and figure(rep, "CPU time") >= oracle - 0.05
    r7 = out[7]["text"]
    assert "(5 cells)" in r7  # :4 at system level
    assert "Across 2 CPUs" in r7 or "CPUs)" in r7
    assert "Invalid cell range format: 99" in r7
    assert r7.count("JUmPER Performance Report") == 3
    # user level of cell 3: at least the kernel's tree
    assert figure(out[8]["text"], "CPU time") >= oracle - 0.05
    assert out[8]["html"] and "JUmPER Performance Report" in out[8]["html"][0]


@needs_lib
def test_analyzer_tags_beside_jobscope_verdict(notebook):
    out, _ = notebook
    # JUmPER's verdict on the fixture's CPU cell (94 % of both CPUs for 3 s): CPU-BOUND
    fixture = out[26]["text"]
    first = fixture.split("JUmPER Performance Report")[1]
    assert "Signature(s):\nCPU-BOUND" in first
    # ours: JUmPER's thresholds applied to its mean of rows and to jobscope's exact figure, side by side
    assert "verdict:" in out[3]["text"] and "JUmPER's thresholds on jobscope's figures" in out[3]["text"]


@needs_lib
def test_plots_and_exports(notebook):
    out, work = notebook
    assert out[10]["images"] == 1 and (work / "plot.jpg").stat().st_size > 5000
    with open(work / "plot.pkl", "rb") as f:
        pk = pickle.load(f)
    assert pk["level"] == "process" and pk["metrics"] == ["cpu_summary", "memory", "io_read"]
    assert pk["cell_range"] == (3, 4) and len(pk["processed_data"]) >= 2
    assert out[11]["images"] == 2
    assert out[12]["images"] == 1
    live = re.search(r"LIVE (\d+) (\w+)", out[13]["text"])
    assert live and int(live.group(1)) >= 2, out[13]["text"]  # redrawn while the cell slept
    perf = pd.read_csv(work / "perf.csv")
    base = ["time", "memory", "io_read_count", "io_write_count", "io_read", "io_write", "cpu_util_avg",
            "cpu_util_min", "cpu_util_max", "cpu_util_0"]
    assert list(perf.columns[:10]) == base and "cell_index" in perf.columns
    assert {3, 4} <= set(perf["cell_index"].dropna().astype(int))
    # per row: the CPU rate times the interval is the cumulative CPU's step (one model, no drift); a row
    # shorter than half the interval (a sample at a cell's mark) shares its rate with the row before, which the
    # next rows' carry then evens out: those rows are left out of the per-row check, not out of the total
    step = perf["js_cpu_s"].diff().iloc[1:]
    rate = (perf["cpu_util_avg"] / 100 * len(os.sched_getaffinity(0)) * perf["js_dt_s"]).iloc[1:]
    short = perf["js_dt_s"] < 0.125
    plain = ~(short | short.shift(1, fill_value=False) | short.shift(2, fill_value=False)).iloc[1:]
    assert plain.sum() >= 10, perf[["js_dt_s", "js_cpu_s"]].to_string()
    near = (step - rate).abs() < 0.02 + 0.05 * step.abs()
    assert near[plain].mean() > 0.9, pd.DataFrame({"step": step, "rate": rate, "plain": plain}).to_string()
    assert abs(rate.sum() - step.sum()) < 0.05 + 0.05 * step.sum(), (rate.sum(), step.sum())
    sysj = pd.read_json(work / "sys.json")
    assert "cpu_util_1" in sysj.columns or os.cpu_count() == 1
    cells = pd.read_csv(work / "cells.csv")
    assert list(cells.columns) == list(pd.read_csv(FIXTURE / "cell_history.csv").columns)


@needs_lib
def test_write_script(notebook):
    out, work = notebook
    assert "skipped during script recording" in out[19]["text"] and "RAN" not in out[19]["text"]
    script = (work / "recorded.py").read_text()
    assert "z = 41 + 1" in script and "build_magic_adapter" in script
    # the script runs on its own: the recorded cell runs, the monitor starts, its data is exported
    env = {**os.environ, "PYTHONPATH": str(PYDIR), "JOBSCOPE_LIBRARY": str(LIB), "MPLBACKEND": "agg"}
    env.pop("JOBSCOPE_SOCKET", None)
    p = subprocess.run([PYTHON, "recorded.py"], cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "RAN 42" in p.stdout
    assert (work / "recorded_perfdata.csv").exists() and (work / "recorded_cell_history.csv").exists()


@needs_lib
@pytest.mark.skipif(importlib.util.find_spec("jumper_extension") is None,
                    reason="jumper_extension (JUmPER) is not installed")
def test_jumpers_own_importer_reads_our_session(notebook):
    """JUmPER's own SessionImporter and text report on a session jobscope exported. Runs where jumper_extension
    is importable (its GUI dependencies, absent here, are stood in for: the import and the text report do not
    use them); JUmPER is not a Debian package, so CI skips it (docs/JUPYTER.md has the manual run)."""
    import importlib
    import importlib.util
    import logging
    import types

    for name in ("itables", "plotly", "plotly.graph_objects", "plotly.subplots", "plotly.io", "ipywidgets",
                 "jinja2"):
        try:
            importlib.import_module(name)
        except ImportError:
            m = sys.modules.setdefault(name, types.ModuleType(name))
            for attr in ("show", "options", "widgets", "Layout", "Environment", "FileSystemLoader",
                         "select_autoescape", "make_subplots"):
                setattr(m, attr, getattr(m, attr, None))
    from jumper_extension.adapters.cell_history import CellHistory
    from jumper_extension.adapters.session import SessionImporter

    _, work = notebook
    svc = types.SimpleNamespace(cell_history=CellHistory(), visualizer=types.SimpleNamespace(attach=lambda m: None))
    assert SessionImporter(logging.getLogger("test")).import_(str(work / "sess"), svc)
    assert set(svc.monitor.data.data) == {"user", "process", "system"} and len(svc.cell_history) > 20
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        svc.reporter.printer.print(cell_range=(3, 3), level="process")
    assert "JUmPER Performance Report" in buf.getvalue() and "CPU Util" in buf.getvalue()


def _keys(d, prefix=""):
    out = set()
    for k, v in d.items():
        out.add(prefix + k)
        if isinstance(v, dict) and k in ("app", "monitor", "schemas", "visualizer", "reporter"):
            out |= _keys(v, prefix + k + ".")
    return out


@needs_lib
def test_session_has_jumpers_layout(notebook):
    """What JUmPER's %import_session reads (adapters/session.py, SessionImporter): manifest.json with its keys
    and version 1.0, perf_<level>.csv with its columns, cell_history.csv; the zip holds the same files."""
    _, work = notebook
    ours = json.loads((work / "sess" / "manifest.json").read_text())
    theirs = json.loads((FIXTURE / "manifest.json").read_text())
    assert ours["version"] == "1.0" and ours["app"]["name"] == "JUmPER"
    fixture_keys = {k for k in _keys(theirs) if not k.startswith(("schemas.perf.", "reporter.thresholds."))}
    assert fixture_keys <= _keys(ours), fixture_keys - _keys(ours)
    assert ours["time_origin"] == "perf_counter" and set(ours["levels"]) == {"user", "process", "system"}
    for level in ours["levels"]:
        df = pd.read_csv(work / "sess" / f"perf_{level}.csv")
        assert list(df.columns) == ours["schemas"]["perf"][level]
        assert set(theirs["schemas"]["perf"][level]) <= set(df.columns)
        # JUmPER's OfflinePerformanceMonitor uses memory_limits[level] and its reporter the base columns
        assert ours["monitor"]["memory_limits"][level] > 0
    ch = pd.read_csv(work / "sess" / "cell_history.csv")
    assert list(ch.columns) == theirs["schemas"]["cell_history"] == ours["schemas"]["cell_history"]
    assert ours["jobscope"]["recording"] == "jobscope.db" and (work / "sess" / "jobscope.db").exists()
    import zipfile

    with zipfile.ZipFile(work / "sess.zip") as z:
        assert set(z.namelist()) == {p.name for p in (work / "sess").iterdir()}


@needs_lib
def test_sessions_round_trip(notebook):
    out, work = notebook
    # ours, read back: the report of cell 3 from the session equals the live one
    live_cpu = figure(out[3]["text"], "CPU time")
    back = out[25]["text"]
    assert "Session imported successfully" in back and "with its jobscope recording" in back
    assert "Showing resources from imported session" in back
    assert abs(figure(back, "CPU time") - live_cpu) < 0.02
    assert out[25]["images"] == 1
    # the zip too
    assert "Session imported successfully: sess.zip" in out[27]["text"]
    # the session the real JUmPER 0.3.6 wrote: its figures, its reports and plots
    fx = out[26]["text"]
    assert "Session imported successfully" in fx and "FIXTURE 2 ['time', 'memory', 'io_read_count']" in fx
    rep = fx.split("JUmPER Performance Report")[1]
    assert table(rep, "CPU Util")[0] == pytest.approx(94.25)
    assert table(rep, "Memory (GB)")[0] == pytest.approx(0.4106712341308594, abs=0.01)
    assert out[26]["images"] == 1


# ---- the analyzer on its own (JUmPER's thresholds) -----------------------------------------------------------

def test_analyzer_thresholds():
    from jobscope.jumper.report import PerformanceAnalyzer

    a = PerformanceAnalyzer()

    def tags(**cols):
        return [t for t, _ in a.analyze(pd.DataFrame(cols), memory_limit=10.0, gpu_memory_limit=cols.pop("_g", None))]

    assert tags(cpu_util_avg=[69.0, 69.0], memory=[1.0, 1.0]) == ["NORMAL"]
    assert tags(cpu_util_avg=[70.0, 70.0], memory=[1.0, 1.0]) == ["CPU-BOUND"]
    assert tags(cpu_util_avg=[90.0], memory=[8.5]) == ["CPU-BOUND", "MEMORY-BOUND"]
    assert tags(cpu_util_avg=[10.0], memory=[9.0]) == ["MEMORY-BOUND"]
    g = pd.DataFrame({"cpu_util_avg": [1.0] * 4, "memory": [0.1] * 4, "gpu_util_avg": [0.0, 0.0, 3.0, 90.0],
                      "gpu_mem_avg": [2.0] * 4})
    assert [t for t, _ in a.analyze(g, 10.0, 16.0)][0] == "GPU-ALLOCATED-BUT-NOT-USED"
    b = PerformanceAnalyzer({"cpu_ratio": 0.9})
    assert [t for t, _ in b.analyze(pd.DataFrame({"cpu_util_avg": [80.0], "memory": [0.0]}), 10.0)] == ["NORMAL"]


def test_cell_ranges():
    from jobscope.jumper.cells import parse_cell_range as r

    assert r("5", 10) == (5, 5) and r("2:8", 10) == (2, 8) and r(":5", 10) == (0, 5) and r("3:", 10) == (3, 9)
    assert r("-3:-1", 10) == (7, 9)
    assert r("8:2", 10) is None and r("10", 10) is None and r("a:b", 10) is None and r("", 10) is None


# ---- the user level, with another user's processes present -----------------------------------------------------

BURNER = """import json, os, resource, sys, time
go, out, stop, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
while go != '-' and not os.path.exists(go):
    time.sleep(0.02)
t = time.process_time()
while time.process_time() - t < secs:
    pass
r = resource.getrusage(resource.RUSAGE_SELF)
with open(out + '.tmp', 'w') as f:
    json.dump({'cpu': r.ru_utime + r.ru_stime}, f)
os.rename(out + '.tmp', out)
while not os.path.exists(stop):
    time.sleep(0.05)
"""

SPINNER = """import os, sys
stop = sys.argv[1]
n = 0
while True:
    n += 1
    if n % 200000 == 0 and os.path.exists(stop):
        break
"""


def _cell_with_outsider(level, burner, go, out, stop, start_it):
    """A cell that makes a process of the level but outside the kernel's tree burn 0.8 s, and prints the
    oracle: that process's CPU plus what the notebook client (the kernel's parent, also in the level) used."""
    # started by a shell that exits at once, the burner burns only once that shell is gone (a go file): it is
    # then outside the kernel's tree whenever a sample comes, however late under load
    launch = (f"subprocess.run(['sh', '-c', sys.executable + ' {burner} {out}.go {out} {stop} 0.8 &'])\n"
              f"open('{out}.go', 'w').close()\n" if start_it
              else f"open('{go}', 'w').close()\n")
    return ("import json, os, subprocess, sys, time, psutil\nclient = psutil.Process(os.getppid())\n"
            "c0 = sum(client.cpu_times()[:2])\n" + launch +
            f"while not os.path.exists('{out}'):\n    time.sleep(0.05)\n"
            "c1 = sum(client.cpu_times()[:2])\n"
            f"print(f\"ORACLE {{json.load(open('{out}'))['cpu'] + c1 - c0:.4f}}\")")


@pytest.fixture
def two_users():
    names = [f"jsjmp{os.getpid() % 100000}{x}" for x in "ab"]
    made = []
    for n in names:
        r = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", n],
                           capture_output=True, text=True)
        if r.returncode != 0:
            for m in made:
                subprocess.run(["userdel", m], capture_output=True)
            pytest.skip(f"cannot create a user: {r.stderr.strip()}")
        made.append(n)
    yield names
    for n in made:
        uid = pwd.getpwnam(n).pw_uid
        for p in psutil.process_iter(["uids"]):
            if p.info["uids"] and p.info["uids"].real == uid:
                try:
                    p.kill()
                except psutil.Error:
                    pass
        subprocess.run(["userdel", n], capture_output=True)


@needs_lib
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (test users)")
def test_user_level_counts_the_users_processes_only(two_users, shared_dir):
    user_a, user_b = two_users
    env = stage(shared_dir / "stage")
    work = shared_dir / "work"
    work.mkdir(mode=0o777)
    work.chmod(0o777)
    burner = shared_dir / "burner.py"
    burner.write_text(BURNER)
    spinner = shared_dir / "spinner.py"
    spinner.write_text(SPINNER)
    stop = shared_dir / "stop"
    # the other user: busy the whole time
    b = subprocess.Popen(["setpriv", f"--reuid={user_b}", f"--regid={user_b}", "--clear-groups", PYTHON,
                          str(spinner), str(stop)])
    try:
        cells = [
            "%load_ext jobscope",
            "%perfmonitor_start 0.25",
            _cell_with_outsider("user", burner, None, shared_dir / "out_a.json", stop, True),
            # the cell lasts until the other user has burned 0.6 s (a busy machine gives it less than a core)
            f"b = psutil.Process({b.pid})\nb0 = sum(b.cpu_times()[:2])\nt_end = time.monotonic() + 30\n"
            "while sum(b.cpu_times()[:2]) - b0 < 0.6 and time.monotonic() < t_end:\n    time.sleep(0.1)\n"
            "print(f'BCPU {sum(b.cpu_times()[:2]) - b0:.3f}')",
            "%perfmonitor_perfreport --cell 1 --level user --text\n"
            "%perfmonitor_perfreport --cell 1 --level process --text\n"
            "%perfmonitor_perfreport --cell 2 --level user --text\n"
            "%perfmonitor_perfreport --cell 2 --level process --text",
            "%perfmonitor_resources\n%export_session usess",
            f"open('{stop}', 'w').close()\n%perfmonitor_stop",
        ]
        out = run_nb(cells, work, env=env, user=user_a)
    finally:
        stop.touch()
        b.wait(timeout=30)
    no_errors(out)
    oracle = figure(out[2]["text"], "ORACLE")
    reps = out[4]["text"].split("JUmPER Performance Report")[1:]
    user1, proc1, user2, proc2 = (figure(r, "CPU time") for r in reps)
    print(f"user level: oracle {oracle:.3f} s, user {user1:.3f} - process {proc1:.3f} = {user1 - proc1:.3f}; "
          f"other user's {figure(out[3]['text'], 'BCPU'):.3f} s, user - process {user2 - proc2:.3f}")
    # cell 1: the user's process outside the kernel's tree is the user level's, not the process level's
    assert oracle - 0.15 <= user1 - proc1 <= oracle + 0.3, (oracle, user1, proc1)
    # cell 2: the other user burned a core's worth; none of it is this user's
    bcpu = figure(out[3]["text"], "BCPU")
    assert bcpu > 0.3, bcpu
    assert user2 - proc2 < 0.25 + 0.2 * bcpu, (user2, proc2, bcpu)
    assert "user" in json.loads((work / "usess" / "manifest.json").read_text())["levels"]


# ---- the slurm level, inside a job of the test cluster -----------------------------------------------------------

@pytest.fixture(scope="module", params=["linuxproc", "cgroup"])
def slurm(request, tmp_path_factory):
    if slurm_missing():
        pytest.skip(slurm_missing())
    with slurm_cluster(tmp_path_factory.mktemp("slurm"), nodes=1, proctrack=request.param) as c:
        yield c


@needs_lib
def test_slurm_level_is_the_jobs_processes(slurm):
    """The job level: with proctrack/linuxproc the tasks of the job's slurmstepd, with task/cgroup the job's
    cgroup (exact CPU); either way a process of the job outside the kernel's tree is the level's."""
    d = slurm.shared_dir(f"jumper{os.getpid()}")
    env = stage(d / "stage")
    burner = d / "burner.py"
    burner.write_text(BURNER)
    go, out_b, stop = d / "go", d / "out_b.json", d / "stop"
    work = d / "work"
    work.mkdir()
    work.chmod(0o777)
    cells = [
        "%load_ext jobscope",
        "%perfmonitor_start 0.25",
        _cell_with_outsider("slurm", burner, go, out_b, stop, False),
        "%perfmonitor_perfreport --cell 1 --level slurm --text\n%perfmonitor_perfreport --cell 1 --level process --text",
        "%perfmonitor_export_perfdata --level slurm --file slurm.csv\n%perfmonitor_resources\n"
        "import jobscope.jumper as J\nprint('SCOPE', J._magics.adapter.monitor.summary['levels']['job']['scope'])",
        f"open('{stop}', 'w').close()\n%perfmonitor_stop",
    ]
    (work / "cells.json").write_text(json.dumps(cells))
    script = d / "job.sh"
    script.write_text(
        "#!/bin/bash\n"
        f"{PYTHON} {burner} {go} {out_b} {stop} 0.8 &\n"  # the job's, not the kernel's
        f"export PYTHONPATH={env['PYTHONPATH']} JOBSCOPE_LIBRARY={env['JOBSCOPE_LIBRARY']} MPLBACKEND=agg HOME={work}\n"
        f"{PYTHON} {d / 'stage' / 'run_notebook.py'} {work / 'cells.json'} {work / 'out.json'} {work}\n"
        f"touch {stop}\nwait\n")
    script.chmod(0o755)
    job = slurm.sbatch(["-N1", "-o", str(d / "job.out"), str(script)], user=slurm.user)
    slurm.wait_job(job, "COMPLETED", timeout=300)
    out = json.loads((work / "out.json").read_text())
    no_errors(out)
    oracle = figure(out[2]["text"], "ORACLE")
    reps = out[3]["text"].split("JUmPER Performance Report")[1:]
    job_cpu, proc_cpu = (figure(r, "CPU time") for r in reps)
    print(f"slurm level ({slurm.proctrack}): oracle {oracle:.3f} s, job {job_cpu:.3f} - process {proc_cpu:.3f} = {job_cpu - proc_cpu:.3f}")
    assert oracle - 0.15 <= job_cpu - proc_cpu <= oracle + 0.3, (oracle, job_cpu, proc_cpu)
    assert f"SLURM job {job}" in out[4]["text"]
    assert ("slurmstepd" if slurm.proctrack == "linuxproc" else "cgroup") in out[4]["text"], out[4]["text"]
    df = pd.read_csv(work / "slurm.csv")
    assert {"cpu_util_avg", "memory", "cell_index"} <= set(df.columns) and len(df) >= 2


# ---- the C API's levels, from Python ------------------------------------------------------------------------------

@needs_lib
def test_tracker_levels_live_and_replayed(tmp_path):
    """JS_LEVEL_USER through the Tracker: the summary's levels section, and the recording replayed gives the
    same figures; JS_LEVEL_JOB outside a job is refused with a clear error."""
    code = f"""
import json, os, sys
sys.path.insert(0, {str(PYDIR)!r})
os.environ.pop('SLURM_JOB_ID', None)
import jobscope
t = jobscope.Tracker(interval=0.1, output={str(tmp_path / 'l.db')!r}, levels=['user'], uss_every=1).start()
import time
t0 = time.thread_time()
while time.thread_time() - t0 < 0.3:
    pass
t.stop()
print(json.dumps(t.jobscope_summary['levels']))
try:
    jobscope.Tracker(levels=['job']).start()
except RuntimeError as e:
    print('REFUSED', e)
t = jobscope.Tracker(interval=0.1, levels=['job'], job_id='999999').start()
subprocess = __import__('subprocess')
subprocess.run([sys.executable, '-c', 'pass'])
t.stop()
print('NOJOB', json.dumps(t.jobscope_summary['levels']['job']['processes']))
"""
    env = {**os.environ, "JOBSCOPE_LIBRARY": str(LIB)}
    env.pop("JOBSCOPE_SOCKET", None)
    p = subprocess.run([PYTHON, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    live = json.loads(p.stdout.splitlines()[0])
    assert "REFUSED level 'job': not inside a SLURM job" in p.stdout
    # a job that has nothing on this node: no process (not the caller's tree)
    assert 'NOJOB {"total": 0, "max": 0}' in p.stdout
    u = live["user"]
    assert u["scope"].startswith(f"uid {os.getuid()}") and u["processes"]["max"] >= 1
    assert u["cpu"]["total_s"] >= 0.25
    import jobscope

    os.environ["JOBSCOPE_LIBRARY"] = str(LIB)
    replayed = jobscope.read(tmp_path / "l.db").summary["levels"]["user"]
    assert replayed["cpu"]["total_s"] == pytest.approx(u["cpu"]["total_s"], abs=1e-9)
    assert replayed["processes"] == u["processes"]


# ---- GPU columns, with the fake NVML of tests/fakes (no GPU here) ---------------------------------------------

FAKE_NVML = lib_path().parent.parent / "tests" / "fakes" / "nvml" / "libnvidia-ml.so.1"


@needs_lib
@pytest.mark.skipif(not FAKE_NVML.exists(), reason="fake NVML not built")
def test_gpu_columns(tmp_path):
    """JUmPER's gpu_{util,band,mem}_{avg,min,max,I} where GPUs exist: the process level from the kernel's
    processes on the GPU, the system level from the device."""
    pidfile = tmp_path / "main.pid"
    (tmp_path / "nvml.scn").write_text(f"""driver_version 550.90.07
nvml_version 12.550.90.07
cuda_version 12040
device 0
name "NVIDIA H100 80GB HBM3"
uuid GPU-11111111-2222-3333-4444-555555555555
pci 00000000:19:00.0
memory_total 80GiB
value gpu_util_pct 90
value mem_util_pct 40
value mem_used_bytes 30GiB
proc compute file:{pidfile} used 20GiB
putil file:{pidfile} sm 60 mem 30 enc 0 dec 0 every 0.1
""")
    code = f"""
import os, sys, time
sys.path.insert(0, {str(PYDIR)!r})
open({str(pidfile)!r}, 'w').write(str(os.getpid()))
from jobscope.jumper import PerformanceMonitor
m = PerformanceMonitor()
m.start(0.1)
time.sleep(0.6)
m.sample()
p, s = m.data.view('process'), m.data.view('system')
m.stop()
print('NGPU', m.num_gpus, m.gpu_memory)
print('P', p[['gpu_util_avg', 'gpu_band_avg', 'gpu_mem_avg', 'gpu_mem_0']].max().to_json())
print('S', s[['gpu_util_avg', 'gpu_mem_avg', 'gpu_util_0']].max().to_json())
"""
    env = {**os.environ, "JOBSCOPE_LIBRARY": str(LIB), "JOBSCOPE_NVML_LIBRARY": str(FAKE_NVML),
           "FAKE_NVML_SCENARIO": str(tmp_path / "nvml.scn")}
    env.pop("JOBSCOPE_SOCKET", None)
    r = subprocess.run([PYTHON, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    print(r.stdout)
    assert "NGPU 1 80.0" in r.stdout
    proc = json.loads(r.stdout.split("\nP ", 1)[1].splitlines()[0])  # the largest of the rows
    system = json.loads(r.stdout.split("\nS ", 1)[1].splitlines()[0])
    assert proc["gpu_mem_avg"] == pytest.approx(20.0) and proc["gpu_mem_0"] == pytest.approx(20.0)
    assert proc["gpu_util_avg"] == pytest.approx(60.0)
    assert system["gpu_util_avg"] == pytest.approx(90.0) and system["gpu_mem_avg"] == pytest.approx(30.0)
