# SPDX-License-Identifier: MIT
"""JUmPER's sessions (%export_session, %import_session; jumper_extension.adapters.session).

Layout, a directory or a .zip of one: manifest.json (JUmPER's keys: version "1.0", app, monitor {interval,
start_time, stop_time, wallclock_*, num_cpus, num_system_cpus, num_gpus, gpu_memory, gpu_name, memory_limits,
cpu_handles, pid, uid, slurm_job, os, python}, levels, schemas {perf: {level: columns}, cell_history:
columns}, visualizer, reporter {level, format, thresholds}, time_origin "perf_counter", timezone),
perf_<level>.csv for each level with data, cell_history.csv. JUmPER's importer reads those files by name and
ignores anything else, so jobscope adds beside them: jobscope.db (the whole recording: every sample, process,
phase and the host's figures, `jobscope report` and jobscope.read() read it) and a `jobscope` key in the
manifest naming it. Importing reads JUmPER's files (from either tool) and the recording when there is one.
"""
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
import zipfile
from datetime import datetime

from .. import __version__
from .monitor import OfflinePerformanceMonitor

LEVEL_FILES = {"process": "perf_process.csv", "user": "perf_user.csv", "system": "perf_system.csv",
               "slurm": "perf_slurm.csv"}
RECORDING = "jobscope.db"


def _copy_recording(src, dst):
    """A consistent copy of a recording, even one still being written (SQLite's backup)."""
    s = sqlite3.connect(f"file:{os.path.abspath(src)}?mode=ro", uri=True)
    d = sqlite3.connect(dst)
    try:
        with d:
            s.backup(d)
        d.execute("PRAGMA journal_mode=DELETE")
    finally:
        s.close()
        d.close()


def export_session(path, monitor, cells, analyzer, report_level="process"):
    """Write the session to directory `path`, or to `path` as a zip when it ends in .zip (None: a
    jumper-session-<timestamp> directory). Returns what was written."""
    zip_target = None
    if path and path.lower().endswith(".zip"):
        out = tempfile.mkdtemp(prefix="jumper-session-")
        zip_target = path
    else:
        out = os.path.abspath(path or f"jumper-session-{datetime.now():%Y%m%d-%H%M%S}")
    os.makedirs(out, exist_ok=True)
    schemas = {}
    data = monitor.data
    for level, df in data.data.items():
        view = data.view(level, cell_history=cells)
        schemas[level] = list(view.columns)
        if not view.empty:
            view.to_csv(os.path.join(out, LEVEL_FILES.get(level, f"perf_{level}.csv")), index=False)
    ch = cells.view()
    if not ch.empty:
        ch.to_csv(os.path.join(out, "cell_history.csv"), index=False)
    rec = getattr(monitor, "recording", None)
    has_rec = bool(rec and os.path.exists(rec))
    if has_rec:
        _copy_recording(rec, os.path.join(out, RECORDING))
    manifest = {
        "version": "1.0",
        "app": {"name": "JUmPER", "version": "0.3.6"},
        "monitor": {
            "interval": monitor.interval, "start_time": monitor.start_time, "stop_time": monitor.stop_time,
            "wallclock_start_time": getattr(monitor, "wallclock_start_time", None),
            "wallclock_stop_time": getattr(monitor, "wallclock_stop_time", None),
            "num_cpus": monitor.num_cpus, "num_system_cpus": monitor.num_system_cpus, "num_gpus": monitor.num_gpus,
            "gpu_memory": monitor.gpu_memory, "gpu_name": monitor.gpu_name, "memory_limits": monitor.memory_limits,
            "cpu_handles": list(monitor.cpu_handles), "pid": monitor.pid, "uid": monitor.uid,
            "slurm_job": monitor.slurm_job, "os": os.name, "python": sys.version.split(" ")[0],
        },
        "levels": list(data.data.keys()),
        "schemas": {"perf": schemas, "cell_history": list(ch.columns)},
        "visualizer": {"default_metric_subsets": ["cpu", "mem", "io"] + (["gpu", "gpu_all"] if monitor.num_gpus else []),
                       "figsize": [5, 3], "io_window": 1, "last_state": {}},
        "reporter": {"level": report_level, "format": "text", "thresholds": dict(analyzer.thresholds)},
        "time_origin": "perf_counter",
        "timezone": time.tzname[0] if time.tzname else "",
        # beyond JUmPER's keys (its importer ignores them): what wrote the session and where its recording is
        "jobscope": {"version": __version__, "recording": RECORDING if has_rec else None,
                     "columns": "docs/JUPYTER.md: io_* are rates over each row's interval, memory is PSS"},
    }
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
    if zip_target:
        with zipfile.ZipFile(zip_target, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for name in sorted(os.listdir(out)):
                z.write(os.path.join(out, name), name)
        shutil.rmtree(out, ignore_errors=True)
        print(f"[JUmPER]: Exported to {zip_target}")
        return zip_target
    print(f"[JUmPER]: Exported to {out}")
    return out


class SessionError(Exception):
    """A session that cannot be read (said in one line)."""


def import_session(path, keep_dir):
    """(OfflinePerformanceMonitor, cell history DataFrame or None, manifest) of the session at `path` (a
    directory or .zip). A zip is unpacked into `keep_dir` (kept: the recording inside is read later)."""
    import pandas as pd

    if not path or not os.path.exists(path):
        raise SessionError(f"no session at {path!r}")
    work = path
    if path.lower().endswith(".zip"):
        work = tempfile.mkdtemp(prefix="jumper-session-import-", dir=keep_dir)
        try:
            with zipfile.ZipFile(path) as z:
                for name in z.namelist():  # flat members only: nothing outside the folder
                    if "/" in name.strip("/") or name.startswith(("/", "..")) or ".." in name:
                        raise SessionError(f"{path}: unexpected member {name!r}")
                z.extractall(work)
        except (zipfile.BadZipFile, OSError) as e:
            raise SessionError(f"{path}: not a readable zip ({e})") from None
    elif not os.path.isdir(path):
        raise SessionError(f"{path}: neither a directory nor a .zip")
    try:
        with open(os.path.join(work, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise SessionError(f"{path}: no readable manifest.json ({e})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("monitor", {}), dict):
        raise SessionError(f"{path}: manifest.json is not a JUmPER session manifest")
    cells = None
    ch = os.path.join(work, "cell_history.csv")
    if os.path.exists(ch):
        cells = pd.read_csv(ch)
        if "cell_magics" in cells.columns:
            import ast

            def magics(v):
                try:
                    return ast.literal_eval(v) if isinstance(v, str) else []
                except (ValueError, SyntaxError):
                    return []

            cells["cell_magics"] = cells["cell_magics"].map(magics)
    perf = {}
    for level, name in LEVEL_FILES.items():
        p = os.path.join(work, name)
        if os.path.exists(p):
            try:
                perf[level] = pd.read_csv(p)
            except (ValueError, OSError) as e:
                raise SessionError(f"{p}: {e}") from None
    js = manifest.get("jobscope") or {}
    rec = os.path.join(work, js["recording"]) if js.get("recording") else None
    mon = OfflinePerformanceMonitor(manifest=manifest, perf_dfs=perf, source=path,
                                    recording=rec if rec and os.path.exists(rec) else None)
    return mon, cells, manifest
