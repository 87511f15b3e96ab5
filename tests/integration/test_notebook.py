# SPDX-License-Identifier: MIT
"""The IPython extension driven by a real Jupyter kernel (Debian's python3-ipykernel, through nbclient)
executing a small notebook: every cell is a phase, so each cell gets its own samples and figures (a CPU
cell, a memory cell, a cell whose child process does the work); the report and the plot render (a table and
a PNG); the session exports as a recording and a per-sample CSV with the cell of each sample; the saved
recording loads back for offline analysis; JUmPER's levels: process, system, user (an orphan of the kernel is
the user's, not the process's), slurm refused outside a SLURM job.
"""
import os
import sys
from pathlib import Path

import pytest

from conftest import REPO

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")
pd = pytest.importorskip("pandas")

PYDIR = REPO / "python"


def build_dir():
    env = os.environ.get("JOBSCOPE_BUILD")
    return Path(env).resolve() if env else REPO / "build"


LIB = build_dir() / "lib" / "libjobscope.so.0"

CELLS = [
    "%load_ext jobscope",                                                         # 1
    "%jobscope start 0.1 --cell-report",                                          # 2
    "import time\nt = time.thread_time()\nwhile time.thread_time() - t < 0.5:\n    pass",  # 3: CPU
    "x = bytearray(150 * 1000 * 1000)\nfor i in range(0, len(x), 4096):\n    x[i] = 1\n"
    "time.sleep(0.3)",                                                            # 4: memory
    "import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'import time\\nt = time.thread_time()\\n"
    "while time.thread_time() - t < 0.4:\\n    pass'], check=True)\ndel x",       # 5: a child's CPU
    "%jobscope report",                                                           # 6
    "%jobscope report --cell 3",                                                  # 7
    "%jobscope plot cpu_cores memory_bytes",                                      # 8
    "%jobscope report --level system",                                            # 9
    "%jobscope export session.db\n%jobscope export session.csv\n%jobscope export session.json",  # 10
    "%jobscope stop",                                                             # 11
    "%jobscope load session.db\n%jobscope report",                                # 12
    "%jobscope plot --cell 4",                                                    # 13
    "try:\n    get_ipython().run_line_magic('jobscope', 'start --level slurm')\nexcept Exception as e:\n"
    "    print('refused:', e)",                                                   # 14
    # 15: an orphan of the kernel, made before monitoring starts (a sample taken while it was still its shell's
    # child would make it the kernel's descendant for good), waits for the file orphan.go, then burns 0.4 s of
    # CPU, says so in a file, and lives on
    "import subprocess, sys, os, time\nsubprocess.run(['sh', '-c', sys.executable + ' -c \"import time, sys, os"
    "\\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.02)"
    "\\nt=time.process_time()\\nwhile time.process_time()-t<0.4: pass\\nopen(sys.argv[2], chr(119)).close()"
    "\\ntime.sleep(3)\" orphan.go orphan.burned &'])\n"
    "%jobscope start 0.1 --level user --output lvl.db",
    # 16: the orphan burns; the cell ends once it has burned (a loaded machine may give it its CPU late:
    # waiting on the CPU it used, not on the clock)
    "import os, time\nopen('orphan.go', 'w').close()\nwhile not os.path.exists('orphan.burned'): time.sleep(0.02)\n"
    "time.sleep(0.2)",
    "%jobscope report --level user\n%jobscope report --level process\n%jobscope stop",  # 17
]


def outputs(cell, kind):
    return [o for o in cell.get("outputs", []) if kind in o.get("data", {}) or o.get("output_type") == kind]


def text_of(cell):
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            out.append(o["text"])
        elif "text/plain" in o.get("data", {}):
            out.append(o["data"]["text/plain"])
    return "".join(out)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    if not LIB.exists():
        pytest.skip(f"{LIB} not built")
    work = tmp_path_factory.mktemp("nb")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    env_keep = {k: os.environ.get(k) for k in ("PYTHONPATH", "JOBSCOPE_LIBRARY", "JOBSCOPE_SOCKET", "MPLBACKEND")}
    os.environ["PYTHONPATH"] = str(PYDIR) + (os.pathsep + env_keep["PYTHONPATH"] if env_keep["PYTHONPATH"] else "")
    os.environ["JOBSCOPE_LIBRARY"] = str(LIB)
    os.environ.pop("JOBSCOPE_SOCKET", None)
    try:
        client = nbclient.NotebookClient(nb, timeout=180, kernel_name="python3",
                                         resources={"metadata": {"path": str(work)}})
        client.execute()
    finally:
        for k, v in env_keep.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    for i, c in enumerate(nb.cells):
        errs = [o for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert not errs, f"cell {i + 1}: {errs}"
    return nb, work


def test_cells_get_their_samples(executed):
    nb, work = executed
    sys.path.insert(0, str(PYDIR))
    os.environ["JOBSCOPE_LIBRARY"] = str(LIB)
    import jobscope

    rec = jobscope.read(work / "session.db")
    cells = rec.cells
    print(cells[["cpu_s", "peak_bytes"]].to_string())
    assert {3, 4, 5} <= set(cells.index)
    assert cells.loc[3, "cpu_s"] == pytest.approx(0.5, abs=0.15)           # the busy loop
    assert cells.loc[4, "peak_bytes"] > 150e6                               # the 150 MB buffer
    assert cells.loc[3, "peak_bytes"] < cells.loc[4, "peak_bytes"] - 100e6
    assert cells.loc[5, "cpu_s"] >= 0.35                                    # its child's CPU is the cell's
    # the cells' own time: every cell's self figures plus the time between cells add up to the session's
    last = rec.phases[rec.phases["sample"] == rec.phases["sample"].max()].set_index("phase")
    assert last["self_cpu_s"].sum() == pytest.approx(rec.summary["cpu"]["total_s"], abs=1e-6)
    # the per-cell line printed after each cell
    assert "[jobscope] cell 3:" in text_of(nb.cells[2])
    assert "[jobscope] cell 4:" in text_of(nb.cells[3])
    # each sample is attributed to the cell that was running
    csv = pd.read_csv(work / "session.csv")
    by_cell = csv.groupby("cell")["cpu_cores"]
    assert by_cell.count().loc[3] >= 2 and 4 in by_cell.count().index and 5 in by_cell.count().index
    assert by_cell.max().loc[3] > 0.2  # busy (the machine may be shared: not necessarily a whole core)
    assert (work / "session.json").exists()


def test_report_and_plot_render(executed):
    nb, _ = executed
    report = nb.cells[5]
    assert outputs(report, "text/html"), report["outputs"]
    html = outputs(report, "text/html")[0]["data"]["text/html"]
    for col in ("wall_s", "cpu_s", "mean_cores", "peak_bytes", "read_bytes", "write_bytes"):
        assert col in html
    one = outputs(nb.cells[6], "text/html")[0]["data"]["text/html"]
    assert one.count("<tr>") == 2  # the header and cell 3
    png = outputs(nb.cells[7], "image/png")
    assert png and len(png[0]["data"]["image/png"]) > 1000
    system = outputs(nb.cells[8], "text/html")[0]["data"]["text/html"]
    assert "cpu_util_mean" in system and "mem_used_max_bytes" in system


def test_offline_load_and_levels(executed):
    nb, _ = executed
    assert "stopped:" in text_of(nb.cells[10])
    loaded = text_of(nb.cells[11])
    assert "loaded session.db" in loaded and "cells" in loaded
    assert outputs(nb.cells[11], "text/html")
    assert outputs(nb.cells[12], "image/png")  # a plot of one cell, from the saved recording
    assert "refused:" in text_of(nb.cells[13]) and "not inside a SLURM job" in text_of(nb.cells[13])


def test_user_level(executed):
    """%jobscope start --level user: the orphan (not the kernel's descendant) burning during a cell is the user's
    CPU in that cell, not the process level's."""
    nb, work = executed
    assert len(outputs(nb.cells[16], "text/html")) == 2  # a table per level
    sys.path.insert(0, str(PYDIR))
    os.environ["JOBSCOPE_LIBRARY"] = str(LIB)
    import jobscope

    rec = jobscope.read(work / "lvl.db")
    ph = rec.view("level_phases")
    n = nb.cells[15].get("execution_count")
    last = ph[(ph["sample"] == ph["sample"].max()) & (ph["phase"] == f"cell {n}")].set_index("level")
    user = last.loc["user", "cpu_s"]
    proc = rec.cells.loc[n, "cpu_s"]
    assert user - proc >= 0.3, (user, proc)  # the orphan burned 0.4 s
