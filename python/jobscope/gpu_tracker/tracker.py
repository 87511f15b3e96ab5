# SPDX-License-Identifier: MIT
"""gpu_tracker's ``tracker`` module on jobscope: ``Tracker`` and its ``ResourceUsage`` data classes.

    import jobscope.gpu_tracker as gput          # or, with jobscope.compat.install(): import gpu_tracker as gput

    with gput.Tracker(sleep_time=0.5, ram_unit="megabytes", time_unit="seconds") as tracker:
        work()
    print(tracker)                               # gpu_tracker's text
    tracker.resource_usage.max_ram.combined.total_rss
    tracker.to_json()                            # dataclasses.asdict(tracker.resource_usage)

The constructor takes gpu_tracker 5.0.1's arguments with their meaning and defaults. Where gpu_tracker runs a
tracking subprocess that polls psutil and nvidia-smi, this Tracker runs libjobscope's monitor on a thread of
this process (js_monitor_start) over the process (or `process_id`) and every descendant, recording every
sample to a jobscope recording beside the backup pickle; nothing is sampled by Python. At stop() the figures
are derived from that recording and its summary:

- RAM: per sample, gpu_tracker's main / descendants / combined RSS split into private (USS) and shared pages,
  no page counted twice (_timepoints.ram_split); each figure's peak over the samples, as gpu_tracker.
- CPU: the mean is the exact CPU time over the wall time (children that lived less than one interval
  included), the maximum the busiest interval's; the main process's CPU and thread count exclude the
  monitor's own thread.
- GPU: NVML or ROCm SMI read in-process (no nvidia-smi), the job's memory by PID, the tracked GPUs' summed
  utilisation; 0 without a GPU, as gpu_tracker.
- Compute time: the wall time tracked.

Units are decimal (a megabyte is 10^6 bytes, GPU RAM included). A figure that could not be measured (the USS
of another user's process) is None rather than a made-up 0.
"""
from __future__ import annotations

import atexit
import dataclasses as dclass
import enum
import errno
import json
import logging
import os
import pickle
import threading
import uuid

from .. import _lib, _views
from ..tracker import RAM_UNITS, TIME_UNITS, phases_in_units
from . import _data, _timepoints

log = logging.getLogger("jobscope.gpu_tracker")

MIN_SLEEP_TIME, MAX_SLEEP_TIME = 0.01, 3600.0
GPU_BRANDS = ("nvidia", "amd")


# ---- gpu_tracker's data classes ------------------------------------------------------------------------------

@dclass.dataclass
class RSSValues:
    """The resident set size (RSS) i.e. memory used by a process or processes.

    :param total_rss: The sum of ``private_rss`` and ``shared_rss``.
    :param private_rss: The RAM usage exclusive to a process (its USS; summed over a group).
    :param shared_rss: The RAM usage of a process shared with at least one other process (a group's shared
        pages counted once).
    """
    total_rss: float = 0.
    private_rss: float = 0.
    shared_rss: float = 0.


@dclass.dataclass
class MaxRAM:
    """Information related to RAM including the maximum RAM used over a period of time.

    :param unit: The unit of measurement for RAM e.g. gigabytes.
    :param system_capacity: A constant value for the RAM capacity of the entire operating system.
    :param system: The RAM usage across the entire operating system.
    :param main: The RAM usage of the main process.
    :param descendants: The summed RAM usage of the descendant processes.
    :param combined: The summed RAM usage of both the main process and any descendant processes it may have.
    """
    unit: str
    system_capacity: float
    system: float = 0.
    main: RSSValues = dclass.field(default_factory=RSSValues)
    descendants: RSSValues = dclass.field(default_factory=RSSValues)
    combined: RSSValues = dclass.field(default_factory=RSSValues)


@dclass.dataclass
class MaxGPURAM:
    """Information related to GPU RAM including the maximum GPU RAM used over a period of time.

    :param unit: The unit of measurement for GPU RAM e.g. gigabytes.
    :param system_capacity: A constant value for the GPU RAM capacity of all the GPUs in the system.
    :param system: The GPU RAM usage of all the GPUs in the system.
    :param main: The GPU RAM usage of the main process.
    :param descendants: The summed GPU RAM usage of the descendant processes.
    :param combined: The summed GPU RAM usage of both the main process and any descendant processes.
    """
    unit: str
    system_capacity: float
    system: float = 0.
    main: float = 0.
    descendants: float = 0.
    combined: float = 0.


@dclass.dataclass
class ProcessingUnitPercentages:
    """Utilization percentages of one or more processing units (GPUs or CPU cores): max and mean of the sum of
    the units' percentages, and of that sum divided by the number of units (hardware).
    """
    max_sum_percent: float = 0.
    max_hardware_percent: float = 0.
    mean_sum_percent: float = 0.
    mean_hardware_percent: float = 0.


@dclass.dataclass
class CPUUtilization:
    """Core counts, utilization percentages of the main process, its descendants, both, and the whole system,
    and the largest thread counts.
    """
    system_core_count: int
    n_expected_cores: int
    system: ProcessingUnitPercentages = dclass.field(default_factory=ProcessingUnitPercentages)
    main: ProcessingUnitPercentages = dclass.field(default_factory=ProcessingUnitPercentages)
    descendants: ProcessingUnitPercentages = dclass.field(default_factory=ProcessingUnitPercentages)
    combined: ProcessingUnitPercentages = dclass.field(default_factory=ProcessingUnitPercentages)
    main_n_threads: int = 0
    descendants_n_threads: int = 0
    combined_n_threads: int = 0


@dclass.dataclass
class GPUUtilization:
    """Utilization percentages of the GPU(s) being tracked.

    :param system_gpu_count: The number of GPUs in the system.
    :param n_expected_gpus: The number of GPUs to be tracked.
    :param gpu_percentages: The utilization percentages of the GPU(s) being tracked.
    """
    system_gpu_count: int
    n_expected_gpus: int
    gpu_percentages: ProcessingUnitPercentages = dclass.field(default_factory=ProcessingUnitPercentages)


@dclass.dataclass
class ComputeTime:
    """The time it takes for a task to complete.

    :param unit: The unit of measurement for compute time e.g. hours.
    :param time: The real compute time.
    """
    unit: str
    time: float = 0.


@dclass.dataclass
class ResourceUsage:
    """Contains data for computational resource usage."""
    max_ram: MaxRAM
    max_gpu_ram: MaxGPURAM
    cpu_utilization: CPUUtilization
    gpu_utilization: GPUUtilization
    compute_time: ComputeTime


# ---- text ---------------------------------------------------------------------------------------------------

_LABELS = [("max", "Max"), ("ram", "RAM"), ("unit", "Unit"), ("system", "System"), ("compute", "Compute"),
           ("rss", "RSS"), ("total", "Total"), ("private", "Private"), ("shared", "Shared"), ("main", "Main"),
           ("descendants", "Descendants"), ("combined", "Combined"), ("gpu", "GPU"), ("mean", "Mean"),
           ("cpu", "CPU"), ("n threads", "number of threads"), ("n expected", "Number of expected")]


def _label(key):
    text = key.replace("_", " ")
    for a, b in _LABELS:
        text = text.replace(a, b)
    return "Time" if text == "time" else text


def _value(v):
    if v is None:
        return "null"
    if isinstance(v, float):
        return repr(float(f"{v:.3f}"))
    return str(v)


def format_usage(d, indent=0):
    """gpu_tracker's text of a to_json() dict: `Label: value` lines nested by three spaces, floats to three
    decimals."""
    lines = []
    for k, v in d.items():
        pad = "   " * indent
        if isinstance(v, dict):
            lines.append(f"{pad}{_label(k)}:")
            lines.append(format_usage(v, indent + 1))
        else:
            lines.append(f"{pad}{_label(k)}: {_value(v)}")
    return "\n".join(lines)


# ---- the Tracker --------------------------------------------------------------------------------------------

def _validate_unit(unit, table, unit_type):
    if unit not in table:
        raise ValueError(f'"{unit}" is not a valid {unit_type} unit. Valid values are {", ".join(sorted(table))}')
    return table[unit]


def _div(v, unit):
    return None if v is None else v / unit


def _max(vals):
    vals = [v for v in vals if v is not None]
    return max(vals) if vals else None


def _mean(vals):
    vals = [v for v in vals if v is not None]
    return sum(vals) / len(vals) if vals else None


def _or0(v):
    return 0.0 if v is None else v


class Tracker:
    """Tracks the computational resources of this process (or ``process_id``) and its descendants, within a
    context manager or between start() and stop(). See the module's doc for how each figure is obtained.

    :param sleep_time: seconds between samples (0.01 to 3600; default 1.0).
    :param ram_unit: One of 'bytes', 'kilobytes', 'megabytes', 'gigabytes', or 'terabytes'.
    :param gpu_ram_unit: One of 'bytes', 'kilobytes', 'megabytes', 'gigabytes', or 'terabytes'.
    :param time_unit: One of 'seconds', 'minutes', 'hours', or 'days'.
    :param n_expected_cores: the denominator of the CPU hardware percentages (main, descendants, combined);
        defaults to all the cores in the system.
    :param gpu_uuids: the GPUs whose utilization is tracked (their number is the GPU denominator); defaults to
        all the GPUs in the system. Checked against the GPUs found at start().
    :param disable_logs: suppress the warnings (no GPU, interrupted tracking).
    :param process_id: the process to track with its descendants (default: this process).
    :param resource_usage_file: the backup pickle of ``resource_usage``, written at start and, if tracking is
        interrupted (the interpreter exits while tracking), with the figures so far; removed when stop()
        completes. Default ``.gpu-tracker_<random UUID>.pkl`` in the current directory. The jobscope recording
        of the run lies beside it (same name, ``.jobscope.db``) and is removed with it.
    :param n_join_attempts: stop() waits for the monitor's closing sample at most this many times...
    :param join_timeout: ... this many seconds each; then it gives the figures recorded so far.
    :param gpu_brand: "nvidia" or "amd": the GPUs counted; default: NVIDIA's if any, else AMD's.
    :param tracking_file: also write every sample's figures there at stop(): ".csv" or ".sqlite" (gpu_tracker's
        format: static data, then one row per timepoint; SQLite tables "static_data" and "data").
    :param overwrite: replace an existing ``tracking_file`` (else FileExistsError here).
    :raises ValueError: invalid units, sleep time, GPU brand, empty gpu_uuids or tracking file name.
    """

    class State(enum.Enum):
        """The state of the Tracker."""
        NEW = 0
        STARTED = 1
        STOPPED = 2

    def __init__(self, sleep_time: float = 1.0, ram_unit: str = "gigabytes", gpu_ram_unit: str = "gigabytes",
                 time_unit: str = "hours", n_expected_cores: int = None, gpu_uuids: set = None,
                 disable_logs: bool = False, process_id: int = None, resource_usage_file: str = None,
                 n_join_attempts: int = 5, join_timeout: float = 10.0, gpu_brand: str = None,
                 tracking_file: str = None, overwrite: bool = False):
        try:
            sleep_time = float(sleep_time)
        except (TypeError, ValueError):
            raise ValueError(f"Sleep time of {sleep_time} is invalid. Must be a number of seconds.") from None
        if not MIN_SLEEP_TIME <= sleep_time <= MAX_SLEEP_TIME:
            raise ValueError(f"Sleep time of {sleep_time} is invalid. Must be at least {MIN_SLEEP_TIME} seconds "
                             f"(and at most {MAX_SLEEP_TIME:g}).")
        self._ram_coef = _validate_unit(ram_unit, RAM_UNITS, "RAM")
        self._gpu_coef = _validate_unit(gpu_ram_unit, RAM_UNITS, "GPU RAM")
        self._time_coef = _validate_unit(time_unit, TIME_UNITS, "time")
        if gpu_brand is not None and gpu_brand not in GPU_BRANDS:
            raise ValueError(f'"{gpu_brand}" is not a valid GPU brand. Supported values are "nvidia" and "amd".')
        if gpu_uuids is not None:
            gpu_uuids = set(gpu_uuids)
            if not gpu_uuids:
                raise ValueError("gpu_uuids is not None but the set is empty. Please provide a set of at least one "
                                 "GPU UUID.")
        if n_expected_cores is not None and (int(n_expected_cores) != n_expected_cores or n_expected_cores <= 0):
            raise ValueError(f"n_expected_cores of {n_expected_cores} is invalid. Must be a positive integer.")
        if process_id is not None and (int(process_id) != process_id or process_id <= 0):
            raise ValueError(f"process_id of {process_id} is invalid. Must be a positive process ID.")
        if int(n_join_attempts) != n_join_attempts or n_join_attempts < 1:
            raise ValueError(f"n_join_attempts of {n_join_attempts} is invalid. Must be a positive integer.")
        if not float(join_timeout) > 0:
            raise ValueError(f"join_timeout of {join_timeout} is invalid. Must be positive.")
        self.sleep_time = sleep_time
        self.ram_unit, self.gpu_ram_unit, self.time_unit = ram_unit, gpu_ram_unit, time_unit
        self.n_expected_cores = None if n_expected_cores is None else int(n_expected_cores)
        self.gpu_uuids = gpu_uuids
        self.disable_logs = bool(disable_logs)
        self.process_id = None if process_id is None else int(process_id)
        if resource_usage_file is None:
            resource_usage_file = f".gpu-tracker_{uuid.uuid1()}.pkl"
        self._resource_usage_file = os.path.abspath(os.fspath(resource_usage_file))
        self._recording = os.path.splitext(self._resource_usage_file)[0] + ".jobscope.db"
        self.n_join_attempts = int(n_join_attempts)
        self.join_timeout = float(join_timeout)
        self.gpu_brand = gpu_brand
        self._tracking = _data.create(tracking_file, overwrite)
        if self._tracking is not None:
            self._tracking.check_overwrite()  # as gpu_tracker: an existing file is refused now, not at the end
        self.resource_usage = None
        self.state = Tracker.State.NEW
        self._summary = None
        self._timepoints = None
        self._env_old = None
        self._atexit = None
        self._stopped_by_helper = False
        self._brand = gpu_brand
        self._from_time = None  # the CLI: samples before the command was released are not the command's

    def __repr__(self):
        return f"State: {self.state.name}"

    def __getstate__(self):  # pickled by the CLI's pickle format: the settings and the figures
        d = dict(self.__dict__)
        d["_atexit"] = None
        return d

    # ---- life ---------------------------------------------------------------------------------------------

    def _log_warning(self, text):
        if not self.disable_logs:
            log.warning(text)

    def _empty_usage(self, gpus=0, gpu_capacity=0.0, n_gpus=None):
        cores = os.cpu_count() or 1
        return ResourceUsage(
            max_ram=MaxRAM(unit=self.ram_unit, system_capacity=_or0(_div(_mem_total(), self._ram_coef))),
            max_gpu_ram=MaxGPURAM(unit=self.gpu_ram_unit, system_capacity=gpu_capacity),
            cpu_utilization=CPUUtilization(system_core_count=cores,
                                           n_expected_cores=self.n_expected_cores or cores),
            gpu_utilization=GPUUtilization(system_gpu_count=gpus, n_expected_gpus=gpus if n_gpus is None else n_gpus),
            compute_time=ComputeTime(unit=self.time_unit))

    def _write_backup(self, usage):
        tmp = self._resource_usage_file + ".tmp"
        with open(tmp, "wb") as f:
            pickle.dump(usage, f)
        os.replace(tmp, self._resource_usage_file)

    def __enter__(self) -> "Tracker":
        if self.state == Tracker.State.STARTED:
            raise RuntimeError("Cannot start tracking when tracking has already started.")
        if self.state == Tracker.State.STOPPED:
            raise RuntimeError("Cannot start tracking when tracking has already stopped.")
        lib = _lib.lib()
        self._write_backup(self._empty_usage())
        opts = _lib.MonitorOpts(size=_lib.ctypes.sizeof(_lib.MonitorOpts), interval_s=self.sleep_time,
                                output=os.fsencode(self._recording), overwrite=1, uss_every=1, set_environment=1,
                                pid=self.process_id or 0)
        rc = lib.js_monitor_start(_lib.ctypes.byref(opts))
        if rc < 0:
            _unlink(self._resource_usage_file)
            if rc == -errno.EBUSY:
                raise RuntimeError("another jobscope monitor is running in this process (one at a time)")
            if rc == -errno.ESRCH:
                raise ProcessLookupError(f"The target process of ID {self.process_id} does not exist.")
            _lib.check(rc, f"jobscope monitor ({self._recording})")
        addr = lib.js_monitor_address()
        if addr:  # Python's own copy of the environment (subprocess with env=dict(os.environ), ...)
            self._env_old = os.environ.get("JOBSCOPE_SOCKET")
            os.environ["JOBSCOPE_SOCKET"] = addr.decode()
        self.state = Tracker.State.STARTED
        try:
            self._check_gpus()
        except Exception:
            self._finish(keep=False)
            self.state = Tracker.State.NEW
            raise
        self._atexit = self._interrupted
        atexit.register(self._atexit)
        return self

    def _check_gpus(self):
        """What the monitor found: the brand's GPUs (a warning when none) and the UUIDs asked for."""
        inv = _views.query(self._recording, "SELECT source, key, value FROM inventory WHERE key LIKE 'gpu.%.uuid'")
        meta = _views.meta(self._recording)
        found = {"nvidia": {v for s, k, v in inv if s == "nvml"}, "amd": {v for s, k, v in inv if s == "rocm"}}
        brand = self.gpu_brand or ("nvidia" if found["nvidia"] else "amd" if found["amd"] else None)
        self._brand = brand
        uuids = found.get(brand, set()) if brand else set()
        if not uuids:
            why = "; ".join(f"{src}: {meta.get('source_error.' + src, 'no GPU')}" for src in ("nvml", "rocm"))
            what = f"No {brand.upper() if brand == 'amd' else 'NVIDIA'} GPU" if brand else "No NVIDIA or AMD GPU"
            self._log_warning(f"{what} could be read ({why}). The GPU RAM and GPU utilization values will remain 0.0.")
        if self.gpu_uuids is not None and uuids:
            for u in self.gpu_uuids:
                if u not in uuids:
                    raise ValueError(f"GPU UUID of {u} is not valid. Available UUIDs are: {', '.join(sorted(uuids))}")

    def _stop_monitor(self):
        """js_monitor_stop, waited for at most n_join_attempts x join_timeout seconds. True when it returned."""
        lib = _lib.lib()
        result = {}

        def run():
            result["rc"] = lib.js_monitor_stop()

        t = threading.Thread(target=run, name="jobscope-stop", daemon=True)
        self._stopped_by_helper = True
        t.start()
        for attempt in range(self.n_join_attempts):
            t.join(self.join_timeout)
            if not t.is_alive():
                break
            if attempt + 1 < self.n_join_attempts:
                log.warning("The tracking process is still alive after join timeout. Attempting to join again...")
        if t.is_alive():
            log.warning(f"The tracking process is still alive after {self.n_join_attempts} attempts to join. "
                        "Using the figures recorded so far.")
            return False
        rc = result.get("rc", 0)
        if rc < 0 and rc != -errno.ESRCH:
            self._log_warning(f"jobscope monitor: {os.strerror(-rc)} (the figures cover what was recorded)")
        return True

    def _finish(self, keep):
        """Stop the monitor and compute the figures; `keep`: leave the backup pickle and the recording."""
        joined = self._stop_monitor()
        if self._env_old is not None or "JOBSCOPE_SOCKET" in os.environ:
            if self._env_old is None:
                os.environ.pop("JOBSCOPE_SOCKET", None)
            else:
                os.environ["JOBSCOPE_SOCKET"] = self._env_old
            self._env_old = None
        summary = None
        if joined:
            try:
                summary = json.loads(_lib.take_string(_lib.lib().js_monitor_summary()))
            except OSError:
                summary = None
        if summary is None:  # the recording says what was sampled so far
            summary = json.loads(_lib.take_string(_lib.lib().js_recording_summary(os.fsencode(self._recording))))
            keep = True
        self._summary = summary
        self._timepoints, ncpu = _timepoints.load(
            self._recording, summary, self._root_pid(summary), embedded=not self.process_id, gpu_brand=self._brand,
            gpu_uuids=self.gpu_uuids, stop_helper=joined and self._stopped_by_helper)
        if self._from_time is not None:
            self._timepoints = [t for t in self._timepoints if t["timestamp"] is None or t["timestamp"] >= self._from_time]
        self.resource_usage = self._usage(summary, self._timepoints, ncpu)
        if self._tracking is not None:
            self._tracking.write_tracking(*self._tracking_rows(ncpu))
        if keep:
            self._write_backup(self.resource_usage)
        else:
            _unlink(self._resource_usage_file)
            for suffix in ("", "-wal", "-shm", "-journal"):
                _unlink(self._recording + suffix)

    def _root_pid(self, summary):
        return int(((summary or {}).get("split") or {}).get("main_pid") or self.process_id or os.getpid())

    def __exit__(self, *_):
        if self.state == Tracker.State.NEW:
            raise RuntimeError("Cannot stop tracking when tracking has not started yet.")
        if self.state == Tracker.State.STOPPED:
            raise RuntimeError("Cannot stop tracking when tracking has already stopped.")
        if self._atexit is not None:
            atexit.unregister(self._atexit)
            self._atexit = None
        self._finish(keep=False)
        self.state = Tracker.State.STOPPED

    def _interrupted(self):
        """At interpreter exit while tracking: the figures so far go to the backup pickle (kept, with the
        recording), as gpu_tracker leaves them when tracking is interrupted."""
        if self.state != Tracker.State.STARTED:
            return
        self._atexit = None
        try:
            self._finish(keep=True)
            self._log_warning(f"Tracking was interrupted: the resource usage so far is in {self._resource_usage_file} "
                              f"and the jobscope recording in {self._recording}.")
        finally:
            self.state = Tracker.State.STOPPED

    def start(self):
        """Begins tracking for the duration of time until ``stop()`` is called. Equivalent to entering the
        context manager."""
        self.__enter__()

    def stop(self):
        """Stop tracking. Equivalent to exiting the context manager."""
        self.__exit__()

    # ---- figures ------------------------------------------------------------------------------------------

    def _usage(self, s, tps, ncpu):
        ru, gu, tu = self._ram_coef, self._gpu_coef, self._time_coef
        sp = s.get("split") or {}
        mem, cpu = sp.get("memory") or {}, sp.get("cpu") or {}
        sys_cores = int(((cpu.get("system") or {}).get("cores")) or ncpu or os.cpu_count() or 1)
        expected = self.n_expected_cores or sys_cores

        def rss(who):
            return RSSValues(total_rss=_div(_max(t[f"{who}_ram"] for t in tps), ru),
                             private_rss=_div(_max(t[f"{who}_private_ram"] for t in tps), ru),
                             shared_rss=_div(_max(t[f"{who}_shared_ram"] for t in tps), ru))

        def cpu_pct(who, units):
            c = cpu.get(who) or {}
            mx = None if c.get("max_cores") is None else 100.0 * c["max_cores"]
            mean = None if c.get("mean_cores") is None else 100.0 * c["mean_cores"]
            return ProcessingUnitPercentages(max_sum_percent=mx, max_hardware_percent=_div(mx, units),
                                             mean_sum_percent=mean, mean_hardware_percent=_div(mean, units))

        devices = [d for d in ((s.get("gpu") or {}).get("devices") or [])
                   if self._brand and d.get("vendor") == self._brand]
        n_gpus = len(self.gpu_uuids) if self.gpu_uuids else len(devices)
        gsum = [t["gpu_sum_utilization_percent"] for t in tps]
        gmax, gmean = _or0(_max(gsum)), _or0(_mean(gsum))
        wall = sp.get("wall_s")  # the span the CPU means are over: mean_sum_percent x time = CPU time
        if wall is None:
            wall = s.get("wall_time_s")
        threads = {w: _max(t[f"{w}_n_threads"] for t in tps) for w in ("main", "descendants", "combined")}
        return ResourceUsage(
            max_ram=MaxRAM(unit=self.ram_unit,
                           system_capacity=_div(mem.get("system_total_bytes") or _max(t["system_ram_total"] for t in tps)
                                                or _mem_total(), ru),
                           system=_div(_max([mem.get("system_peak_used_bytes")] + [t["system_ram"] for t in tps]), ru),
                           main=rss("main"), descendants=rss("descendants"), combined=rss("combined")),
            max_gpu_ram=MaxGPURAM(
                unit=self.gpu_ram_unit,
                system_capacity=_or0(_div(sum(d.get("memory_total_bytes") or 0.0 for d in devices), gu)),
                system=_or0(_div(_max(t["system_gpu_ram"] for t in tps), gu)),
                main=_or0(_div(_max(t["main_gpu_ram"] for t in tps), gu)),
                descendants=_or0(_div(_max(t["descendants_gpu_ram"] for t in tps), gu)),
                combined=_or0(_div(_max(t["combined_gpu_ram"] for t in tps), gu))),
            cpu_utilization=CPUUtilization(
                system_core_count=sys_cores, n_expected_cores=int(expected),
                system=cpu_pct("system", sys_cores), main=cpu_pct("main", expected),
                descendants=cpu_pct("descendants", expected), combined=cpu_pct("combined", expected),
                main_n_threads=int(threads["main"] or 0), descendants_n_threads=int(threads["descendants"] or 0),
                combined_n_threads=int(threads["combined"] or 0)),
            gpu_utilization=GPUUtilization(
                system_gpu_count=len(devices), n_expected_gpus=n_gpus,
                gpu_percentages=ProcessingUnitPercentages(
                    max_sum_percent=gmax, max_hardware_percent=gmax / n_gpus if n_gpus else 0.0,
                    mean_sum_percent=gmean, mean_hardware_percent=gmean / n_gpus if n_gpus else 0.0)),
            compute_time=ComputeTime(unit=self.time_unit, time=_div(wall, tu)))

    def _tracking_rows(self, ncpu):
        """gpu_tracker's tracking file: the static data and one row per timepoint, in the units asked for."""
        u = self.resource_usage
        ru, gu = self._ram_coef, self._gpu_coef
        expected = u.cpu_utilization.n_expected_cores
        sys_cores = u.cpu_utilization.system_core_count
        n_gpus = u.gpu_utilization.n_expected_gpus
        static = {"ram_unit": self.ram_unit, "gpu_ram_unit": self.gpu_ram_unit, "time_unit": self.time_unit,
                  "ram_system_capacity": u.max_ram.system_capacity,
                  "gpu_ram_system_capacity": u.max_gpu_ram.system_capacity, "system_core_count": sys_cores,
                  "n_expected_cores": expected, "system_gpu_count": u.gpu_utilization.system_gpu_count,
                  "n_expected_gpus": n_gpus}
        rows = []
        for t in self._timepoints:
            r = {f"{w}_ram": _div(t[f"{w}_ram"], ru) for w in ("main", "descendants", "combined", "system")}
            for w in ("main", "descendants", "combined", "system"):
                r[f"{w}_gpu_ram"] = _or0(_div(t[f"{w}_gpu_ram"], gu)) if t["gpu_devices"] else 0.0
            g = t["gpu_sum_utilization_percent"] if t["gpu_devices"] else 0.0
            r["gpu_sum_utilization_percent"] = g
            r["gpu_hardware_utilization_percent"] = None if g is None else (g / n_gpus if n_gpus else 0.0)
            for w in ("main", "descendants", "combined"):
                r[f"{w}_n_threads"] = t[f"{w}_n_threads"]
            for w, units in (("system", sys_cores), ("main", expected), ("descendants", expected),
                             ("combined", expected)):
                v = t[f"cpu_{w}_sum_utilization_percent"]
                r[f"cpu_{w}_sum_utilization_percent"] = v
                r[f"cpu_{w}_hardware_utilization_percent"] = _div(v, units)
            r["timestamp"] = t["timestamp"]
            rows.append(r)
        return static, rows

    def __str__(self) -> str:
        """gpu_tracker's text of the measurements and their units."""
        return format_usage(self.to_json())

    def to_json(self) -> dict:
        """The measurements and their units as a dictionary (dataclasses.asdict of resource_usage)."""
        if self.resource_usage is None:
            raise RuntimeError(
                "Cannot display the tracker in string or JSON format before tracking completes. Exit the content "
                "manager or call the stop() method before calling to_json() or str()")
        return dclass.asdict(self.resource_usage)

    # ---- beyond gpu_tracker ---------------------------------------------------------------------------------

    @property
    def jobscope_summary(self):
        """jobscope's own summary of the run (seconds and bytes; `jobscope summary --json`), once stopped."""
        return self._summary

    @property
    def phases(self):
        """Per phase (SubTracker code blocks, jobscope.phase blocks): wall and CPU time, mean cores, peak RAM,
        I/O, in this tracker's units; exact totals, not samples (see docs/PHASES.md)."""
        return phases_in_units(self._summary, self.ram_unit, self.time_unit)

    @property
    def timepoints(self):
        """The per-sample figures behind the peaks (base units: bytes, percent), as a list of dicts."""
        return list(self._timepoints or [])


def _unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _mem_total():
    """The host's memory before a first sample says it (the initial backup pickle only)."""
    try:
        return float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError):
        return None


def load_resource_usage(path):
    """The ResourceUsage in a backup pickle (resource_usage_file) left by an interrupted tracking session."""
    with open(path, "rb") as f:
        return pickle.load(f)


__all__ = ["Tracker", "ResourceUsage", "MaxRAM", "RSSValues", "MaxGPURAM", "ProcessingUnitPercentages",
           "CPUUtilization", "GPUUtilization", "ComputeTime", "load_resource_usage"]
