# SPDX-License-Identifier: MIT
"""jobscope for Python: what a job uses (CPU, memory, I/O, energy), per phase, without a compiler.

    import jobscope

    with jobscope.Tracker(interval=0.5) as t:      # gpu_tracker's Tracker, on jobscope's monitor
        with t.phase("train"):
            train()
        t.event("checkpoint", step=10)
    print(t)

    with jobscope.phase("solve"): ...              # marks inside `jobscope run` (no-ops outside)
    jobscope.event("checkpoint", step=10)

    log = jobscope.RunLog()                        # the run monitor's JSONL, and marks
    log.log_phase("fit", 12.5, chains=4)

    rec = jobscope.read("run.db")                  # pandas DataFrames of a recording
    jobscope.compare("a.db", "b.db")

In IPython or Jupyter: %load_ext jobscope, then %jobscope start (see jobscope.ipython).

Drop-ins (docs/PYTHON.md): jobscope.gpu_tracker (gpu_tracker's Tracker, SubTracker, analysis and command line),
jobscope.run_monitor (pytyche's RunLog, HWMonitor, build_resource_summary), and jobscope.compat.install() /
`python3 -m jobscope.compat script.py` so that `import gpu_tracker` and `pytyche.diagnostics.run_monitor`
resolve to them.

Pure Python over libjobscope.so.0 (ctypes): found through $JOBSCOPE_LIBRARY or the system's loader path.
"""
from ._lib import LibraryNotFound, available
from .marks import active, begin, dropped, end, event, phase
from .recording import Recording, compare, read
from .runlog import RunLog
from .tracker import RAM_UNITS, TIME_UNITS, Tracker

__version__ = "0.1.0"

__all__ = ["Tracker", "RunLog", "Recording", "read", "compare", "phase", "begin", "end", "event", "active",
           "dropped", "available", "library_version", "LibraryNotFound", "RAM_UNITS", "TIME_UNITS",
           "load_ipython_extension", "unload_ipython_extension"]


def library_version():
    """The version of the libjobscope loaded."""
    from . import _lib

    return _lib.lib().js_version().decode()


def load_ipython_extension(ip):
    """%load_ext jobscope"""
    from .ipython import load_ipython_extension as load

    load(ip)


def unload_ipython_extension(ip):
    from .ipython import unload_ipython_extension as unload

    unload(ip)
