# SPDX-License-Identifier: MIT
"""pytyche's run monitor (`pytyche.diagnostics.run_monitor`) on jobscope: change the import line to
`from jobscope.run_monitor import ...` (or call jobscope.compat.install() and change nothing).

    log = RunLog()                                   # the run monitor's JSONL, byte for byte, plus marks
    hw = HWMonitor()
    hw.start(Path("out"), interval_sec=2)
    with log.phase("fit"):
        fit()
    gpu_csv, cpu_csv, dmon_csv = hw.stop()
    summary = build_resource_summary(gpu_csv, cpu_csv, dmon_csv)
    summary.peak_vram_mb = max(summary.peak_vram_mb, probe_jax_peak_memory_mb() or 0.0)
    log.write(Path("out/run.jsonl"))

HWMonitor writes the three files pytyche's writes, with the same columns: hw_metrics.csv in the format of
`nvidia-smi --query-gpu=timestamp,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw,
temperature.gpu,clocks.current.sm,clocks.current.memory --format=csv,nounits,noheader`, hw_dmon.csv in the
format of `nvidia-smi dmon -s mu`, and cpu_metrics.csv (timestamp,usr_pct,idle_pct from /proc/stat deltas).
Where pytyche starts two nvidia-smi processes and a sampling thread, HWMonitor starts libjobscope's embedded
monitor (one thread, NVML and ROCm SMI read in-process, /proc/stat by the system source), which records
every sample to hw_monitor.jobscope.db in the output directory; stop() writes the three files from that
recording's `gpu` and `system` views (write_hw_files() does the same for a recording left by a crash).
Without a GPU the GPU files hold no rows (the dmon file its two header lines). One embedded monitor per
process: an HWMonitor cannot run beside a jobscope Tracker.
"""
from __future__ import annotations

import dataclasses
import errno
import os
from datetime import datetime, timezone
from pathlib import Path

from . import _lib, _views
from .runlog import RunLog

__all__ = ["RunLog", "HWMonitor", "ResourceSummary", "build_resource_summary", "probe_jax_peak_memory_mb",
           "write_hw_files"]

GPU_FILE, DMON_FILE, CPU_FILE = "hw_metrics.csv", "hw_dmon.csv", "cpu_metrics.csv"
RECORDING_FILE = "hw_monitor.jobscope.db"
MiB = 1024 * 1024
DMON_COLUMNS = [("sm", "%"), ("mem", "%"), ("enc", "%"), ("dec", "%"), ("fb", "MB"), ("bar1", "MB")]


def _iso_utc(unix_s):
    """The run monitor's timestamps: UTC, ISO 8601, milliseconds."""
    return datetime.fromtimestamp(unix_s, tz=timezone.utc).isoformat(timespec="milliseconds")


def _smi_time(unix_s):
    """nvidia-smi's `timestamp` field: local time, YYYY/MM/DD HH:MM:SS.mmm."""
    t = datetime.fromtimestamp(unix_s)
    return t.strftime("%Y/%m/%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"


def _int(v, scale=1.0):
    return "[N/A]" if v is None else str(int(round(v * scale)))


def _dmon(v, scale=1.0):
    return "-" if v is None else str(int(round(v * scale)))


def write_hw_files(recording, output_dir, interval_sec=None):
    """Write hw_metrics.csv, hw_dmon.csv and cpu_metrics.csv into `output_dir` from the jobscope recording at
    `recording` (HWMonitor's, or any). Returns their paths (gpu, cpu, dmon). `interval_sec` (default: the
    recording's) drops a closing interval shorter than half of it from the CPU file."""
    output_dir = Path(output_dir)
    gpus = _views.rows(recording, "gpu")
    system = _views.rows(recording, "system")
    if interval_sec is None:
        ns = _views.meta(recording).get("interval_ns")
        interval_sec = int(ns) / 1e9 if ns else 0.0
    gpu_path, dmon_path, cpu_path = output_dir / GPU_FILE, output_dir / DMON_FILE, output_dir / CPU_FILE
    gpus.sort(key=lambda r: (r.get("sample") or 0, r.get("vendor") or "", r.get("gpu") or 0))
    with open(gpu_path, "w") as f:
        for r in gpus:
            if r.get("unix_s") is None:
                continue
            power = r.get("power_w")
            f.write(", ".join([
                _smi_time(r["unix_s"]), _int(r.get("util_fraction"), 100), _int(r.get("mem_util_fraction"), 100),
                _int(r.get("mem_used_bytes"), 1 / MiB), _int(r.get("mem_total_bytes"), 1 / MiB),
                "[N/A]" if power is None else f"{power:.2f}", _int(r.get("temp_c")), _int(r.get("clock_sm_mhz")),
                _int(r.get("clock_mem_mhz"))]) + "\n")
    with open(dmon_path, "w") as f:
        f.write("# gpu" + "".join(f" {name:>5}" for name, _ in DMON_COLUMNS) + "\n")
        f.write("# Idx" + "".join(f" {unit:>5}" for _, unit in DMON_COLUMNS) + "\n")
        for r in gpus:
            cells = [_dmon(r.get("util_fraction"), 100), _dmon(r.get("mem_util_fraction"), 100),
                     _dmon(r.get("encoder_fraction"), 100), _dmon(r.get("decoder_fraction"), 100),
                     _dmon(r.get("mem_used_bytes"), 1 / MiB), _dmon(r.get("bar1_used_bytes"), 1 / MiB)]
            f.write(f"{_dmon(r.get('gpu')):>5}" + "".join(f" {c:>5}" for c in cells) + "\n")
    with open(cpu_path, "w") as f:
        f.write("timestamp,usr_pct,idle_pct\n")
        system.sort(key=lambda r: r.get("sample") or 0)
        prev_t = None
        for r in system:
            t = r.get("unix_s")
            usr, idle = r.get("user_fraction"), r.get("idle_fraction")
            short = prev_t is not None and t is not None and interval_sec and t - prev_t < interval_sec / 2
            last = r is system[-1]
            if t is not None:
                prev_t = t
            if t is None or usr is None or idle is None or (last and short):
                continue
            f.write(f"{_iso_utc(t)},{100.0 * usr:.1f},{100.0 * idle:.1f}\n")
    return gpu_path, cpu_path, dmon_path


class HWMonitor:
    """Background hardware sampling on jobscope's embedded monitor (see the module's doc): GPU metrics and
    dmon-style SM / memory-controller utilisation through NVML or ROCm SMI, CPU user and idle shares from
    /proc/stat, written as pytyche's three files at stop()."""

    def __init__(self) -> None:
        self._dir = None
        self._recording = None
        self._interval = None
        self._env_old = None

    def start(self, output_dir: Path, interval_sec: int = 2) -> None:
        """Start sampling every `interval_sec` seconds (0.01 to 3600) into `output_dir` (created)."""
        if self._dir is not None:
            raise RuntimeError("this HWMonitor is already started")
        interval = float(interval_sec)
        if not 0.01 <= interval <= 3600:
            raise ValueError(f"interval_sec of {interval_sec} is invalid: 0.01 to 3600 seconds")
        output_dir = Path(output_dir)
        output_dir.mkdir(parents=True, exist_ok=True)
        recording = output_dir / RECORDING_FILE
        lib = _lib.lib()
        opts = _lib.MonitorOpts(size=_lib.ctypes.sizeof(_lib.MonitorOpts), interval_s=interval,
                                output=os.fsencode(recording), overwrite=1, uss_every=0, set_environment=1)
        rc = lib.js_monitor_start(_lib.ctypes.byref(opts))
        if rc == -errno.EBUSY:
            raise RuntimeError("another jobscope monitor is running in this process (one at a time)")
        _lib.check(rc, f"jobscope monitor ({recording})")
        addr = lib.js_monitor_address()
        if addr:  # RunLog.phase and jobscope.phase in subprocesses started with os.environ reach this monitor
            self._env_old = (True, os.environ.get("JOBSCOPE_SOCKET"))
            os.environ["JOBSCOPE_SOCKET"] = addr.decode()
        self._dir, self._recording, self._interval = output_dir, recording, interval

    def stop(self) -> tuple[Path | None, Path | None, Path | None]:
        """Stop sampling; write and return (gpu_csv_path, cpu_csv_path, dmon_csv_path). (None, None, None) when
        the monitor was not started."""
        if self._dir is None:
            return None, None, None
        rc = _lib.lib().js_monitor_stop()
        if self._env_old is not None:
            _, old = self._env_old
            if old is None:
                os.environ.pop("JOBSCOPE_SOCKET", None)
            else:
                os.environ["JOBSCOPE_SOCKET"] = old
            self._env_old = None
        out, recording, interval = self._dir, self._recording, self._interval
        self._dir = self._recording = None
        if rc < 0 and rc != -errno.ESRCH and not recording.exists():
            _lib.check(rc, "jobscope monitor")
        return write_hw_files(recording, out, interval)

    @property
    def recording(self):
        """The jobscope recording being written (a Path), while started."""
        return self._recording


@dataclasses.dataclass
class ResourceSummary:
    """Aggregated resource utilization from HWMonitor output files."""

    peak_vram_mb: float = 0.0
    jax_peak_bytes_mb: float = 0.0
    gpu_util_mean_pct: float = 0.0
    gpu_util_max_pct: float = 0.0
    mem_util_mean_pct: float = 0.0
    mem_util_max_pct: float = 0.0
    power_watts_mean: float = 0.0
    power_watts_max: float = 0.0
    cpu_usr_mean_pct: float = 0.0
    cpu_idle_mean_pct: float = 0.0

    def to_dict(self) -> dict[str, float]:
        """The figures rounded to 0.1; jax_peak_bytes_mb only when positive, the memory-controller pair only
        when its mean is positive (as pytyche's)."""
        d = {k: round(getattr(self, k), 1) for k in
             ("peak_vram_mb", "gpu_util_mean_pct", "gpu_util_max_pct", "power_watts_mean", "power_watts_max",
              "cpu_usr_mean_pct", "cpu_idle_mean_pct")}
        if self.jax_peak_bytes_mb > 0:
            d["jax_peak_bytes_mb"] = round(self.jax_peak_bytes_mb, 1)
        if self.mem_util_mean_pct > 0:
            d["mem_util_mean_pct"] = round(self.mem_util_mean_pct, 1)
            d["mem_util_max_pct"] = round(self.mem_util_max_pct, 1)
        return d


def probe_jax_peak_memory_mb() -> float:
    """JAX's peak device memory in use on the first GPU (MB of 2^20 bytes, from XLA's allocator); 0.0 without
    JAX or without a GPU device."""
    try:
        import jax

        devices = [d for d in jax.local_devices() if d.platform == "gpu"]
        if not devices:
            return 0.0
        stats = devices[0].memory_stats()
        if stats is None:
            return 0.0
        return stats.get("peak_bytes_in_use", 0) / MiB
    except Exception:
        return 0.0


def _mean(v):
    return sum(v) / len(v)


def build_resource_summary(gpu_csv_path, cpu_csv_path, dmon_csv_path=None) -> ResourceSummary:
    """Parse HWMonitor's files (or nvidia-smi's own) into a ResourceSummary, as pytyche does: the GPU CSV's
    rows of at least 9 fields (utilisation, memory used, power: mean and max; peak memory), the dmon file's
    memory-controller column (lines starting with # skipped, "-" skipped), the CPU CSV after its header.
    A missing file (or None) leaves its figures at 0."""
    s = ResourceSummary()
    gpu_csv_path = None if gpu_csv_path is None else Path(gpu_csv_path)
    cpu_csv_path = None if cpu_csv_path is None else Path(cpu_csv_path)
    dmon_csv_path = None if dmon_csv_path is None else Path(dmon_csv_path)
    if gpu_csv_path is not None and gpu_csv_path.exists():
        util, used, power = [], [], []
        with open(gpu_csv_path) as f:
            for line in f:
                parts = [p.strip() for p in line.split(",")]
                if len(parts) < 9:
                    continue
                try:
                    u, m, p = float(parts[1]), float(parts[3]), float(parts[5])
                except ValueError:
                    continue
                util.append(u)
                used.append(m)
                power.append(p)
        if util:
            s.gpu_util_mean_pct, s.gpu_util_max_pct = _mean(util), max(util)
            s.peak_vram_mb = max(used)
            s.power_watts_mean, s.power_watts_max = _mean(power), max(power)
    if dmon_csv_path is not None and dmon_csv_path.exists():
        mem = []
        with open(dmon_csv_path) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                parts = line.split()
                if len(parts) < 4:
                    continue
                try:
                    mem.append(float(parts[2]))
                except ValueError:
                    continue
        if mem:
            s.mem_util_mean_pct, s.mem_util_max_pct = _mean(mem), max(mem)
    if cpu_csv_path is not None and cpu_csv_path.exists():
        usr, idle = [], []
        with open(cpu_csv_path) as f:
            f.readline()
            for line in f:
                parts = line.strip().split(",")
                if len(parts) < 3:
                    continue
                try:  # as pytyche: a bad idle field after a good usr field keeps the usr value
                    usr.append(float(parts[1]))
                    idle.append(float(parts[2]))
                except ValueError:
                    continue
        if usr:
            s.cpu_usr_mean_pct = _mean(usr)
        if idle:
            s.cpu_idle_mean_pct = _mean(idle)
    return s
