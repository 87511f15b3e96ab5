# SPDX-License-Identifier: MIT
"""pytyche's run monitor on jobscope.run_monitor (issue 21):

- HWMonitor with the fake NVML: the three files and their columns (nvidia-smi --query-gpu CSV, nvidia-smi dmon
  -s mu, the /proc/stat CPU CSV), every GPU value as the scenario sets it, the CPU user share against
  /proc/stat read by the test over the same window, no nvidia-smi process and no thread but the monitor's;
- without a GPU: the GPU files exist with no rows (dmon: its two header lines);
- build_resource_summary on jobscope's files and on nvidia-smi's formats (tests/fixtures/nvidia-smi);
- ResourceSummary.to_dict, probe_jax_peak_memory_mb without JAX, RunLog being jobscope's;
- an example script written for pytyche, unchanged under the shim and with its import line changed.
"""
import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from conftest import PYTHON, REPO

PYDIR = REPO / "python"
BUILD = Path(os.environ.get("JOBSCOPE_BUILD", REPO / "build")).resolve()
LIB = BUILD / "lib" / "libjobscope.so.0"
FAKE_NVML = BUILD / "tests" / "fakes" / "nvml" / "libnvidia-ml.so.1"
FIX = REPO / "tests" / "fixtures" / "nvidia-smi"
GiB_MiB = 1024


@pytest.fixture(scope="module")
def rm():
    if not LIB.exists():
        pytest.skip(f"{LIB} not built")
    os.environ["JOBSCOPE_LIBRARY"] = str(LIB)
    sys.path.insert(0, str(PYDIR))
    import jobscope.run_monitor as m

    yield m
    sys.path.remove(str(PYDIR))


def env(**extra):
    e = dict(os.environ, JOBSCOPE_LIBRARY=str(LIB), PYTHONPATH=str(PYDIR))
    for v in ("JOBSCOPE_SOCKET", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"):
        e.pop(v, None)
    e.update(extra)
    return e


SCENARIO = """
device 0
uuid GPU-11111111-2222-3333-4444-555555555555
memory_total 80GiB
bar1_total 128GiB
value gpu_util_pct 90
value mem_util_pct 40
value mem_used_bytes 30GiB
value bar1_used_bytes 18MiB
value power_mw 250125
value temp_c 65
value clock_sm_mhz 1410
value clock_mem_mhz 2619
value encoder_pct 3
value decoder_pct 4
device 1
uuid GPU-66666666-7777-8888-9999-000000000000
memory_total 40GiB
value gpu_util_pct 10
value mem_util_pct 5
value mem_used_bytes 20GiB
value power_mw 100000
value temp_c 40
value clock_sm_mhz 345
value clock_mem_mhz 1593
"""

HW_JOB = r"""
import json, os, sys, threading, time
from pathlib import Path
import psutil
from jobscope.run_monitor import HWMonitor

def proc_stat():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v[0] + v[1], v[3], sum(v[:8])   # user + nice, idle, total without guest

out = Path(sys.argv[1])
hw = HWMonitor()
a = proc_stat()
hw.start(out, interval_sec=0.2)
t = time.thread_time()
while time.thread_time() - t < 0.6:
    pass
me = psutil.Process()
facts = {"children": [c.name() for c in me.children(recursive=True)], "threads": me.num_threads(),
         "python_threads": threading.active_count()}
time.sleep(0.6)
paths = hw.stop()
b = proc_stat()
facts["usr_oracle"] = 100.0 * (b[0] - a[0]) / (b[2] - a[2])
facts["paths"] = [str(p) for p in paths]
print(json.dumps(facts))
"""


def run_hw(tmp_path, **extra):
    p = subprocess.run([PYTHON, "-c", HW_JOB, str(tmp_path / "out")], env=env(**extra), capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.splitlines()[-1])


@pytest.mark.skipif(not FAKE_NVML.exists(), reason="fake NVML not built")
def test_hwmonitor_files_with_fake_nvml(rm, tmp_path):
    (tmp_path / "nvml.scn").write_text(SCENARIO)
    facts = run_hw(tmp_path, JOBSCOPE_NVML_LIBRARY=str(FAKE_NVML), FAKE_NVML_SCENARIO=str(tmp_path / "nvml.scn"))
    out = tmp_path / "out"
    gpu, cpu, dmon = (Path(p) for p in facts["paths"])
    assert (gpu, cpu, dmon) == (out / "hw_metrics.csv", out / "cpu_metrics.csv", out / "hw_dmon.csv")
    # no nvidia-smi, no sampling thread of ours: the process's threads are its own and the monitor's
    assert facts["children"] == [] and facts["python_threads"] == 1 and facts["threads"] == 2
    # nvidia-smi --query-gpu ... --format=csv,nounits,noheader: a line per GPU per sample, 9 fields
    lines = gpu.read_text().splitlines()
    assert len(lines) >= 2 * 5 and len(lines) % 2 == 0
    rows = [[f.strip() for f in line.split(",")] for line in lines]
    assert all(len(r) == 9 for r in rows)
    for r in rows:
        datetime.strptime(r[0], "%Y/%m/%d %H:%M:%S.%f")
    assert rows[0][1:] == ["90", "40", str(30 * GiB_MiB), str(80 * GiB_MiB), "250.12", "65", "1410", "2619"]
    assert rows[1][1:] == ["10", "5", str(20 * GiB_MiB), str(40 * GiB_MiB), "100.00", "40", "345", "1593"]
    # nvidia-smi dmon -s mu
    d = dmon.read_text().splitlines()
    assert d[0].split() == ["#", "gpu", "sm", "mem", "enc", "dec", "fb", "bar1"]
    assert d[1].split() == ["#", "Idx", "%", "%", "%", "%", "MB", "MB"]
    assert d[2].split() == ["0", "90", "40", "3", "4", str(30 * GiB_MiB), "18"]
    assert d[3].split() == ["1", "10", "5", "-", "-", str(20 * GiB_MiB), "-"]
    assert len(d) == 2 + len(lines)
    # the CPU file: pytyche's header and rows, one per interval
    c = cpu.read_text().splitlines()
    assert c[0] == "timestamp,usr_pct,idle_pct"
    assert len(c) - 1 >= 4
    for line in c[1:]:
        ts, usr, idle = line.split(",")
        assert datetime.fromisoformat(ts).utcoffset().total_seconds() == 0
        assert 0 <= float(usr) <= 100 and 0 <= float(idle) <= 100 and len(usr.split(".")[1]) == 1
    s = rm.build_resource_summary(gpu, cpu, dmon)
    mean_usr = sum(float(x.split(",")[1]) for x in c[1:]) / (len(c) - 1)
    print(f"HWMonitor: CPU user mean {mean_usr:.1f} % vs /proc/stat over the window {facts['usr_oracle']:.1f} %")
    assert s.gpu_util_mean_pct == pytest.approx(50) and s.gpu_util_max_pct == 90
    assert s.peak_vram_mb == 30 * GiB_MiB
    assert s.power_watts_mean == pytest.approx((250.12 + 100) / 2) and s.power_watts_max == pytest.approx(250.12)
    assert s.mem_util_mean_pct == pytest.approx(22.5) and s.mem_util_max_pct == 40
    assert s.cpu_usr_mean_pct == pytest.approx(mean_usr)
    assert s.cpu_usr_mean_pct == pytest.approx(facts["usr_oracle"], abs=10)
    assert s.to_dict()["mem_util_mean_pct"] == 22.5 and "jax_peak_bytes_mb" not in s.to_dict()
    assert (out / "hw_monitor.jobscope.db").exists()  # the recording the files come from


def test_hwmonitor_without_gpu(rm, tmp_path):
    facts = run_hw(tmp_path, JOBSCOPE_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1",
                   JOBSCOPE_ROCM_SMI_LIBRARY="/nonexistent/librocm_smi64.so.1")
    gpu, cpu, dmon = (Path(p) for p in facts["paths"])
    assert gpu.read_text() == ""
    assert len(dmon.read_text().splitlines()) == 2 and dmon.read_text().startswith("# gpu")
    assert len(cpu.read_text().splitlines()) >= 5
    s = rm.build_resource_summary(gpu, cpu, dmon)
    assert (s.peak_vram_mb, s.gpu_util_mean_pct, s.power_watts_max, s.mem_util_mean_pct) == (0, 0, 0, 0)
    assert s.cpu_usr_mean_pct > 0
    assert set(s.to_dict()) == {"peak_vram_mb", "gpu_util_mean_pct", "gpu_util_max_pct", "power_watts_mean",
                                "power_watts_max", "cpu_usr_mean_pct", "cpu_idle_mean_pct"}


def test_build_resource_summary_on_nvidia_smi_formats(rm, tmp_path):
    s = rm.build_resource_summary(FIX / "query-gpu.csv", None, FIX / "dmon-mu.txt")
    assert s.gpu_util_mean_pct == pytest.approx(59.0) and s.gpu_util_max_pct == 98
    assert s.peak_vram_mb == 73420
    assert s.power_watts_mean == pytest.approx(434.396) and s.power_watts_max == 690.0
    assert s.mem_util_mean_pct == pytest.approx(86 / 3) and s.mem_util_max_pct == 44
    assert s.cpu_usr_mean_pct == 0 and s.cpu_idle_mean_pct == 0
    s = rm.build_resource_summary(str(FIX / "query-gpu.csv"), str(tmp_path / "missing.csv"),
                                  str(FIX / "dmon-mu-jpg-ofa-ccpm.txt"))
    assert s.mem_util_mean_pct == pytest.approx(42.5) and s.mem_util_max_pct == 44
    (tmp_path / "cpu.csv").write_text("timestamp,usr_pct,idle_pct\nt,10.0,80.0\nt,30.0,x\nbad\nt,20.0,60.0\n")
    s = rm.build_resource_summary(None, tmp_path / "cpu.csv")
    assert s.cpu_usr_mean_pct == pytest.approx(20.0) and s.cpu_idle_mean_pct == pytest.approx(70.0)
    assert s.to_dict() == {"peak_vram_mb": 0.0, "gpu_util_mean_pct": 0.0, "gpu_util_max_pct": 0.0,
                           "power_watts_mean": 0.0, "power_watts_max": 0.0, "cpu_usr_mean_pct": 20.0,
                           "cpu_idle_mean_pct": 70.0}
    assert rm.ResourceSummary(jax_peak_bytes_mb=12.345).to_dict()["jax_peak_bytes_mb"] == 12.3


def test_probe_jax_and_runlog(rm, tmp_path):
    try:
        import jax  # noqa: F401
        pytest.skip("JAX is installed")
    except ImportError:
        pass
    assert rm.probe_jax_peak_memory_mb() == 0.0
    import jobscope.runlog

    assert rm.RunLog is jobscope.runlog.RunLog
    log = rm.RunLog()
    log.log_event("start", {"chains": 4})
    log.log_phase("fit", 1.23456, backend="cpu")
    log.write(tmp_path / "run.jsonl")
    a, b = [json.loads(x) for x in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert list(a) == ["ts", "type", "event", "data"] and a["ts"].endswith("+00:00")
    assert b == {"ts": b["ts"], "type": "phase", "name": "fit", "seconds": 1.235, "backend": "cpu"}


def test_hwmonitor_misuse(rm, tmp_path):
    hw = rm.HWMonitor()
    assert hw.stop() == (None, None, None)
    with pytest.raises(ValueError):
        hw.start(tmp_path, interval_sec=0)
    import jobscope.gpu_tracker as g

    with g.Tracker(sleep_time=0.1, disable_logs=True):
        with pytest.raises(RuntimeError, match="one at a time"):
            hw.start(tmp_path / "x", interval_sec=1)


EXAMPLE = """{import_line}
import json, subprocess, sys, time
from pathlib import Path

out = Path("calib")
log = RunLog()
hw = HWMonitor()
hw.start(out, interval_sec=1)
log.log_event("start", {{"n_chains": 2}})
t0 = time.perf_counter()
x = time.thread_time()
while time.thread_time() - x < 1.2:
    pass
log.log_phase("warmup", time.perf_counter() - t0, n_steps=100)
gpu_csv, cpu_csv, dmon_csv = hw.stop()
summary = build_resource_summary(gpu_csv, cpu_csv, dmon_csv)
summary.jax_peak_bytes_mb = probe_jax_peak_memory_mb()
log.log_event("resources", summary.to_dict())
log.write(out / "run.jsonl")
print(json.dumps(summary.to_dict()))
"""


@pytest.mark.parametrize("how", ["shim", "import-line"])
def test_pytyche_example_runs(rm, tmp_path, how):
    imports = "HWMonitor, RunLog, ResourceSummary, build_resource_summary, probe_jax_peak_memory_mb"
    module = "pytyche.diagnostics.run_monitor" if how == "shim" else "jobscope.run_monitor"
    script = tmp_path / "calibrate.py"
    script.write_text(EXAMPLE.format(import_line=f"from {module} import {imports}"))
    cmd = [PYTHON, "-m", "jobscope.compat", str(script)] if how == "shim" else [PYTHON, str(script)]
    p = subprocess.run(cmd, cwd=tmp_path, env=env(JOBSCOPE_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1"),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout.splitlines()[-1])
    assert d["cpu_usr_mean_pct"] > 10 and d["peak_vram_mb"] == 0.0
    lines = [json.loads(x) for x in (tmp_path / "calib" / "run.jsonl").read_text().splitlines()]
    assert [x.get("event", x.get("name")) for x in lines] == ["start", "warmup", "resources"]
    assert lines[2]["data"] == d
    assert sorted(os.listdir(tmp_path / "calib")) == ["cpu_metrics.csv", "hw_dmon.csv", "hw_metrics.csv",
                                                      "hw_monitor.jobscope.db", "run.jsonl"]
