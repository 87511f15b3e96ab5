# SPDX-License-Identifier: MIT
"""GPU monitoring end to end (issue 9), through `jobscope run` and `jobscope attach` with the fake NVML and
ROCm SMI libraries (tests/fakes; no GPU is needed, and none is lent to this project's CI): every metric of
the summary's `gpu` section and of the `gpu`, `gpu_process` and `gpu_mig` exports, the attribution of GPU
memory and utilisation to the monitored tree (a Python job and its child, whose PIDs the fake lists beside
foreign ones), energy from the device's counter (and across a driver reload, when the counter goes
backwards), NOT_SUPPORTED metrics and missing entry points (the old-ABI fake), a GPU lost mid-run, no
library at all, and the selection (--gpus, CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, an attached
process's environment). The fakes' scenarios run on the monotonic clock at real speed, with constant
readings, so each figure has an exact expected value.
"""
import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import PYTHON, REPO, WORKLOADS, assert_no_crash, read_pidfile, stderr_lines, wait_for

GiB = 1024**3
BUILD = Path(os.environ.get("JOBSCOPE_BUILD", REPO / "build")).resolve()
FAKE_NVML = Path(os.environ.get("JOBSCOPE_FAKE_NVML_DIR", BUILD / "tests" / "fakes" / "nvml")).resolve() / "libnvidia-ml.so.1"
FAKE_NVML_OLD = (
    Path(os.environ.get("JOBSCOPE_FAKE_NVML_OLD_DIR", BUILD / "tests" / "fakes" / "nvml-old")) / "libnvidia-ml.so.1"
)
FAKE_ROCM = (
    Path(os.environ.get("JOBSCOPE_FAKE_ROCM_DIR", BUILD / "tests" / "fakes" / "rocm")) / "librocm_smi64.so.1"
)
KFD_SYSFS = REPO / "tests" / "fixtures" / "gpu" / "sys"
UUID0 = "GPU-11111111-2222-3333-4444-555555555555"
UUID1 = "GPU-66666666-7777-8888-9999-000000000000"

pytestmark = pytest.mark.skipif(not FAKE_NVML.exists(), reason=f"fake NVML not built ({FAKE_NVML})")


def nvml_scenario(d, extra0="", extra1=""):
    """Two GPUs; the job's PIDs come from the files the workload writes; 4711 and 4712 are foreign."""
    main, child = d / "main.pid", d / "child.pid"
    text = f"""
driver_version 550.90.07
nvml_version 12.550.90.07
cuda_version 12040
device 0
name "NVIDIA H100 80GB HBM3"
uuid {UUID0}
pci 00000000:19:00.0
memory_total 80GiB
bar1_total 128GiB
value gpu_util_pct 90
value mem_util_pct 40
value mem_used_bytes 30GiB
value mem_reserved_bytes 512MiB
value bar1_used_bytes 18MiB
value power_mw 250000
value power_limit_mw 700000
value temp_c 65
value fan_pct 30
value clock_graphics_mhz 1410
value clock_sm_mhz 1410
value clock_mem_mhz 2619
value clock_video_mhz 1275
value pstate 0
value clocks_event_reasons 0x4
value violation_power_ns linear 0:0 100:50000000000
value violation_thermal_ns 0
value pcie_tx_kbs 1200000
value pcie_rx_kbs 3500000
value pcie_replay_count 0
value ecc_corrected_count linear 0:0 100:1000
value ecc_uncorrected_count 0
value encoder_pct 0
value decoder_pct 0
proc compute file:{main} used 20GiB
proc compute file:{child} used 4GiB
proc compute 4711 used 6GiB
putil file:{main} sm 60 mem 30 enc 0 dec 0 every 0.1
putil file:{child} sm 20 mem 5 enc 0 dec 0 every 0.1
putil 4711 sm 5 mem 1 enc 0 dec 0 every 0.1
{extra0}
device 1
name "NVIDIA H100 80GB HBM3"
uuid {UUID1}
pci 00000000:3B:00.0
memory_total 80GiB
value gpu_util_pct 2
value mem_util_pct 1
value mem_used_bytes 79GiB
value mem_reserved_bytes 512MiB
value power_mw 100000
value power_limit_mw 700000
value temp_c 40
value clocks_event_reasons 0
value violation_power_ns 0
proc compute file:{child} used 10GiB
proc compute 4712 used 60GiB
{extra1}
"""
    path = d / "nvml.scn"
    path.write_text(text)
    return path


@pytest.fixture
def nvml(tmp_path, monkeypatch):
    """The fake NVML with the two-GPU scenario: returns (scenario dir, run helper)."""
    monkeypatch.setenv("JOBSCOPE_NVML_LIBRARY", str(FAKE_NVML))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv("NVIDIA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("FAKE_NVML_SCENARIO", str(nvml_scenario(tmp_path)))
    return tmp_path


def job(d, secs=2.0):
    return [PYTHON, str(WORKLOADS / "gpu_job.py"), str(d / "main.pid"), str(d / "child.pid"), str(secs)]


def export(js, rec, view):
    p = js("export", "--format", "csv", "--scope", view, rec)
    assert p.returncode == 0, p.stderr
    return list(csv.DictReader(io.StringIO(p.stdout)))


def meta(rec):
    con = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
    try:
        return dict(con.execute("SELECT key, value FROM meta"))
    finally:
        con.close()


def query(rec, sql):
    con = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def device(summary, index, vendor="nvidia"):
    for d in summary["gpu"]["devices"]:
        if d["index"] == index and d["vendor"] == vendor:
            return d
    raise AssertionError(f"no {vendor} GPU {index} in {[d['index'] for d in summary['gpu']['devices']]}")


def approx(x, rel=0.02, abs=1e-9):
    return pytest.approx(x, rel=rel, abs=abs)


def counter_energy_j(rec, table, column, gpu, scale):
    """The energy the recording's raw counter gives: the sum of its increases (a decrease, a reload, gives
    none), times `scale` (J per unit): what the summary's energy_j must be, exactly."""
    values = [v for (v,) in query(rec, f"SELECT {column} FROM {table} WHERE gpu = {gpu} AND {column} IS NOT NULL "
                                       "ORDER BY sample")]
    return sum(b - a for a, b in zip(values, values[1:]) if b >= a) * scale


# The covered time comes from the samples' start times, while each counter is read a little later in its
# sample (after the process tree): on a loaded machine the two differ by a few ms, hence 3% on power x time.


# ---- NVIDIA --------------------------------------------------------------------------------------------


def test_nvml_every_figure_and_the_job_share(js, nvml):
    r = js.run(job(nvml, 2.0), interval="0.2s", quiet=False, extra=["--summary=full"])
    assert r.returncode == 0, r.proc.stderr
    s = r.summary
    main_pid, child_pid = read_pidfile(nvml / "main.pid"), read_pidfile(nvml / "child.pid")
    g = s["gpu"]
    d0, d1 = device(s, 0), device(s, 1)
    # identity, from the inventory
    assert d0["name"] == "NVIDIA H100 80GB HBM3" and d0["uuid"] == UUID0
    assert d0["pci_bus_id"] == "00000000:19:00.0" and d1["pci_bus_id"] == "00000000:3B:00.0"
    assert d0["memory_total_bytes"] == 80 * GiB
    # device levels: constant readings, exact means and maxima
    assert d0["utilization"] == {"mean": approx(0.9), "max": approx(0.9)}
    assert d0["memory_utilization"]["mean"] == approx(0.4)
    assert d0["power_w"] == {"mean": approx(250), "max": approx(250)}
    assert d0["power_limit_w"] == approx(700)
    assert d0["temperature_c"]["max"] == 65
    assert d0["clock_sm_mhz"]["mean"] == 1410
    assert d0["peak_memory_bytes"]["device"] == 30 * GiB  # v2: reserved apart
    assert d0["min_free_bytes"] == 80 * GiB - 30 * GiB - 512 * 1024**2
    # energy from the counter: the power times the time it covers
    assert d0["energy_method"] == "counter" and d0["energy_counter_resets"] == 0
    assert d0["energy_covered_s"] > 1.5
    assert d0["energy_j"] == approx(counter_energy_j(r.recording, "nvml_device", "energy_mj", 0, 1e-3), rel=1e-9)
    assert d0["energy_j"] == approx(250 * d0["energy_covered_s"], rel=0.03)
    assert g["job"]["energy_j"] == approx(d0["energy_j"] + d1["energy_j"], rel=1e-9)
    assert d1["energy_j"] == approx(100 * d1["energy_covered_s"], rel=0.03)
    # throttling: SW power cap set all along on GPU 0, nothing on GPU 1; the violation counter: 0.5 s/s
    assert d0["throttled_fraction"] == approx(1.0) and d0["throttled_method"] == "clocks_event_reasons"
    assert d0["throttle_s"]["sw_power_cap"] == approx(d0["energy_covered_s"], rel=0.05)
    assert d0["violation_s"]["power"] == approx(0.5 * d0["energy_covered_s"], rel=0.1)
    assert d1["throttled_fraction"] == 0
    # ECC: 10 corrected errors a second, read at the --status-every cadence
    assert d0["ecc_errors"]["corrected"] > 0 and d0["ecc_errors"]["uncorrected"] == 0
    # the job's share: main 20 GiB on GPU 0; the child 4 GiB on GPU 0 and 10 GiB on GPU 1; 4711, 4712 foreign
    assert d0["peak_memory_bytes"]["job"] == {"main": 20 * GiB, "descendants": 4 * GiB, "combined": 24 * GiB}
    assert d0["peak_memory_bytes"]["others"] == 6 * GiB
    assert d1["peak_memory_bytes"]["job"] == {"main": 0, "descendants": 10 * GiB, "combined": 10 * GiB}
    assert d1["peak_memory_bytes"]["others"] == 60 * GiB
    assert g["job"]["peak_memory_bytes"] == {"main": 20 * GiB, "descendants": 14 * GiB, "combined": 34 * GiB}
    assert g["job"]["attribution"]["method"] == "pid"
    # utilisation: the job's SM share on GPU 0 is 0.6 + 0.2 while both run; 4711's 0.05 is not the job's
    assert d0["job_utilization"]["max"] == approx(0.8)
    assert 0 < d0["job_utilization"]["mean"] <= 0.8 + 1e-9
    # gpu_tracker's figures: the sum over GPUs, and the mean over the GPUs the job uses
    assert g["job"]["utilization_sum"]["max"] == approx(0.92)
    # (GPU 0 alone until the child starts, if a sample falls there: 0.9; both GPUs after: (0.9 + 0.02) / 2)
    assert g["job"]["hardware_fraction"]["max"] in (approx(0.9), approx(0.46))
    assert 0.46 - 1e-9 < g["job"]["hardware_fraction"]["mean"] < 0.9
    assert g["job"]["devices"] == 2 and g["job"]["devices_in_use"] == 2
    # NOT_SUPPORTED: GPU 1 has no fan, kept once with its reason
    assert d1["errors"]["fan"] == "Not Supported (code 3)"
    assert "fan" not in d0["errors"]
    # flags: GPU 0 throttled; GPU 1 near full (79 of 80 GiB) and idle while the job holds memory on it
    kinds = {(f["gpu"], f["kind"]) for f in g["flags"]}
    assert kinds == {(0, "throttled"), (1, "memory_near_full"), (1, "idle_allocated")}
    # the text summary: a line per device and the flags
    text = r.proc.stderr
    assert text.count("NVIDIA H100 80GB HBM3:") == 2
    assert "gpu 0" in text and "gpu 1" in text and "GPU FLAGS" in text

    # the exports
    rows = export(js, r.recording, "gpu")
    n_samples = s["samples"]["taken"]
    assert len(rows) == 2 * n_samples
    last0 = [x for x in rows if x["gpu"] == "0"][-1]
    assert float(last0["util_fraction"]) == approx(0.9)
    assert float(last0["power_w"]) == approx(250)
    assert float(last0["temp_c"]) == 65
    assert float(last0["fan_fraction"]) == approx(0.3)
    assert float(last0["clock_video_mhz"]) == 1275
    assert float(last0["bar1_used_bytes"]) == 18 * 1024**2
    assert float(last0["mem_reserved_bytes"]) == 512 * 1024**2
    assert float(last0["energy_j"]) == approx(d0["energy_j"], rel=1e-9)
    assert last0["throttled"] == "1" and last0["clocks_event_reasons"] == "4"
    assert any(x["pcie_tx_kb_per_s"] == "1200000" for x in rows)
    assert float(last0["ecc_corrected"]) == d0["ecc_errors"]["corrected"]
    procs = export(js, r.recording, "gpu_process")
    by_pid = {}
    for x in procs:
        by_pid.setdefault((x["gpu"], int(x["pid"])), []).append(x)
    # (the sample that first lists the child may come a moment before the tree scan found it: any row)
    assert all(x["job"] == "1" and x["main"] == "1" for x in by_pid[("0", main_pid)])
    assert any(x["job"] == "1" and x["main"] == "0" for x in by_pid[("0", child_pid)])
    assert any(x["job"] == "1" for x in by_pid[("1", child_pid)])
    assert all(x["job"] == "0" for x in by_pid[("0", 4711)] + by_pid[("1", 4712)])
    assert float(by_pid[("0", main_pid)][0]["used_bytes"]) == 20 * GiB
    sm = [float(x["sm_fraction"]) for x in procs if int(x["pid"]) == main_pid and x["sm_fraction"]]
    assert sm and all(v == approx(0.6) for v in sm)
    # the raw tables, and the same summary recomputed from the recording
    assert query(r.recording, "SELECT COUNT(*) FROM nvml_device")[0][0] == 2 * n_samples
    inv = dict(query(r.recording, "SELECT key, value FROM inventory WHERE source = 'nvml'"))
    assert inv["gpu.1.uuid"] == UUID1 and inv["cuda_driver_version"] == "12.4" and inv["selected"] == "0,1"
    again = js.summary_json(r.recording)
    assert again["gpu"]["job"]["peak_memory_bytes"] == g["job"]["peak_memory_bytes"]
    assert device(again, 0)["energy_j"] == approx(d0["energy_j"], rel=1e-12)


def test_job_gpu_energy_is_the_devices_it_used(js, nvml):
    """gpu.job.energy_j is summed once, over the devices the job used: a job that never touches a GPU while
    other processes use both has 0 J of GPU energy (it had 626 J with devices_in_use 0 on this scenario),
    and the text, the report's compare and the JSON say the same figure."""
    r = js.run(["sleep", "1"], interval="0.2s", quiet=False)
    assert r.returncode == 0, r.proc.stderr
    g = r.summary["gpu"]
    devices = g["devices"]
    assert len(devices) == 2 and all(d["energy_j"] > 0 for d in devices)
    assert g["job"]["devices_in_use"] == 0
    assert g["job"]["energy_j"] == 0
    assert g["job"]["energy_method"].startswith("the devices the job used")
    assert "energy 0.0 J" in r.proc.stderr
    # a job that uses both GPUs: all of their energy, each device's once
    r2 = js.run(job(nvml, 1.0), interval="0.2s")
    g2 = r2.summary["gpu"]
    assert g2["job"]["devices_in_use"] == 2
    assert g2["job"]["energy_j"] == approx(sum(d["energy_j"] for d in g2["devices"]), rel=1e-9)


def test_energy_across_a_driver_reload(js, tmp_path, monkeypatch):
    monkeypatch.setenv("JOBSCOPE_NVML_LIBRARY", str(FAKE_NVML))
    monkeypatch.setenv("FAKE_NVML_SCENARIO", str(nvml_scenario(tmp_path, extra0="energy_start 5000000\nreload 1.0")))
    r = js.run(job(tmp_path, 2.0), interval="0.2s", quiet=False, extra=["--summary=full"])
    assert r.returncode == 0
    d0 = device(r.summary, 0)
    counter = query(r.recording, "SELECT energy_mj FROM nvml_device WHERE gpu = 0 ORDER BY sample")
    values = [v for (v,) in counter]
    assert any(b < a for a, b in zip(values, values[1:])), "the counter went backwards in the recording"
    assert d0["energy_counter_resets"] == 1
    assert d0["energy_method"] == "counter"
    # the reset interval has no energy; the others do, exactly
    assert d0["energy_j"] == approx(counter_energy_j(r.recording, "nvml_device", "energy_mj", 0, 1e-3), rel=1e-9)
    assert d0["energy_j"] == approx(250 * d0["energy_covered_s"], rel=0.03)
    assert d0["energy_j"] < 250 * r.summary["wall_time_s"]
    assert "counter reset 1x" in r.proc.stderr


def test_old_abi_missing_entry_points_and_not_supported(js, nvml, monkeypatch):
    monkeypatch.setenv("JOBSCOPE_NVML_LIBRARY", str(FAKE_NVML_OLD))
    r = js.run(job(nvml, 1.5), interval="0.2s")
    assert r.returncode == 0
    d0, d1 = device(r.summary, 0), device(r.summary, 1)
    # no energy counter in an old driver: energy from the power readings, labelled
    assert d0["errors"]["energy"] == "Function Not Found (code 13)"
    assert d0["energy_method"] == "integrated_power"
    assert d0["energy_j"] == approx(250 * d0["energy_covered_s"], rel=1e-9)  # constant power: exact
    assert d1["errors"]["fan"] == "Not Supported (code 3)"
    # v1 memory: reserved counted as used; v1 process entries still give the job's memory
    assert d0["peak_memory_bytes"]["device"] == 30 * GiB + 512 * 1024**2
    assert d0["peak_memory_bytes"]["job"]["combined"] == 24 * GiB
    # ThrottleReasons stands in for ClocksEventReasons
    assert d0["throttled_fraction"] == approx(1.0)
    inv = dict(query(r.recording, "SELECT key, value FROM inventory WHERE source = 'nvml'"))
    assert inv["gpu.0.pci_bus_id"] == "0000:19:00.0"  # the 52-byte legacy layout
    assert "nvmlDeviceGetTotalEnergyConsumption" in inv["missing_entry_points"]


def test_gpu_lost_mid_run(js, tmp_path, monkeypatch):
    monkeypatch.setenv("JOBSCOPE_NVML_LIBRARY", str(FAKE_NVML))
    monkeypatch.setenv("FAKE_NVML_SCENARIO", str(nvml_scenario(tmp_path, extra1="lost 1.0")))
    r = js.run(job(tmp_path, 2.0), interval="0.2s", quiet=False, extra=["--summary=full"])
    assert r.returncode == 0
    s = r.summary
    d0, d1 = device(s, 0), device(s, 1)
    assert d1["lost"] is True and 0.9 <= d1["lost_at_s"] <= 1.6
    assert d1["errors"]["device"] == "GPU is lost (code 15)"
    assert d0["lost"] is False and d0["samples"] == d1["samples"] == s["samples"]["taken"]
    assert ("lost" in {f["kind"] for f in s["gpu"]["flags"] if f["gpu"] == 1})
    assert "LOST at" in r.proc.stderr
    lost = query(r.recording, "SELECT lost, gpu_util_pct FROM nvml_device WHERE gpu = 1 ORDER BY sample")
    assert lost[0] == (0, 2) and lost[-1] == (1, None)


def test_no_library(js, tmp_path, monkeypatch):
    monkeypatch.setenv("JOBSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    r = js.run([PYTHON, "-c", "pass"], interval="0.2s")
    assert r.returncode == 0 and r.proc.stderr == ""
    assert "gpu" not in r.summary
    m = meta(r.recording)
    assert "/nonexistent/libnvidia-ml.so.1" in m["source_error.nvml"]
    # a table is created with its first rows (docs/FORMAT.md): none without a GPU; readers take it as empty
    assert "nvml_device" not in {t for (t,) in query(r.recording, "SELECT name FROM sqlite_master")}
    assert js("export", "-f", "csv", "-s", "gpu", r.recording).returncode == 0
    # asked for GPUs: one line says none could be monitored; the run goes on
    r = js.run([PYTHON, "-c", "pass"], interval="0.2s", extra=["--gpus", "all"])
    assert r.returncode == 0
    lines = stderr_lines(r.proc)
    assert len(lines) == 1 and "--gpus all: no GPU monitored" in lines[0] and "/nonexistent" in lines[0]
    # each GPU source's own reason, as its init gave it (no side channel): the same words as the recording's
    assert "nvml: NVML not loaded: " in lines[0] and "; rocm: " in lines[0]
    # and `jobscope info` says why the source is not available, in the same words
    out = js("info", "--json", check=True).stdout
    assert "NVML not loaded: " in json.loads(out)["nvml"]["unavailable"]


@pytest.mark.parametrize(
    "gpus, env, want",
    [
        (["--gpus", "1"], {}, [1]),
        (["--gpus", UUID0], {}, [0]),
        (["--gpus", "GPU-6666"], {}, [1]),
        ([], {"CUDA_VISIBLE_DEVICES": "1"}, [1]),
        ([], {"CUDA_VISIBLE_DEVICES": f"{UUID1},0"}, [0, 1]),
        ([], {"NVIDIA_VISIBLE_DEVICES": "0"}, [0]),
        (["--gpus", "all"], {"CUDA_VISIBLE_DEVICES": "1"}, [0, 1]),
    ],
)
def test_selection(js, nvml, monkeypatch, gpus, env, want):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    r = js.run(job(nvml, 0.5), interval="0.2s", extra=gpus)
    assert r.returncode == 0 and r.proc.stderr == ""
    assert sorted(d["index"] for d in r.summary["gpu"]["devices"]) == want
    got = {g for (g,) in query(r.recording, "SELECT DISTINCT gpu FROM nvml_device")}
    assert got == set(want)


def test_selection_none(js, nvml):
    r = js.run(job(nvml, 0.3), interval="0.2s", extra=["--gpus", "none"])
    assert r.returncode == 0 and r.proc.stderr == ""
    assert "gpu" not in r.summary
    m = meta(r.recording)
    assert m["gpus"] == "none" and m["source_error.nvml"] == "--gpus none"


def test_bad_gpus_is_a_usage_error(js):
    p = js("run", "--gpus", ",".join(str(i) for i in range(100)), "--", "true")
    assert p.returncode == 2 and "invalid --gpus" in p.stderr


def test_attach_honours_the_process_environment(js, nvml):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="1")
    target = subprocess.Popen(job(nvml, 2.0), env=env)
    try:
        wait_for(lambda: (nvml / "child.pid").exists(), 10, what="the job's child")
        rec, sj = js.path("attach.db"), js.path("attach.json")
        p = js("attach", "-i", "0.2", "-q", "-o", rec, "--summary-json", sj, target.pid)
        assert_no_crash(p)
        assert p.returncode == 0, p.stderr
        s = json.loads(sj.read_text())
    finally:
        target.wait()
    assert [d["index"] for d in s["gpu"]["devices"]] == [1]
    d1 = device(s, 1)
    assert d1["peak_memory_bytes"]["job"]["descendants"] == 10 * GiB
    assert d1["peak_memory_bytes"]["job"]["main"] == 0


def test_mig(js, tmp_path, monkeypatch):
    monkeypatch.setenv("JOBSCOPE_NVML_LIBRARY", str(FAKE_NVML))
    scn = (REPO / "tests" / "fakes" / "scenarios" / "nvml-mig.scn").read_text()
    scn = scn.replace("$JOBSCOPE_TEST_PID", f"file:{tmp_path / 'main.pid'}")
    (tmp_path / "mig.scn").write_text(scn)
    monkeypatch.setenv("FAKE_NVML_SCENARIO", str(tmp_path / "mig.scn"))
    r = js.run(job(tmp_path, 1.0), interval="0.2s")
    assert r.returncode == 0
    d0 = device(r.summary, 0)
    mig = {m["mig_index"]: m for m in d0["mig"]}
    assert sorted(mig) == [0, 1, 3]
    assert mig[1]["name"] == "NVIDIA H100 80GB HBM3 MIG 2g.20gb"
    assert mig[0]["memory_total_bytes"] == 40 * GiB and mig[3]["peak_memory_bytes"] == 6 * GiB
    assert mig[0]["job_peak_memory_bytes"] == 30 * GiB and mig[1]["job_peak_memory_bytes"] == 0
    assert d0["errors"]["utilization"] == "Not Supported (code 3)"
    rows = export(js, r.recording, "gpu_mig")
    assert {(x["gpu"], x["mig_index"]) for x in rows} == {("0", "0"), ("0", "1"), ("0", "3")}


# ---- AMD -----------------------------------------------------------------------------------------------


def rocm_scenario(d, extra=""):
    main, child = d / "main.pid", d / "child.pid"
    text = f"""
driver_version 6.1.0
{extra}
device 0
name "AMD Instinct MI210"
unique_id 0x2f1c5d8e9a7b3c41
pci 0000:c1:00.0
vram_total 64GiB
cu_count 100
clocks sys 500 1700
clocks mem 1600
pcie_levels 16:16
value busy_pct 80
value mem_busy_pct 30
value vram_used_bytes 40GiB
value power_uw 280000000
value power_cap_uw 300000000
value temp_edge_mc 68000
value temp_junction_mc 82000
value sclk_level 1
value mclk_level 0
value pcie_level 0
proc file:{main} pasid 1 vram 30GiB cu 90
proc file:{child} pasid 2 vram 4GiB cu 10
device 1
name "AMD Instinct MI210"
unique_id 0x7a3e1b9c5d2f4e60
vram_total 64GiB
cu_count 100
value busy_pct 20
value vram_used_bytes 10GiB
value power_uw 100000000
value temp_edge_mc 50000
proc file:{child} pasid 2 vram 6GiB cu 20
proc 4711 pasid 3 vram 2GiB cu 5
"""
    path = d / "rocm.scn"
    path.write_text(text)
    return path


@pytest.fixture
def rocm(tmp_path, monkeypatch):
    if not FAKE_ROCM.exists():
        pytest.skip(f"fake ROCm SMI not built ({FAKE_ROCM})")
    sysfs = tmp_path / "sys"
    shutil.copytree(KFD_SYSFS, sysfs)
    monkeypatch.setenv("JOBSCOPE_SYSFS", str(sysfs))
    monkeypatch.setenv("JOBSCOPE_ROCM_SMI_LIBRARY", str(FAKE_ROCM))
    monkeypatch.setenv("JOBSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    for v in ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("FAKE_ROCM_SMI_SCENARIO", str(rocm_scenario(tmp_path)))
    return tmp_path


def test_rocm_every_figure_and_the_job_share(js, rocm):
    r = js.run(job(rocm, 2.0), interval="0.2s", quiet=False, extra=["--summary=full"])
    assert r.returncode == 0, r.proc.stderr
    s = r.summary
    d0, d1 = device(s, 0, "amd"), device(s, 1, "amd")
    assert d0["name"] == "AMD Instinct MI210" and d0["uuid"] == "GPU-2f1c5d8e9a7b3c41"
    assert d0["pci_bus_id"] == "0000:c1:00.0" and d0["memory_total_bytes"] == 64 * GiB
    assert d0["utilization"]["mean"] == approx(0.8) and d0["memory_utilization"]["mean"] == approx(0.3)
    assert d0["power_w"]["mean"] == approx(280) and d0["power_limit_w"] == approx(300)
    assert d0["temperature_c"]["max"] == approx(68) and d0["clock_sm_mhz"]["mean"] == approx(1700)
    assert d0["peak_memory_bytes"]["device"] == 40 * GiB
    # the energy counter, in units of its resolution (15.3 uJ)
    assert d0["energy_method"] == "counter"
    assert d0["energy_j"] == approx(280 * d0["energy_covered_s"], rel=0.03)
    res = query(r.recording, "SELECT energy_resolution_uj FROM rocm_device WHERE gpu = 0 LIMIT 1")[0][0]
    assert d0["energy_j"] == approx(counter_energy_j(r.recording, "rocm_device", "energy_count", 0, res * 1e-6),
                                    rel=1e-9)
    # per-process VRAM (by_device_get): main 30 GiB and child 4 GiB on GPU 0, child 6 GiB on GPU 1
    assert d0["peak_memory_bytes"]["job"] == {"main": 30 * GiB, "descendants": 4 * GiB, "combined": 34 * GiB}
    assert d1["peak_memory_bytes"]["job"]["combined"] == 6 * GiB and d1["peak_memory_bytes"]["others"] == 2 * GiB
    assert s["gpu"]["job"]["peak_memory_bytes"]["combined"] == 40 * GiB
    # no per-process time utilisation on AMD: the job's utilisation is missing, the device's is there
    assert d0["job_utilization"]["mean"] is None
    assert s["gpu"]["job"]["utilization_sum"]["max"] == approx(1.0)
    assert "gpu amd 0" in r.proc.stderr and "gpu amd 1" in r.proc.stderr
    rows = export(js, r.recording, "gpu")
    last = [x for x in rows if x["gpu"] == "0"][-1]
    assert last["vendor"] == "amd" and float(last["temp_junction_c"]) == approx(82)
    assert float(last["clock_mem_mhz"]) == approx(1600)
    procs = export(js, r.recording, "gpu_process")
    cu = [float(x["cu_occupancy_fraction"]) for x in procs if x["gpu"] == "0" and x["main"] == "1"]
    assert cu and all(v == approx(0.9) for v in cu)
    assert query(r.recording, "SELECT COUNT(*) FROM rocm_device")[0][0] == 2 * s["samples"]["taken"]


def test_rocm_before_5_7_sums_a_process_over_its_gpus(js, tmp_path, monkeypatch, rocm):
    monkeypatch.setenv(
        "FAKE_ROCM_SMI_SCENARIO", str(rocm_scenario(tmp_path, extra="omit rsmi_compute_process_info_by_device_get"))
    )
    r = js.run(job(rocm, 1.5), interval="0.2s")
    assert r.returncode == 0
    s = r.summary
    # the child uses both GPUs: its 10 GiB are the job's, but no device's
    assert s["gpu"]["job"]["peak_memory_bytes"] == {"main": 30 * GiB, "descendants": 10 * GiB, "combined": 40 * GiB}
    assert device(s, 0, "amd")["peak_memory_bytes"]["job"]["combined"] == 30 * GiB
    rows = query(r.recording, "SELECT DISTINCT gpu, gpus FROM rocm_process WHERE gpu IS NULL")
    assert rows == [(None, 2)]


@pytest.mark.parametrize(
    "gpus, env, want",
    [
        (["--gpus", "1"], {}, [1]),
        (["--gpus", "GPU-7a3e1b9c5d2f4e60"], {}, [1]),
        ([], {"ROCR_VISIBLE_DEVICES": "1"}, [1]),
        ([], {"HIP_VISIBLE_DEVICES": "0"}, [0]),
    ],
)
def test_rocm_selection(js, rocm, monkeypatch, gpus, env, want):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    r = js.run(job(rocm, 0.5), interval="0.2s", extra=["--cgroup", "off", *gpus])  # a fixture sysfs: no cgroups
    assert r.returncode == 0 and r.proc.stderr == ""
    assert sorted(d["index"] for d in r.summary["gpu"]["devices"]) == want


def test_rocm_without_kfd_is_never_loaded(js, rocm, monkeypatch, tmp_path):
    empty = tmp_path / "nokfd"
    empty.mkdir()
    monkeypatch.setenv("JOBSCOPE_SYSFS", str(empty))
    r = js.run([PYTHON, "-c", "pass"], interval="0.2s", extra=["--cgroup", "off"])  # no cgroups in that sysfs
    assert r.returncode == 0 and r.proc.stderr == ""
    assert "gpu" not in r.summary
    assert "kfd" in meta(r.recording)["source_error.rocm"]


def test_rocm_lost_and_reload(js, rocm, monkeypatch, tmp_path):
    text = rocm_scenario(tmp_path).read_text() + "reload 0.8\nlost 1.4\n"  # device 1's block ends the file
    (tmp_path / "rocm2.scn").write_text(text)
    monkeypatch.setenv("FAKE_ROCM_SMI_SCENARIO", str(tmp_path / "rocm2.scn"))
    r = js.run(job(rocm, 2.0), interval="0.2s")
    assert r.returncode == 0
    d1 = device(r.summary, 1, "amd")
    assert d1["energy_counter_resets"] == 1
    assert d1["energy_j"] == approx(100 * d1["energy_covered_s"], rel=0.03)
    assert d1["lost"] is True and 1.3 <= d1["lost_at_s"] <= 2.0
    assert device(r.summary, 0, "amd")["lost"] is False


def test_tracker_gpu_figures(nvml, tmp_path):
    """gpu_tracker's GPU figures from the embedded monitor (libjobscope + the Python Tracker) on the fake NVML:
    the process is the job's main process on GPU 0 (20 GiB); GPU 1 is someone else's."""
    lib = BUILD / "lib" / "libjobscope.so.0"
    if not lib.exists():
        pytest.skip(f"{lib} not built")
    code = f"""
import json, os, sys, time
sys.path.insert(0, {str(REPO / 'python')!r})
with open({str(nvml / 'main.pid')!r}, "w") as f:
    f.write(str(os.getpid()))
import jobscope
with jobscope.Tracker(interval=0.1, gpu_ram_unit="gigabytes", time_unit="seconds") as t:
    time.sleep(1.0)
print(json.dumps(t.summary))
"""
    env = dict(os.environ, JOBSCOPE_LIBRARY=str(lib))
    p = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    g = s["max_gpu_ram"]
    GiB = 2**30 / 1e9
    assert g["system_capacity"] == pytest.approx(160 * GiB)
    assert g["system"] == pytest.approx((30 + 79) * GiB)  # every process's memory, both GPUs at one sample
    assert g["main"] == pytest.approx(20 * GiB) and g["combined"] == pytest.approx(20 * GiB)
    assert g["descendants"] == 0
    u = s["gpu_utilization"]
    assert u["system_gpu_count"] == 2 and u["n_expected_gpus"] == 2
    assert u["gpu_percentages"]["max_sum_percent"] == pytest.approx(92)  # 90% + 2%
    assert u["gpu_percentages"]["mean_hardware_percent"] == pytest.approx(46)
