# SPDX-License-Identifier: MIT
"""Node sources end to end (issue 8): a run whose sysfs is a copy of tests/fixtures/node, with a thread that
moves the counters while jobscope samples them: RAPL energy growing at known powers (package-1 wrapping at
max_energy_range_uj), InfiniBand data at a known rate, a temperature rising. The summary, the exports and
the recording must carry them with their units, and the energy attribution must name its method. Without
a fixture, on this machine (no powercap, InfiniBand, hwmon or cpufreq), the sections are simply absent.
"""
import csv
import io
import os
import shutil
import threading
import time

import pytest

from conftest import PYTHON, REPO, WORKLOADS

FIX = REPO / "tests" / "fixtures" / "node" / "sys"
RANGE = 262143328850
PKG_W, DRAM_W = 100.0, 20.0          # watts per package and per dram zone
IB_WORDS_PER_S = 5_000_000           # 20 MB/s on mlx5_0 port 1


class Mover(threading.Thread):
    """Rewrites counter files in place (fixed width, one pwrite: a sample never sees a half-written file)."""

    def __init__(self, sys_dir):
        super().__init__(daemon=True)
        self.sys = sys_dir
        self.stop = threading.Event()
        self.t0 = time.monotonic()
        self.files = {}

    def put(self, rel, value):
        fd = self.files.get(rel)
        if fd is None:
            fd = self.files[rel] = os.open(self.sys / rel, os.O_WRONLY)
        os.pwrite(fd, f"{int(value):020d}\n".encode(), 0)

    def step(self):
        t = time.monotonic() - self.t0
        pc = "class/powercap"
        self.put(f"{pc}/intel-rapl:0/energy_uj", 1e9 + PKG_W * t * 1e6)
        self.put(f"{pc}/intel-rapl:1/energy_uj", (RANGE - 20e6 + PKG_W * t * 1e6) % RANGE)  # wraps at 0.2 s
        self.put(f"{pc}/intel-rapl:0:0/energy_uj", 2e8 + DRAM_W * t * 1e6)
        self.put(f"{pc}/intel-rapl:1:0/energy_uj", 3e8 + DRAM_W * t * 1e6)
        self.put("class/infiniband/mlx5_0/ports/1/counters/port_xmit_data", 1e11 + IB_WORDS_PER_S * t)
        self.put("class/hwmon/hwmon0/temp1_input", 45000 + 10000 * t)

    def run(self):
        while not self.stop.is_set():
            self.step()
            time.sleep(0.01)

    def close(self):
        self.stop.set()
        self.join()
        for fd in self.files.values():
            os.close(fd)


@pytest.fixture
def moving_node(tmp_path, monkeypatch):
    sys_dir = tmp_path / "sys"
    shutil.copytree(FIX, sys_dir)
    mover = Mover(sys_dir)
    mover.step()  # fixed-width values before jobscope opens the files
    monkeypatch.setenv("JOBSCOPE_SYSFS", str(sys_dir))
    mover.start()
    yield mover
    mover.close()


def test_run_with_moving_counters(js, moving_node):
    r = js.run([PYTHON, str(WORKLOADS / "burn.py"), "1.0"], interval="0.1s", timeout=60, quiet=False,
               extra=["--summary=full"])
    assert r.returncode == 0, r.proc.stderr
    s = r.summary
    wall = s["wall_time_s"]

    e = s["energy"]
    zones = {z["domain"]: z for z in e["zones"]}
    assert set(zones) == {"package-0", "package-0/dram", "package-1", "package-1/dram", "psys"}
    for name in ("package-0", "package-1"):
        assert zones[name]["intervals_unknown"] == 0, zones[name]        # the wrap is undone, not lost
        assert zones[name]["mean_power_w"] == pytest.approx(PKG_W, rel=0.2), zones[name]
    assert zones["package-1"]["energy_j"] == pytest.approx(zones["package-0"]["energy_j"], rel=0.1)
    assert zones["package-0/dram"]["mean_power_w"] == pytest.approx(DRAM_W, rel=0.2)
    assert zones["psys"]["energy_j"] == 0                                # the fixture's psys does not move
    assert e["node_mean_power_w"] == pytest.approx(2 * (PKG_W + DRAM_W), rel=0.2)
    assert e["node_energy_j"] == pytest.approx(sum(zones[d]["energy_j"] for d in zones if d != "psys"))
    a = e["attribution"]
    assert a["method"] == "busy_cpu_share"
    assert a["intervals"] > 0
    assert 0 < a["scope_energy_j"] <= a["node_busy_energy_j"] + 1e-9
    assert a["node_busy_energy_j"] + a["node_idle_energy_j"] == pytest.approx(e["node_energy_j"], rel=0.05)

    ports = {p["port"]: p for p in s["infiniband"]["ports"]}
    assert ports[1]["xmit_bytes"] == pytest.approx(4 * IB_WORDS_PER_S * wall, rel=0.25)
    assert ports[1]["complete"] is True
    assert ports[2]["xmit_bytes"] == 0 and ports[2]["data_width_bits"] == 32
    assert s["infiniband"]["attribution"]["method"] == "none"

    assert s["thermal"]["max_sensor"] == "hwmon0/temp1"
    assert s["thermal"]["max_celsius"] > 45.0
    assert s["cpufreq"]["source"] == "scaling_cur_freq" and s["cpufreq"]["cpus"] == 8
    assert s["network"]["attribution"]["method"] == "none"

    text = r.proc.stderr
    for label in ("energy  ", "energy, scope", "infiniband", "cpu frequency", "temperature"):
        assert f"  {label}" in text, text
    assert "[busy_cpu_share]" in text

    # the same figures from the recording
    again = js.summary_json(r.recording)
    assert again["energy"]["node_energy_j"] == pytest.approx(e["node_energy_j"])
    assert again["energy"]["attribution"]["scope_energy_j"] == pytest.approx(a["scope_energy_j"])

    # the exports: a row per zone (port, CPU, sensor) and sample, units in the column names
    def export(view):
        proc = js("export", "--format", "csv", "--scope", view, r.recording, check=True)
        rows = list(csv.DictReader(io.StringIO(proc.stdout, newline="")))
        assert rows, view
        return rows

    rows = export("energy")
    assert {"zone", "domain", "energy_j", "power_w", "scope_energy_j", "scope_share_fraction", "errno"} <= set(rows[0])
    last = {row["domain"]: row for row in rows if row["sample"] == rows[-1]["sample"]}
    assert float(last["package-1"]["energy_j"]) == pytest.approx(zones["package-1"]["energy_j"])
    rows = export("infiniband")
    assert {"hca", "port", "xmit_bytes_per_s", "rcv_bytes_per_s", "xmit_bytes", "errors"} <= set(rows[0])
    rates = [float(row["xmit_bytes_per_s"]) for row in rows if row["port"] == "1" and row["xmit_bytes_per_s"]]
    assert rates and sorted(rates)[len(rates) // 2] == pytest.approx(4 * IB_WORDS_PER_S, rel=0.3)
    assert {"cpu", "freq_mhz"} <= set(export("cpufreq")[0])
    assert {"sensor", "chip", "label", "temp_celsius"} <= set(export("thermal")[0])
    assert {"iface", "rx_bytes_per_s", "rx_errors_per_s", "tx_drops"} <= set(export("network")[0])


def test_run_on_this_machine(js, monkeypatch):
    """No powercap, InfiniBand or hwmon here; cpufreq from cpuinfo: those sections are absent or say so."""
    monkeypatch.delenv("JOBSCOPE_SYSFS", raising=False)
    r = js.run(["sleep", "0.3"], interval="0.1s", timeout=60)
    assert r.returncode == 0, r.proc.stderr
    s = r.summary
    if not os.path.isdir("/sys/class/powercap"):
        assert "energy" not in s
    if not os.path.isdir("/sys/class/infiniband"):
        assert "infiniband" not in s
    if not os.path.isdir("/sys/class/hwmon"):
        assert "thermal" not in s or s["thermal"]["sensors"]
    if not os.listdir("/sys/devices/system/cpu/cpufreq"):
        assert s["cpufreq"]["source"] == "cpuinfo"
    assert s["network"]["interfaces"]
