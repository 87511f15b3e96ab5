# SPDX-License-Identifier: MIT
"""Tracker: gpu_tracker's Tracker API on jobscope's embedded monitor.

    with jobscope.Tracker(interval=0.5, ram_unit="gigabytes", time_unit="hours") as t:
        with t.phase("train"):
            ...
        t.event("checkpoint", step=10)
    print(t)            # the figures, in the units asked for
    t.summary           # the same as a dict (gpu_tracker's to_json() layout, plus cpu_time and phases)
    t.jobscope_summary  # jobscope's own summary (seconds, bytes), as `jobscope summary --json` writes it

The monitor runs on a thread of this process (libjobscope's js_monitor_start) over the process and every
descendant; nothing is sampled by Python. CPU figures come from the kernel's exact totals (children that
lived less than one interval included); the main process's CPU, I/O, threads and descriptors exclude the
monitor thread's own. Peaks are sampled, each figure's peak on its own (as gpu_tracker does). RAM counts no
page twice: `combined` total_rss is jobscope's memory headline (memory.peak_bytes: the largest PSS sum of the
tree at one sample, never below its largest process's high-water mark); private_rss is the processes'
private pages (USS) and shared_rss their share of the pages they share (PSS - USS, so a page shared within the
tree counts once, not once per process or per mapped file); total_rss of main and descendants is their PSS.
RAM units are decimal (1 gigabyte = 1e9 bytes, like gpu_tracker's).
"""
import errno
import json
import os

from . import _lib, marks

RAM_UNITS = {"bytes": 1.0, "kilobytes": 1e3, "megabytes": 1e6, "gigabytes": 1e9, "terabytes": 1e12}
TIME_UNITS = {"seconds": 1.0, "minutes": 60.0, "hours": 3600.0, "days": 86400.0}


def _get(d, *path):
    for k in path:
        if not isinstance(d, dict) or d.get(k) is None:
            return None
        d = d[k]
    return d


def _div(v, unit):
    return None if v is None else v / unit


def _pct(cores):
    return None if cores is None else cores * 100.0


class Tracker:
    """Tracks the computational resources of this process and its descendants (see the module's doc).

    interval (or gpu_tracker's sleep_time): seconds between samples (0.01 .. 3600).
    ram_unit, gpu_ram_unit: bytes, kilobytes, megabytes, gigabytes, terabytes.
    time_unit: seconds, minutes, hours, days.
    n_expected_cores: the denominator of the hardware percentages (default: every core of the system).
    gpu_uuids: the GPUs to count (their number is the GPUs' denominator).
    output: also write a jobscope recording there (SQLite; `jobscope summary FILE`, jobscope.read(FILE)).
    levels: scopes monitored beside this process's tree, each a scope of its own in the summary's `levels`
        section and the recording's `levels` view: "user" (every process of this process's user), "job" (the
        SLURM job it runs in, or `job_id`, on this node: the job's cgroup, else its slurmstepd's tasks).
    uss_every: read USS/PSS every N samples (0: the library's default, every 30).
    """

    NEW, STARTED, STOPPED = "new", "started", "stopped"

    def __init__(self, interval=0.5, ram_unit="gigabytes", gpu_ram_unit="gigabytes", time_unit="hours",
                 n_expected_cores=None, gpu_uuids=None, output=None, overwrite=False, sleep_time=None,
                 set_environment=True, levels=(), job_id=None, uss_every=0):
        if sleep_time is not None:
            interval = sleep_time
        for name, unit, table in (("ram_unit", ram_unit, RAM_UNITS), ("gpu_ram_unit", gpu_ram_unit, RAM_UNITS),
                                  ("time_unit", time_unit, TIME_UNITS)):
            if unit not in table:
                raise ValueError(f"{name} {unit!r} is not one of {', '.join(table)}")
        if not (0.01 <= float(interval) <= 3600):
            raise ValueError("interval must be between 0.01 and 3600 seconds")
        if n_expected_cores is not None and n_expected_cores <= 0:
            raise ValueError("n_expected_cores must be positive")
        self.interval = float(interval)
        self.ram_unit, self.gpu_ram_unit, self.time_unit = ram_unit, gpu_ram_unit, time_unit
        self.n_expected_cores = n_expected_cores
        self.gpu_uuids = set(gpu_uuids) if gpu_uuids else None
        self.output = None if output is None else os.fspath(output)
        self.overwrite = overwrite
        self.set_environment = set_environment
        bits = {"user": _lib.LEVEL_USER, "job": _lib.LEVEL_JOB}
        unknown = [lv for lv in levels if lv not in bits]
        if unknown:
            raise ValueError(f"levels {unknown} are not among {', '.join(bits)}")
        self.levels = tuple(levels)
        self._level_bits = sum(bits[lv] for lv in set(levels))
        self.job_id = job_id
        if uss_every < 0:
            raise ValueError("uss_every must be >= 0")
        self.uss_every = int(uss_every)
        self.state = Tracker.NEW
        self._final = None
        self._env_old = None

    # ---- life -------------------------------------------------------------------------------------------

    def start(self):
        """Begin tracking (equivalent to entering the context manager)."""
        if self.state == Tracker.STARTED:
            raise RuntimeError("this Tracker is already started")
        lib = _lib.lib()
        out = None if self.output is None else os.fsencode(self.output)
        opts = _lib.MonitorOpts(_lib.ctypes.sizeof(_lib.MonitorOpts), self.interval, out, int(bool(self.overwrite)),
                                self.uss_every, int(bool(self.set_environment)), 0, self._level_bits,
                                None if self.job_id is None else str(self.job_id).encode())
        rc = lib.js_monitor_start(_lib.ctypes.byref(opts))
        if rc == -errno.EBUSY:
            raise RuntimeError("another jobscope monitor is running in this process (one at a time)")
        if rc == -errno.ENOENT and "job" in self.levels:
            raise RuntimeError("level 'job': not inside a SLURM job (no SLURM_JOB_ID) and no job_id given")
        if rc == -errno.EXDEV:
            raise RuntimeError("/proc belongs to another PID namespace (unshare without --mount-proc?): "
                               "this process's tree cannot be told from the host's")
        _lib.check(rc, "js_monitor_start")
        if self.set_environment:
            addr = lib.js_monitor_address()
            if addr:  # Python's own copy of the environment (subprocess with env=dict(os.environ), ...)
                self._env_old = (True, os.environ.get("JOBSCOPE_SOCKET"))
                os.environ["JOBSCOPE_SOCKET"] = addr.decode()
        self.state = Tracker.STARTED
        self._final = None
        return self

    def stop(self):
        """Stop tracking (equivalent to leaving the context manager); the figures stay available."""
        if self.state != Tracker.STARTED:
            raise RuntimeError("this Tracker is not started")
        lib = _lib.lib()
        rc = lib.js_monitor_stop()
        self.state = Tracker.STOPPED
        if self._env_old is not None:
            had, old = self._env_old
            if old is None:
                os.environ.pop("JOBSCOPE_SOCKET", None)
            else:
                os.environ["JOBSCOPE_SOCKET"] = old
            self._env_old = None
        self._final = json.loads(_lib.take_string(lib.js_monitor_summary()))
        _lib.check(rc, "js_monitor_stop")
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def sample(self):
        """Take a sample now (the figures then include everything up to this call)."""
        _lib.check(_lib.lib().js_monitor_sample(), "js_monitor_sample")

    # ---- marks ------------------------------------------------------------------------------------------

    def phase(self, name):
        """with t.phase("train"): ...  a phase around the block (totals per phase in t.phases)."""
        return marks.phase(name)

    def event(self, name, data=None, **fields):
        """t.event("checkpoint", step=10): a point event with data."""
        return marks.event(name, data, **fields)

    # ---- figures ----------------------------------------------------------------------------------------

    @property
    def jobscope_summary(self):
        """jobscope's summary (a dict in seconds and bytes): of the whole run once stopped, else up to now."""
        if self.state == Tracker.STOPPED:
            return self._final
        if self.state == Tracker.NEW:
            raise RuntimeError("this Tracker has not been started")
        return json.loads(_lib.take_string(_lib.lib().js_monitor_summary()))

    @property
    def summary(self):
        """The figures gpu_tracker's Tracker gives, in the units asked for (a dict; see to_json)."""
        return self.to_json()

    @property
    def resource_usage(self):
        """gpu_tracker's attribute name for the figures (here the same dict as summary)."""
        return self.to_json()

    @property
    def phases(self):
        """Per phase: wall and CPU time (time unit), mean cores, peak RAM (RAM unit), I/O (RAM unit), energy
        (J), inclusive and self (see docs/PHASES.md); `(outside)` is the time with no phase active."""
        return phases_in_units(self.jobscope_summary, self.ram_unit, self.time_unit)

    def to_json(self):
        return figures(self.jobscope_summary, self.ram_unit, self.gpu_ram_unit, self.time_unit,
                       self.n_expected_cores, self.gpu_uuids)

    def __str__(self):
        return format_figures(self.to_json())

    def __repr__(self):
        return f"<jobscope.Tracker {self.state}, interval {self.interval} s>"


def phases_in_units(s, ram_unit="gigabytes", time_unit="hours"):
    ru, tu = RAM_UNITS[ram_unit], TIME_UNITS[time_unit]
    ph = (s or {}).get("phases")
    if not ph:
        return {}

    def conv(p):
        return {
            "time_unit": time_unit,
            "ram_unit": ram_unit,
            "activations": p.get("activations", 0),
            "wall_time": _div(p.get("wall_s"), tu),
            "cpu_time": _div(p.get("cpu_s"), tu),
            "mean_cores": p.get("mean_cores"),
            "peak_ram": _div(p.get("peak_bytes"), ru),
            "read": _div(p.get("read_bytes"), ru),
            "written": _div(p.get("write_bytes"), ru),
            "energy_j": p.get("energy_j"),
            "self_wall_time": _div(_get(p, "self", "wall_s"), tu),
            "self_cpu_time": _div(_get(p, "self", "cpu_s"), tu),
        }

    out = {p["name"]: conv(p) for p in ph.get("phases", [])}
    o = dict(ph.get("outside") or {})
    o["self"] = {"wall_s": o.get("wall_s"), "cpu_s": o.get("cpu_s")}
    out["(outside)"] = conv(o)
    return out


def figures(s, ram_unit="gigabytes", gpu_ram_unit="gigabytes", time_unit="hours", n_expected_cores=None,
            gpu_uuids=None):
    """gpu_tracker's figures (its ResourceUsage as a dict) from a jobscope summary dict."""
    ru, gu, tu = RAM_UNITS[ram_unit], RAM_UNITS[gpu_ram_unit], TIME_UNITS[time_unit]
    sp = s.get("split") or {}
    mem, cpu, thr = sp.get("memory") or {}, sp.get("cpu") or {}, sp.get("threads") or {}
    sys_cores = _get(cpu, "system", "cores") or os.cpu_count() or 1
    expected = n_expected_cores or sys_cores

    def rss(who):
        total = _get(mem, who, "peak_pss_bytes")
        if who == "combined" and _get(s, "memory", "peak_bytes") is not None:
            total = _get(s, "memory", "peak_bytes")  # the headline: no page counted twice
        return {
            "total_rss": _div(total if total is not None else _get(mem, who, "peak_rss_bytes"), ru),
            "private_rss": _div(_get(mem, who, "peak_private_bytes"), ru),
            "shared_rss": _div(_get(mem, who, "peak_shared_bytes"), ru),
        }

    def percentages(who, units):
        mx, mean = _pct(_get(cpu, who, "max_cores")), _pct(_get(cpu, who, "mean_cores"))
        return {
            "max_sum_percent": mx,
            "max_hardware_percent": None if mx is None else mx / units,
            "mean_sum_percent": mean,
            "mean_hardware_percent": None if mean is None else mean / units,
        }

    # GPU figures from the summary's `gpu` section (docs/METRICS.md, "GPU summary"): devices[],
    # job.memory_total_bytes (the devices' memory, summed), job.peak_memory_used_bytes (every process's memory
    # over the GPUs, largest sum at one sample), job.peak_memory_bytes.{main,descendants,combined} (the job's
    # processes, by PID) and job.utilization_sum {mean,max} (sum over the GPUs of their busy fraction). Without
    # it: 0, as gpu_tracker reports on a machine without GPUs.
    gpu = s.get("gpu") or {}
    devices = gpu.get("devices") or []
    gjob = gpu.get("job") or {}
    gpeak = gjob.get("peak_memory_bytes") or {}
    gutil = gjob.get("utilization_sum") or {}
    gpu_count = len(devices)
    n_gpus = len(gpu_uuids) if gpu_uuids else gpu_count

    def gpct(v):
        return 0.0 if v is None else v * 100.0

    def gbytes(v):
        return _div(v or 0.0, gu)

    gmax, gmean = gpct(gutil.get("max")), gpct(gutil.get("mean"))
    gpu_pct = {"max_sum_percent": gmax, "max_hardware_percent": gmax / n_gpus if n_gpus else 0.0,
               "mean_sum_percent": gmean, "mean_hardware_percent": gmean / n_gpus if n_gpus else 0.0}
    wall = s.get("wall_time_s")
    if wall is None:
        wall = sp.get("wall_s")
    return {
        "max_ram": {
            "unit": ram_unit,
            "system_capacity": _div(mem.get("system_total_bytes"), ru),
            "system": _div(mem.get("system_peak_used_bytes"), ru),
            "main": rss("main"),
            "descendants": rss("descendants"),
            "combined": rss("combined"),
        },
        "max_gpu_ram": {
            "unit": gpu_ram_unit,
            "system_capacity": gbytes(gjob.get("memory_total_bytes")),
            "system": gbytes(gjob.get("peak_memory_used_bytes")),
            "main": gbytes(gpeak.get("main")),
            "descendants": gbytes(gpeak.get("descendants")),
            "combined": gbytes(gpeak.get("combined")),
        },
        "cpu_utilization": {
            "system_core_count": int(sys_cores),
            "n_expected_cores": int(expected),
            "system": percentages("system", sys_cores),
            "main": percentages("main", expected),
            "descendants": percentages("descendants", expected),
            "combined": percentages("combined", expected),
            "main_n_threads": int(thr.get("main") or 0),
            "descendants_n_threads": int(thr.get("descendants") or 0),
            "combined_n_threads": int(thr.get("combined") or 0),
        },
        "gpu_utilization": {
            "system_gpu_count": gpu_count,
            "n_expected_gpus": n_gpus,
            "gpu_percentages": gpu_pct,
        },
        "compute_time": {"unit": time_unit, "time": _div(wall, tu)},
        # beyond gpu_tracker: exact CPU time, split like the RAM
        "cpu_time": {
            "unit": time_unit,
            "main": _div(_get(cpu, "main", "cpu_s"), tu),
            "descendants": _div(_get(cpu, "descendants", "cpu_s"), tu),
            "combined": _div(_get(cpu, "combined", "cpu_s"), tu),
        },
    }


def _title(key):
    """gpu_tracker's labels: main_n_threads -> Main number of threads, max_gpu_ram -> Max GPU RAM."""
    special = {"ram": "RAM", "gpu": "GPU", "gpus": "GPUs", "cpu": "CPU", "rss": "RSS", "n": "number of"}
    t = " ".join(special.get(w, w) for w in key.split("_"))
    return t[:1].upper() + t[1:]


def format_figures(d, indent=0):
    """The figures as gpu_tracker prints them: one `Label: value` per line, nested by three spaces."""
    lines = []
    for k, v in d.items():
        pad = "   " * indent
        if isinstance(v, dict):
            lines.append(f"{pad}{_title(k)}:")
            lines.append(format_figures(v, indent + 1))
        else:
            if isinstance(v, float):
                v = round(v, 3)
            lines.append(f"{pad}{_title(k)}: {'n/a' if v is None else v}")
    return "\n".join(lines)
