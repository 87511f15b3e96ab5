# SPDX-License-Identifier: MIT
"""The Python package (python/jobscope) over the built libjobscope.

- Tracker around a real workload (this process burns CPU and holds memory; a child allocates 200 MB and
  burns CPU), against psutil polled from another thread and the kernel's rusage;
- units (RAM and time) and hardware percentages against n_expected_cores;
- per-phase totals that add up to the run's (self totals plus outside);
- RunLog's JSONL against the run monitor's own RunLog (the reference code from its documentation), line for
  line, and its marks inside a monitored run;
- jobscope.read (DataFrames of tree, processes, system, marks, phases) and compare;
- marks inside `jobscope run` from a Python job;
- `pip install ./python` offline into a virtual environment (no compiler, no index).
"""
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import PYTHON, REPO

psutil = pytest.importorskip("psutil")
pd = pytest.importorskip("pandas")

PYDIR = REPO / "python"


def build_dir():
    env = os.environ.get("JOBSCOPE_BUILD")
    return Path(env).resolve() if env else REPO / "build"


LIB = build_dir() / "lib" / "libjobscope.so.0"


@pytest.fixture(scope="module")
def jobscope():
    if not LIB.exists():
        pytest.skip(f"{LIB} not built")
    os.environ["JOBSCOPE_LIBRARY"] = str(LIB)
    sys.path.insert(0, str(PYDIR))
    import jobscope as js

    yield js
    sys.path.remove(str(PYDIR))


def burn(seconds):
    t = time.thread_time()
    x = 0
    while time.thread_time() - t < seconds:
        x += 1
    return x


CHILD = r"""
import time
b = bytearray(200 * 1000 * 1000)
for i in range(0, len(b), 4096):
    b[i] = 1
t = time.thread_time()
while time.thread_time() - t < 0.6:
    pass
time.sleep(0.4)
"""


class Poller(threading.Thread):
    """psutil's view of the tree, every 20 ms: peak RSS, PSS and shared (PSS - USS, smaps) of the main process
    and of its children."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.main = psutil.Process()
        self.peak = {"main_rss": 0, "main_pss": 0, "main_shared": 0, "desc_rss": 0, "desc_pss": 0, "desc_shared": 0}

    def run(self):
        while not self.stop.is_set():
            try:
                mi = self.main.memory_full_info()
                self.peak["main_rss"] = max(self.peak["main_rss"], mi.rss)
                self.peak["main_pss"] = max(self.peak["main_pss"], mi.pss)
                self.peak["main_shared"] = max(self.peak["main_shared"], mi.pss - mi.uss)
                rss = pss = shared = 0
                for c in self.main.children(recursive=True):
                    try:
                        ci = c.memory_full_info()
                        rss += ci.rss
                        pss += ci.pss
                        shared += ci.pss - ci.uss
                    except psutil.Error:
                        pass
                self.peak["desc_rss"] = max(self.peak["desc_rss"], rss)
                self.peak["desc_pss"] = max(self.peak["desc_pss"], pss)
                self.peak["desc_shared"] = max(self.peak["desc_shared"], shared)
            except psutil.Error:
                pass
            self.stop.wait(0.02)


def test_tracker_against_psutil(jobscope, tmp_path, capsys):
    me = psutil.Process()
    poll = Poller()
    poll.start()
    time.sleep(0.1)
    self0, kids0 = me.cpu_times(), resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.monotonic()
    with jobscope.Tracker(interval=0.05, ram_unit="megabytes", time_unit="seconds",
                          output=tmp_path / "t.db") as t:
        w1 = time.monotonic()  # the first sample is taken
        in0 = me.cpu_times()
        b0 = me.cpu_times()
        with t.phase("main-burn"):
            burn(0.4)
        b1 = me.cpu_times()
        with t.phase("child"):
            subprocess.run([PYTHON, "-c", CHILD], check=True)
        in1 = me.cpu_times()
        w2 = time.monotonic()  # the closing sample is still to come
    wall = time.monotonic() - w0
    self1, kids1 = me.cpu_times(), resource.getrusage(resource.RUSAGE_CHILDREN)
    poll.stop.set()
    poll.join()
    s, js = t.summary, t.jobscope_summary
    mon = js["monitor"]["cpu_s"]
    kids = (kids1.ru_utime + kids1.ru_stime) - (kids0.ru_utime + kids0.ru_stime)
    main = (self1.user + self1.system) - (self0.user + self0.system) - mon
    # the process's CPU inside the monitored window only (the poller thread runs outside it too)
    main_inner = (in1.user + in1.system) - (in0.user + in0.system) - mon
    MB = 1e6
    report = {
        "compute_time_s": (s["compute_time"]["time"], wall),
        "cpu_main_s": (s["cpu_time"]["main"], main),
        "cpu_descendants_s": (s["cpu_time"]["descendants"], kids),
        "cpu_combined_s": (s["cpu_time"]["combined"], main + kids),
        "peak_main_pss_MB": (s["max_ram"]["main"]["total_rss"], poll.peak["main_pss"] / MB),
        "peak_main_shared_MB": (s["max_ram"]["main"]["shared_rss"], poll.peak["main_shared"] / MB),
        "peak_desc_pss_MB": (s["max_ram"]["descendants"]["total_rss"], poll.peak["desc_pss"] / MB),
        "peak_desc_shared_MB": (s["max_ram"]["descendants"]["shared_rss"], poll.peak["desc_shared"] / MB),
        "monitor_thread_cpu_s": (mon, None),
    }
    with capsys.disabled():
        print("\n  Tracker vs psutil/rusage (jobscope, oracle):")
        for k, (a, b) in report.items():
            print(f"    {k:24s} {a:10.3f}  {'' if b is None else f'{b:10.3f}'}")
    # CPU: exact totals, against the kernel's (a clock tick of rounding per process, start/stop outside)
    assert s["cpu_time"]["descendants"] == pytest.approx(kids, abs=0.03)
    # the monitored window (first to closing sample) lies between the inner and the outer measurement; a
    # clock tick of rounding either way
    assert main_inner - 0.02 <= s["cpu_time"]["main"] <= main + 0.02
    assert s["cpu_time"]["main"] > 0.3 and s["cpu_time"]["descendants"] > 0.5
    assert s["cpu_time"]["combined"] == pytest.approx(js["cpu"]["total_s"], abs=1e-9)
    # memory, no page counted twice (PSS: smaps_rollup of every process at once, against psutil's smaps): both
    # sample the same plateaus (the child holds 200 MB for 0.4 s)
    assert s["max_ram"]["descendants"]["total_rss"] == pytest.approx(poll.peak["desc_pss"] / MB, rel=0.05)
    assert s["max_ram"]["descendants"]["total_rss"] > 200
    assert s["max_ram"]["main"]["total_rss"] == pytest.approx(poll.peak["main_pss"] / MB, rel=0.1)
    assert s["max_ram"]["main"]["total_rss"] <= poll.peak["main_rss"] / MB * 1.02  # PSS is at most RSS
    # shared pages (PSS - USS) are a small figure that moves at fork and exec: both sample it, at different
    # instants (jobscope only when it reads every process at once)
    assert s["max_ram"]["descendants"]["shared_rss"] <= max(poll.peak["desc_shared"] / MB, 1) * 3
    assert s["max_ram"]["descendants"]["shared_rss"] <= s["max_ram"]["descendants"]["total_rss"]
    for who in ("main", "descendants", "combined"):
        r = s["max_ram"][who]
        assert r["private_rss"] <= r["total_rss"] and r["shared_rss"] <= r["total_rss"]
    assert s["max_ram"]["combined"]["total_rss"] >= s["max_ram"]["descendants"]["total_rss"]
    assert s["max_ram"]["system_capacity"] == pytest.approx(psutil.virtual_memory().total / MB, rel=0.01)
    assert w2 - w1 <= s["compute_time"]["time"] <= wall
    assert s["cpu_utilization"]["main_n_threads"] >= 2  # the poller thread (not the monitor's: not the job's)
    cu = s["cpu_utilization"]
    assert cu["system_core_count"] == psutil.cpu_count()
    assert cu["combined"]["max_sum_percent"] >= cu["combined"]["mean_sum_percent"] > 0
    # str(t) is gpu_tracker's layout
    text = str(t)
    for label in ("Max RAM:", "   Unit: megabytes", "      Total RSS:", "Max GPU RAM:", "CPU utilization:",
                  "   Main number of threads:", "GPU utilization:", "Compute time:", "   Unit: seconds"):
        assert label in text, label
    # the phases, in the units asked for
    ph = t.phases
    # the phase holds the burn and whatever else the process did meanwhile (the poller, the monitor thread):
    # at most the process's CPU over the block, with a sample interval of the neighbours at each edge
    burn_block = (b1.user + b1.system) - (b0.user + b0.system)
    assert 0.4 - 0.05 <= ph["main-burn"]["cpu_time"] <= burn_block + 0.1
    assert ph["child"]["cpu_time"] >= kids - 0.05
    assert ph["child"]["peak_ram"] > 200
    # the recording it wrote reads back with the same totals
    rec = jobscope.read(tmp_path / "t.db")
    assert rec.summary["cpu"]["total_s"] == pytest.approx(js["cpu"]["total_s"], abs=1e-9)
    assert rec.summary["mode"] == "embedded"


QUIET = r"""
import json, os, sys, time
import jobscope
with jobscope.Tracker(interval=0.02, output=sys.argv[1]) as t:
    time.sleep(1.5)
print(json.dumps({"io": t.jobscope_summary["io"], "samples": t.jobscope_summary["samples"]["taken"],
                  "threads": t.summary["cpu_utilization"]["main_n_threads"]}))
"""


def test_tracker_counts_the_job_not_its_monitor(jobscope, tmp_path):
    """Issue 19: a Tracker recording to a file around a sleep: ~0 bytes written (the recording's writes are
    the monitor thread's), and one thread in a single-threaded program (the monitor's is not the job's)."""
    env = dict(os.environ, PYTHONPATH=str(PYDIR), JOBSCOPE_LIBRARY=str(LIB))
    out = subprocess.run([PYTHON, "-c", QUIET, str(tmp_path / "quiet.db")], capture_output=True, text=True,
                         env=env, timeout=120, check=True)
    r = json.loads(out.stdout)
    assert r["samples"] >= 20, r  # the recording got tens of KiB meanwhile
    assert r["io"]["write_chars"] < 1024 and r["io"]["write_bytes"] < 64 * 1024, r
    assert r["threads"] == 1, r


def test_units_and_percentages(jobscope):
    from jobscope.tracker import figures

    s = {"wall_time_s": 7200.0,
         "split": {"memory": {"main": {"peak_rss_bytes": 3e9, "peak_private_bytes": 2e9, "peak_shared_bytes": 1e9},
                              "descendants": {"peak_rss_bytes": 5e8, "peak_private_bytes": 4e8,
                                              "peak_shared_bytes": 1e8},
                              "combined": {"peak_rss_bytes": 3.5e9, "peak_private_bytes": 2.4e9,
                                           "peak_shared_bytes": 1.1e9},
                              "system_peak_used_bytes": 8e9, "system_total_bytes": 16e9},
                   "cpu": {"main": {"cpu_s": 3600, "mean_cores": 0.5, "max_cores": 1.0},
                           "descendants": {"cpu_s": 7200, "mean_cores": 1.0, "max_cores": 3.0},
                           "combined": {"cpu_s": 10800, "mean_cores": 1.5, "max_cores": 4.0},
                           "system": {"cores": 8, "mean_cores": 2.0, "max_cores": 6.0}},
                   "threads": {"main": 3, "descendants": 8, "combined": 11}}}
    g = figures(s, "gigabytes", "megabytes", "hours")
    assert g["max_ram"]["main"] == {"total_rss": 3.0, "private_rss": 2.0, "shared_rss": 1.0}
    assert g["max_ram"]["system_capacity"] == 16.0
    assert g["compute_time"] == {"unit": "hours", "time": 2.0}
    assert g["cpu_time"]["combined"] == 3.0
    c = g["cpu_utilization"]
    assert c["n_expected_cores"] == 8 and c["system_core_count"] == 8
    assert c["combined"] == {"max_sum_percent": 400.0, "max_hardware_percent": 50.0, "mean_sum_percent": 150.0,
                             "mean_hardware_percent": 18.75}
    assert c["system"]["max_hardware_percent"] == 75.0
    assert c["combined_n_threads"] == 11
    m = figures(s, "megabytes", "kilobytes", "minutes", n_expected_cores=2)
    assert m["max_ram"]["descendants"]["total_rss"] == 500.0
    assert m["compute_time"]["time"] == 120.0
    assert m["cpu_utilization"]["combined"]["max_hardware_percent"] == 200.0  # 4 cores busy of 2 expected
    assert m["cpu_utilization"]["system"]["max_hardware_percent"] == 75.0    # the system: always every core
    assert m["max_gpu_ram"]["combined"] == 0.0 and m["gpu_utilization"]["system_gpu_count"] == 0
    # the layout of the gpu part's summary (src/model/part_gpu.c, docs/METRICS.md)
    s["gpu"] = {"devices": [{"index": 0, "memory_total_bytes": 80e9}, {"index": 1, "memory_total_bytes": 80e9}],
                "job": {"peak_memory_used_bytes": 50e9,
                        "peak_memory_bytes": {"main": 10e9, "descendants": 30e9, "combined": 40e9},
                        "utilization_sum": {"mean": 0.5, "max": 1.5}}}
    gg = figures(s, "gigabytes", "gigabytes", "hours", gpu_uuids={"GPU-a"})
    assert gg["max_gpu_ram"] == {"unit": "gigabytes", "system_capacity": 160.0, "system": 50.0, "main": 10.0,
                                 "descendants": 30.0, "combined": 40.0}
    assert gg["gpu_utilization"]["system_gpu_count"] == 2 and gg["gpu_utilization"]["n_expected_gpus"] == 1
    assert gg["gpu_utilization"]["gpu_percentages"]["max_hardware_percent"] == 150.0
    b = figures(s, "bytes", "bytes", "days")
    assert b["max_ram"]["combined"]["total_rss"] == 3.5e9
    # with smaps figures: total is PSS (private + shared), and the combined one jobscope's memory headline
    s["split"]["memory"]["main"]["peak_pss_bytes"] = 2.9e9
    s["memory"] = {"peak_bytes": 3.2e9}
    b = figures(s, "bytes", "bytes", "days")
    assert b["max_ram"]["main"]["total_rss"] == 2.9e9 and b["max_ram"]["combined"]["total_rss"] == 3.2e9
    assert b["compute_time"]["time"] == pytest.approx(1 / 12)
    with pytest.raises(ValueError):
        jobscope.Tracker(ram_unit="gibibytes")
    with pytest.raises(ValueError):
        jobscope.Tracker(time_unit="fortnights")
    with pytest.raises(ValueError):
        jobscope.Tracker(interval=0.001)


def test_phase_totals_add_up(jobscope):
    with jobscope.Tracker(interval=0.05, time_unit="seconds") as t:
        burn(0.1)
        with t.phase("outer"):
            burn(0.15)
            with t.phase("inner"):
                burn(0.2)
            subprocess.run([PYTHON, "-c", "import time\nt=time.thread_time()\nwhile time.thread_time()-t<0.2: "
                                          "pass"], check=True)
        t.event("checkpoint", step=10)
        burn(0.05)
    s = t.jobscope_summary["phases"]
    names = {p["name"]: p for p in s["phases"]}
    cpu = sum(p["self"]["cpu_s"] for p in s["phases"]) + s["outside"]["cpu_s"]
    wall = sum(p["self"]["wall_s"] for p in s["phases"]) + s["outside"]["wall_s"]
    assert cpu == pytest.approx(t.jobscope_summary["cpu"]["total_s"], abs=1e-6)
    assert wall == pytest.approx(s["run"]["wall_s"], abs=1e-6)
    assert names["outer"]["cpu_s"] >= names["inner"]["cpu_s"] + 0.3  # inclusive of inner and the child
    assert names["outer"]["self"]["cpu_s"] == pytest.approx(names["outer"]["cpu_s"] - names["inner"]["cpu_s"],
                                                            abs=1e-6)
    assert s["events"][0]["name"] == "checkpoint" and s["events"][0]["last_data"] == {"step": 10}
    ph = t.phases
    assert set(ph) == {"outer", "inner", "(outside)"}


# The run monitor's RunLog, from its documentation (the seed file 001): the reference for the format.
class ReferenceRunLog:
    def __init__(self, now):
        self._entries = []
        self._now = now

    def log_phase(self, name, seconds, **extra):
        entry = {"ts": self._now(), "type": "phase", "name": name, "seconds": round(seconds, 3)}
        entry.update(extra)
        self._entries.append(entry)

    def log_event(self, event_type, data=None):
        entry = {"ts": self._now(), "type": "event", "event": event_type}
        if data:
            entry["data"] = data
        self._entries.append(entry)

    def write(self, path):
        with open(path, "w") as f:
            for entry in self._entries:
                f.write(json.dumps(entry, default=str) + "\n")


def test_runlog_matches_run_monitor(jobscope, tmp_path, monkeypatch):
    from jobscope import runlog

    ts = iter(["2024-05-01T10:00:00.%03d+00:00" % i for i in range(100)])
    stamps = list(ts)
    ours_ts, ref_ts = iter(stamps), iter(stamps)
    monkeypatch.setattr(runlog, "_now_iso", lambda: next(ours_ts))
    ours, ref = jobscope.RunLog(send_marks=False), ReferenceRunLog(lambda: next(ref_ts))
    calls = [
        ("log_event", ("start",), {}),
        ("log_event", ("config", {"chains": 4, "seed": 1, "path": Path("/tmp/x")}), {}),
        ("log_phase", ("compile", 12.34567), {}),
        ("log_phase", ("fit", 0.0004), {"chains": 4, "device": "gpu", "loss": 1.5e-3}),
        ("log_event", ("empty", {}), {}),
        ("log_event", ("none", None), {}),
        ("log_phase", ("unicode é", 1), {"note": "ü\n\"quoted\""}),
        ("log_event", ("error", {"message": "boom", "nested": {"a": [1, 2, None]}}), {}),
    ]
    for fn, args, kw in calls:
        getattr(ours, fn)(*args, **kw)
        getattr(ref, fn)(*args, **kw)
    ours.write(tmp_path / "ours.jsonl")
    ref.write(tmp_path / "ref.jsonl")
    a = (tmp_path / "ours.jsonl").read_text().splitlines()
    b = (tmp_path / "ref.jsonl").read_text().splitlines()
    assert len(a) == len(calls)
    assert a == b
    # streaming to a file as entries come (tail -f) writes the same lines
    monkeypatch.setattr(runlog, "_now_iso", lambda: "2024-05-01T10:00:00.000+00:00")
    stream = jobscope.RunLog(path=tmp_path / "stream.jsonl", send_marks=False)
    stream.log_phase("x", 1.23456, k=1)
    assert (tmp_path / "stream.jsonl").read_text() == \
        '{"ts": "2024-05-01T10:00:00.000+00:00", "type": "phase", "name": "x", "seconds": 1.235, "k": 1}\n'
    # the real timestamp has the run monitor's shape
    monkeypatch.undo()
    import re

    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", runlog._now_iso())


def test_runlog_marks_in_a_tracker(jobscope):
    log = jobscope.RunLog()
    with jobscope.Tracker(interval=0.05) as t:
        log.log_event("start", {"run": 1})
        with log.phase("fit", chains=2):
            burn(0.1)
        log.log_phase("compile", 2.5, backend="xla")
    ph = t.jobscope_summary["phases"]
    assert [p["name"] for p in ph["phases"]] == ["fit"]
    ev = {e["name"]: e for e in ph["events"]}
    assert ev["start"]["last_data"] == {"run": 1}
    assert ev["compile"]["last_data"] == {"type": "phase", "seconds": 2.5, "backend": "xla"}
    lines = log.entries
    assert [e["type"] for e in lines] == ["event", "phase", "phase"]
    assert lines[1]["name"] == "fit" and lines[1]["chains"] == 2 and lines[1]["seconds"] >= 0.1


def test_read_and_compare(jobscope, js, tmp_path):
    script = tmp_path / "job.py"
    script.write_text(f"""
import sys, time
sys.path.insert(0, {str(PYDIR)!r})
import jobscope
with jobscope.phase("solve"):
    t = time.thread_time()
    while time.thread_time() - t < {{secs}}:
        pass
jobscope.event("done", ok=True)
""")
    runs = []
    for secs in (0.2, 0.5):
        body = script.read_text().replace("{secs}", str(secs))
        p = tmp_path / f"job{secs}.py"
        p.write_text(body)
        os.environ["JOBSCOPE_LIBRARY"] = str(LIB)
        r = js.run([PYTHON, str(p)], interval="50ms", name=f"r{secs}")
        assert r.returncode == 0, r.proc.stderr
        runs.append(r)
    rec = jobscope.read(runs[1].recording)
    assert list(rec.tree.columns[:4]) == ["time", "unix_s", "sample", "dt_s"]
    assert len(rec.tree) == rec.summary["samples"]["taken"]
    assert {"pid", "rss_bytes", "cpu_cores"} <= set(rec.processes.columns)
    assert "cpu_util_fraction" in rec.system.columns
    assert rec.gpus.empty  # no GPU view in this build
    m = rec.marks
    assert list(m["kind"]) == ["begin", "end", "event"] and list(m["name"]) == ["solve", "solve", "done"]
    last = rec.phases[rec.phases["sample"] == rec.phases["sample"].max()].set_index("phase")
    assert last.loc["solve", "cpu_s"] == pytest.approx(0.5, abs=0.15)
    assert rec.meta["mode"] == "run"
    c = jobscope.compare(runs[0].recording, runs[1].recording, labels=("short", "long"))
    assert c.loc["phase solve: CPU (s)", "long"] > c.loc["phase solve: CPU (s)", "short"]
    assert c.loc["phase solve: CPU (s)", "difference"] == pytest.approx(0.3, abs=0.15)
    assert c.loc["CPU time (s)", "ratio"] > 1.3
    assert "peak memory (bytes)" in c.index


def test_marks_outside_any_monitor(jobscope):
    os.environ.pop("JOBSCOPE_SOCKET", None)
    assert jobscope.begin("x") == 0 and jobscope.end("x") == 0
    assert jobscope.event("e", a=1) == 0
    with pytest.raises(ValueError):
        jobscope.begin("")
    with pytest.raises(ValueError):
        jobscope.event("big", data="x" * 5000)


def test_pip_install_offline(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", CC="false", CXX="false")
    p = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-cache-dir", str(PYDIR)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    out = subprocess.run([str(venv / "bin" / "python"), "-c",
                          "import jobscope, sys; print(jobscope.library_version()); print(jobscope.__file__)"],
                         env=dict(os.environ, JOBSCOPE_LIBRARY=str(LIB)), capture_output=True, text=True,
                         cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    version, where = out.stdout.split()
    assert version == "0.1.0"
    assert str(venv) in where  # the installed copy, not the source tree
