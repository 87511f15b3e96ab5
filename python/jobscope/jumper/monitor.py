# SPDX-License-Identifier: MIT
"""JUmPER's monitor API (jumper_extension.monitor.common) over jobscope's embedded monitor.

    mon = PerformanceMonitor()            # the levels JUmPER has here: user, process, system, and slurm in a job
    mon.start(interval=1.0)
    ...
    mon.data.view(level="process")        # a pandas DataFrame in JUmPER's columns and units
    mon.stop()

    off = OfflinePerformanceMonitor(manifest=manifest, perf_dfs={"process": df, ...})

Nothing is sampled in Python. PerformanceMonitor starts one jobscope monitor (jobscope.Tracker, a thread of
libjobscope) over this process's tree with the `user` level (every process of this user) and, inside a SLURM job,
the `job` level (JUmPER's `slurm`); the node's figures (`system`) are in every recording. Its `data` is built
from the recording's views when read: `tree` (process), `levels` (user, slurm), `system` (system), `gpu`.

The columns are JUmPER's (`PerformanceData`): time (time.perf_counter() seconds: CLOCK_MONOTONIC), memory
(GiB), io_read_count, io_write_count (operations/s), io_read, io_write (bytes/s), cpu_util_avg, cpu_util_min,
cpu_util_max, cpu_util_0..N-1 (percent of one CPU), gpu_{util,band,mem}_{avg,min,max} and gpu_{util,band,mem}_I
where GPUs exist. What differs from JUmPER (docs/JUPYTER.md has the table):
  - a row is one sampling interval, ending at `time`: cpu_util is the level's CPU time over that interval
    (kernel accounting, children that ended inside it included) divided by its length and the level's CPUs;
  - io_* are rates over the interval (JUmPER divides cumulative counters since the start by the time since the
    previous sample, so its figures grow with the run's length);
  - memory is the level's proportional set size (PSS: every shared page counted once, split between its
    users), where JUmPER sums USS (shared pages not at all); the host's is MemTotal - MemAvailable, as JUmPER;
  - per-core columns: the host's (`system`) are each CPU's own busy share; a process level's are the level's
    mean over its CPUs (the kernel does not account a process's time per CPU), as JUmPER writes them;
  - jobscope's own figures ride along in js_* columns (JUmPER ignores them): js_dt_s (the interval), js_cpu_s
    (the level's cumulative CPU time), js_rss_bytes, js_read_bytes, js_write_bytes (cumulative), js_processes.
"""
import os
import resource
import sqlite3
import time
from pathlib import Path

from .. import _lib
from ..recording import Recording, _meta
from ..recording import view as read_view
from ..tracker import Tracker

GiB = 1024.0**3
BASE_COLUMNS = ["time", "memory", "io_read_count", "io_write_count", "io_read", "io_write", "cpu_util_avg",
                "cpu_util_min", "cpu_util_max"]
JS_COLUMNS = ["js_dt_s", "js_cpu_s", "js_rss_bytes", "js_read_bytes", "js_write_bytes", "js_processes"]
LEVEL_OF = {"user": "user", "slurm": "job"}  # JUmPER's level -> the jobscope level in the `levels` view


def is_slurm_available():
    """JUmPER's test: a SLURM job id in the environment."""
    return os.environ.get("SLURM_JOB_ID") is not None


def get_available_levels():
    """JUmPER's levels, in its order: user, process, system, and slurm inside a SLURM job."""
    return ["user", "process", "system"] + (["slurm"] if is_slurm_available() else [])


def _affinity():
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def _gib(v):
    return round(float(v) / GiB, 2)


class PerformanceData:
    """JUmPER's PerformanceData: `data` maps each level to a DataFrame; view, export, load."""

    def __init__(self, num_cpus, num_system_cpus, num_gpus, levels=None):
        import pandas as pd

        self.num_cpus, self.num_system_cpus, self.num_gpus = num_cpus, num_system_cpus, num_gpus
        self.levels = list(levels or get_available_levels())
        self._base_columns = list(BASE_COLUMNS)
        self.data = {lv: pd.DataFrame(columns=self.columns(lv)) for lv in self.levels}

    def columns(self, level):
        n = self.num_system_cpus if level == "system" else self.num_cpus
        cols = BASE_COLUMNS + [f"cpu_util_{i}" for i in range(n)]
        if self.num_gpus:
            cols += [f"gpu_{m}_{s}" for m in ("util", "band", "mem") for s in ("avg", "min", "max")]
            cols += [f"gpu_{m}_{i}" for i in range(self.num_gpus) for m in ("util", "band", "mem")]
        return cols

    def _validate_level(self, level):
        if level not in self.levels:
            raise ValueError(f"[JUmPER]: Invalid level: {level}. Available levels: {self.levels}")

    @staticmethod
    def _attach_cell_index(df, cell_history):
        import pandas as pd

        out = df.copy()
        out["cell_index"] = pd.NA
        if cell_history is None or not len(cell_history) or out.empty:
            return out
        times = out["time"].to_numpy()
        for row in cell_history.data.itertuples(index=False):
            mask = (times >= row.start_time) & (times <= row.end_time)
            out.loc[mask, "cell_index"] = row.cell_index
        return out

    def view(self, level="process", slice_=None, cell_history=None):
        """The level's rows (rows slice_[0]..slice_[1] when given), with cell_index when cell_history is."""
        level = level or "process"
        self._validate_level(level)
        df = self.data[level]
        if slice_ is not None:
            df = df.iloc[slice_[0]:slice_[1] + 1]
        return self._attach_cell_index(df, cell_history) if cell_history is not None else df

    def export(self, filename="performance_data.csv", level="process", cell_history=None):
        """Write the level's rows (with cell_index) as CSV or JSON by the file's extension (none: .csv)."""
        level = level or "process"
        self._validate_level(level)
        df = self.view(level, cell_history=cell_history)
        if df.empty:
            print("[JUmPER]: No performance data available or recorded cells are too short")
            return None
        ext = os.path.splitext(filename)[1].lower().lstrip(".")
        if not ext:
            ext, filename = "csv", filename + ".csv"
        if ext == "csv":
            df.to_csv(filename, index=False)
        elif ext == "json":
            df.to_json(filename, orient="records", indent=2)
        else:
            print(f"[JUmPER]: Unsupported format: {ext}. Supported formats: json, csv")
            return None
        print(f"[JUmPER]: Exported to {filename}")
        return filename

    def load(self, filename):
        return load_frame(filename, BASE_COLUMNS, "performance data")


def load_frame(filename, required, what):
    """A CSV or JSON file as a DataFrame with the `required` columns, or None (said why, in one line)."""
    import pandas as pd

    ext = os.path.splitext(filename or "")[1].lower().lstrip(".")
    readers = {"csv": pd.read_csv, "json": pd.read_json}
    if ext not in readers:
        print(f"[JUmPER]: Unsupported format: {ext}. Supported formats: json, csv")
        return None
    try:
        df = readers[ext](filename)
    except Exception as e:  # a missing or corrupt file: one line, no traceback
        print(f"[JUmPER]: Failed to load {what}: {e}")
        return None
    missing = [c for c in required if c not in df.columns]
    if missing:
        print(f"[JUmPER]: Cannot load {what}. Missing required columns: {', '.join(missing)}")
        return None
    return df


# ---- from a jobscope recording to JUmPER's frames ---------------------------------------------------------

def _inventory(path, table="inventory"):
    uri = Path(os.path.abspath(path)).as_uri() + "?mode=ro"
    try:
        con = sqlite3.connect(uri, uri=True)
        try:
            return {(s, k): v for s, k, v in con.execute(f"SELECT source, key, value FROM {table}")}
        finally:
            con.close()
    except sqlite3.Error:
        return {}


def _rate(df, col):
    """per second over each row's interval, from a cumulative column"""
    if col not in df.columns:
        return float("nan")
    return df[col].astype(float).diff() / df["dt_s"]


def _level_frame(src, pct_of, ncpu, mem_col, gpu=None, ngpu=0):
    """JUmPER's columns from a `tree`-shaped view (the tree, or one level of `levels`)."""
    import pandas as pd

    src = src.reset_index(drop=True)
    out = pd.DataFrame({"time": src["mono_s"]})
    mem = src[mem_col] if mem_col in src.columns else pd.Series(float("nan"), index=src.index)
    if "rss_bytes" in src.columns:
        mem = mem.fillna(src["rss_bytes"])  # PSS where read, else RSS
    out["memory"] = mem.astype(float) / GiB
    out["io_read_count"] = _rate(src, "read_syscalls")
    out["io_write_count"] = _rate(src, "write_syscalls")
    out["io_read"] = src.get("read_bytes_per_s")
    out["io_write"] = src.get("write_bytes_per_s")
    util = src["cpu_cores"].astype(float) * 100.0 / pct_of
    out["cpu_util_avg"] = util
    out["cpu_util_min"] = util
    out["cpu_util_max"] = util
    for i in range(ncpu):
        out[f"cpu_util_{i}"] = util
    _gpu_columns(out, src, gpu, ngpu, job=True)
    out["js_dt_s"] = src["dt_s"]
    out["js_cpu_s"] = src["cpu_s"]
    out["js_rss_bytes"] = src.get("rss_bytes")
    out["js_read_bytes"] = src.get("read_bytes")
    out["js_write_bytes"] = src.get("write_bytes")
    out["js_processes"] = src.get("processes")
    return out[src["dt_s"].notna()].reset_index(drop=True)


def _system_frame(sysv, ncpu):
    import pandas as pd

    sysv = sysv.reset_index(drop=True)
    out = pd.DataFrame({"time": sysv["mono_s"]})
    out["memory"] = sysv["mem_used_bytes"].astype(float) / GiB
    disks_r = [c for c in sysv.columns if c.startswith("disk_") and c.endswith("_read_bytes_per_s")]
    disks_w = [c for c in sysv.columns if c.startswith("disk_") and c.endswith("_write_bytes_per_s")]
    out["io_read_count"] = float("nan")  # the host's view has no operation counts
    out["io_write_count"] = float("nan")
    out["io_read"] = sysv[disks_r].sum(axis=1, min_count=1) if disks_r else float("nan")
    out["io_write"] = sysv[disks_w].sum(axis=1, min_count=1) if disks_w else float("nan")
    per = [sysv.get(f"cpu{i}_util_fraction", pd.Series(float("nan"), index=sysv.index)).astype(float) * 100.0
           for i in range(ncpu)]
    out["cpu_util_avg"] = sysv["cpu_util_fraction"].astype(float) * 100.0
    if per:
        block = pd.concat(per, axis=1)
        out["cpu_util_min"] = block.min(axis=1)
        out["cpu_util_max"] = block.max(axis=1)
    for i, s in enumerate(per):
        out[f"cpu_util_{i}"] = s
    out["js_dt_s"] = sysv["unix_s"].diff()
    busy = out["cpu_util_avg"].fillna(0) / 100.0 * ncpu * out["js_dt_s"].fillna(0)
    out["js_cpu_s"] = busy.cumsum()
    out["js_rss_bytes"] = sysv["mem_used_bytes"]
    out["js_read_bytes"] = float("nan")
    out["js_write_bytes"] = float("nan")
    out["js_processes"] = float("nan")
    return out[out["cpu_util_avg"].notna()].reset_index(drop=True)


def _gpu_columns(out, src, gpu, ngpu, job):
    """gpu_{util,band,mem}_* from the `gpu` view (per device and sample) at the rows' samples."""
    if not ngpu or gpu is None or gpu.empty:
        return
    cols = {"util": "job_util_fraction" if job else "util_fraction",
            "band": "job_mem_util_fraction" if job else "mem_util_fraction",
            "mem": "job_mem_bytes" if job else "mem_used_bytes"}
    by = {}
    for m, c in cols.items():
        if c not in gpu.columns:
            c = c.replace("job_", "").replace("mem_bytes", "mem_used_bytes")
        piv = gpu.pivot_table(index="sample", columns="gpu", values=c, aggfunc="last")
        scale = 1.0 / GiB if m == "mem" else 100.0
        by[m] = piv.reindex(src["sample"]).reset_index(drop=True) * scale
    for m, piv in by.items():
        out[f"gpu_{m}_avg"] = piv.mean(axis=1)
        out[f"gpu_{m}_min"] = piv.min(axis=1)
        out[f"gpu_{m}_max"] = piv.max(axis=1)
    for i in range(ngpu):
        for m, piv in by.items():
            out[f"gpu_{m}_{i}"] = piv.iloc[:, i] if i < piv.shape[1] else float("nan")


def frames_from_recording(path, levels, num_cpus, num_system_cpus, num_gpus=0):
    """JUmPER's data frames (level -> DataFrame, None where the recording has no data) from the jobscope
    recording at `path`: each level's view is read (replayed through the model) once."""
    meta = _meta(path)
    off = (float(meta.get("start_unix_ns", 0)) - float(meta.get("start_mono_ns", 0))) / 1e9

    def mono(df):
        df = df.copy()
        if not df.empty:
            df["mono_s"] = df["unix_s"] - off
        return df

    gpu = read_view(path, "gpu") if num_gpus else None
    frames = {}
    lvv = None
    for lv in levels:
        if lv == "process":
            src = mono(read_view(path, "tree"))
            frames[lv] = _level_frame(src, num_cpus, num_cpus, "pss_bytes", gpu, num_gpus) if not src.empty else None
        elif lv == "system":
            src = mono(read_view(path, "system"))
            frames[lv] = _system_frame(src, num_system_cpus) if not src.empty else None
            if frames[lv] is not None:
                _gpu_columns(frames[lv], src[src["cpu_util_fraction"].notna()].reset_index(drop=True), gpu,
                             num_gpus, job=False)
        else:
            if lvv is None:
                lvv = read_view(path, "levels")
            src = mono(lvv[lvv["level"] == LEVEL_OF[lv]]) if not lvv.empty else lvv
            frames[lv] = _level_frame(src, num_cpus, num_cpus, "pss_bytes", gpu, num_gpus) if not src.empty else None
    return frames


class _LiveData(PerformanceData):
    """PerformanceData whose frames are read from the monitor's recording when first asked for after a
    sample (view, export), one level at a time; `data` (every level) reads them all."""

    def __init__(self, monitor, *a):
        super().__init__(*a)
        self._mon = monitor
        self._have = {}

    def _ensure(self, levels):
        stamp = self._mon._stamp
        want = [lv for lv in levels if self._have.get(lv) != stamp]
        if want and getattr(self._mon, "recording", None):
            for lv, df in frames_from_recording(self._mon.recording, want, self.num_cpus, self.num_system_cpus,
                                                self.num_gpus).items():
                if df is not None:
                    self.__dict__["data"][lv] = df
                self._have[lv] = stamp

    def __getattribute__(self, name):
        if name == "data":
            d = object.__getattribute__(self, "__dict__")
            if "_mon" in d:
                object.__getattribute__(self, "_ensure")(d["levels"])
        return object.__getattribute__(self, name)

    def view(self, level="process", slice_=None, cell_history=None):
        level = level or "process"
        self._validate_level(level)
        self._ensure([level])
        df = self.__dict__["data"][level]
        if slice_ is not None:
            df = df.iloc[slice_[0]:slice_[1] + 1]
        return self._attach_cell_index(df, cell_history) if cell_history is not None else df


# ---- the monitors ----------------------------------------------------------------------------------------

class PerformanceMonitor:
    """JUmPER's PerformanceMonitor: start(interval), stop(), running, data, and its hardware attributes."""

    def __init__(self, output=None, uss_every=1):
        self.interval = 1.0
        self.running = False
        self.start_time = self.stop_time = None
        self.wallclock_start_time = self.wallclock_stop_time = None
        self.pid, self.uid = os.getpid(), os.getuid()
        self.slurm_job = os.environ.get("SLURM_JOB_ID", 0)
        self.levels = get_available_levels()
        self.cpu_handles = _affinity()
        self.num_cpus = len(self.cpu_handles)
        self.num_system_cpus = os.cpu_count() or self.num_cpus
        self.num_gpus, self.gpu_memory, self.gpu_name = 0, 0.0, ""
        self.n_measurements = self.n_missed_measurements = 0
        self.is_imported = False
        self.session_source = None
        self.output = output
        self.uss_every = uss_every
        self.tracker = None
        self._tmp = None
        self._stamp = 0
        self._data = PerformanceData(self.num_cpus, self.num_system_cpus, 0, self.levels)
        self.memory_limits = self._memory_limits({})
        self.metrics = ["cpu", "memory", "io_read", "io_write", "io_read_count", "io_write_count"]

    # ---- life

    def start(self, interval=1.0):
        if self.running:
            print("[JUmPER]: Performance monitoring already running")
            return
        import tempfile

        self.interval = float(interval)
        out = self.output
        if out is None:
            self._tmp = tempfile.mkdtemp(prefix="jobscope-jumper-")
            out = os.path.join(self._tmp, "session.db")
        self.recording = out
        levels = ["user"] + (["job"] if "slurm" in self.levels else [])
        self.tracker = Tracker(interval=self.interval, output=out, overwrite=True, levels=levels,
                               uss_every=self.uss_every).start()
        self.start_time, self.wallclock_start_time = time.perf_counter(), time.time()
        self.stop_time = self.wallclock_stop_time = None
        self.running = True
        self._read_facts()
        print(f"[JUmPER]: Performance monitoring started (PID: {self.pid}, Interval: {self.interval}s) "
              f"[jobscope {_lib.lib().js_version().decode()}: recording {out}]")

    def stop(self):
        if not self.running:
            return
        self.tracker.stop()
        self.running = False
        self.stop_time, self.wallclock_stop_time = time.perf_counter(), time.time()
        s = self.tracker.jobscope_summary
        self.n_measurements = int((s.get("samples") or {}).get("taken") or 0)
        self.n_missed_measurements = int((s.get("samples") or {}).get("missed") or 0)
        self._stamp += 1
        print(f"[JUmPER]: Performance monitoring stopped (ran for {self.stop_time - self.start_time:.2f} seconds)")

    def sample(self):
        """Take a sample now (at a cell's start and end: its figures are then complete)."""
        if self.running:
            self.tracker.sample()
            self._stamp += 1

    @property
    def summary(self):
        """jobscope's summary (dict) of the monitor so far."""
        return self.tracker.jobscope_summary if self.tracker else {}

    # ---- facts

    def _read_facts(self):
        inv = _inventory(self.recording)
        self.num_system_cpus = int(inv.get(("host", "cpu.count"), self.num_system_cpus))
        s = self.tracker.jobscope_summary
        devices = (s.get("gpu") or {}).get("devices") or []
        self.num_gpus = len(devices)
        if devices:
            self.gpu_memory = _gib(devices[0].get("memory_total_bytes") or 0)
            self.gpu_name = ", ".join(str(d.get("name", "")) for d in devices)
        self.memory_limits = self._memory_limits(inv)
        self._data = _LiveData(self, self.num_cpus, self.num_system_cpus, self.num_gpus, self.levels)

    def _memory_limits(self, inv):
        """Per level, GiB (2 decimals), as JUmPER reads them, tightened where jobscope knows a lower bound:
        system MemTotal; process RLIMIT_AS, and the cgroup limit of this process's allocation; user the
        system's; slurm the job's cgroup memory.max, else SLURM_MEM_PER_NODE, else the system's."""
        total = float(inv.get(("host", "memory.total_bytes")) or os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
        lim = {"system": total, "user": total}
        proc = total
        rl = resource.getrlimit(resource.RLIMIT_AS)[0]
        if rl != resource.RLIM_INFINITY:
            proc = min(proc, rl)
        cg = inv.get(("cgroup", "allocation.memory_limit_bytes"))
        if cg:
            proc = min(proc, float(cg))
        lim["process"] = proc
        if "slurm" in self.levels:
            job = _inventory(self.recording, "level_job_inventory") if getattr(self, "recording", None) else {}
            v = job.get(("cgroup", "allocation.memory_limit_bytes"))
            mem_node = os.environ.get("SLURM_MEM_PER_NODE")
            lim["slurm"] = float(v) if v else float(mem_node) * 1024 * 1024 if mem_node else total
        return {k: _gib(v) for k, v in lim.items() if k in self.levels}

    # ---- data

    @property
    def data(self):
        """PerformanceData of what was recorded up to the last sample (monitor.sample(): each cell's start
        and end), read from the recording when a level is first asked for after it."""
        return self._data


class OfflinePerformanceMonitor:
    """JUmPER's OfflinePerformanceMonitor: static data frames and a manifest (an imported session)."""

    def __init__(self, *, manifest, perf_dfs, source=None, recording=None):
        mon = (manifest or {}).get("monitor", {}) or {}
        self.interval = float(mon.get("interval", 1.0) or 1.0)
        self.running = False
        self.start_time = mon.get("start_time")
        self.stop_time = mon.get("stop_time")
        self.wallclock_start_time = mon.get("wallclock_start_time")
        self.wallclock_stop_time = mon.get("wallclock_stop_time")
        self.num_cpus = int(mon.get("num_cpus", 0) or 0)
        self.num_system_cpus = int(mon.get("num_system_cpus", self.num_cpus) or self.num_cpus)
        self.num_gpus = int(mon.get("num_gpus", 0) or 0)
        self.gpu_memory = float(mon.get("gpu_memory", 0.0) or 0.0)
        self.gpu_name = mon.get("gpu_name", "") or ""
        self.cpu_handles = mon.get("cpu_handles", []) or []
        self.memory_limits = mon.get("memory_limits", {}) or {}
        self.pid, self.uid, self.slurm_job = mon.get("pid"), mon.get("uid"), mon.get("slurm_job")
        levels = list((manifest or {}).get("levels") or perf_dfs.keys())
        self.levels = levels
        self.data = PerformanceData(self.num_cpus, self.num_system_cpus, self.num_gpus, levels)
        for lv, df in (perf_dfs or {}).items():
            if lv not in self.data.levels:
                self.data.levels.append(lv)
            self.data.data[lv] = df
        self.is_imported = True
        self.session_source = source
        self.recording = recording  # the jobscope recording that travelled with the session, if any
        self.n_measurements = self.n_missed_measurements = 0

    def start(self, interval=1.0):
        self.interval = interval
        self.running = False

    def stop(self):
        self.running = False

    def sample(self):
        pass

    @property
    def summary(self):
        if self.recording and os.path.exists(self.recording):
            return Recording(self.recording).summary
        return {}


MonitorProtocol = (PerformanceMonitor, OfflinePerformanceMonitor)
