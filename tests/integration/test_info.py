# SPDX-License-Identifier: MIT
"""`jobscope info`: the node's inventory, against lscpu on this machine and against fixture trees (issue 8).

On the live machine the figures lscpu prints (model name, CPUs, sockets, cores per socket, threads per
core, NUMA nodes) must match; lscpu is the oracle only here, jobscope never runs it. On
tests/fixtures/node (2 sockets x 2 cores x 2 threads, caches, 2 NUMA nodes, RAPL, InfiniBand, cpufreq,
sensors) every figure is known; tests/fixtures/node-vm is shaped like the development VM.
"""
import json
import shutil
import subprocess

import pytest

from conftest import REPO, assert_clean_error

FIX = REPO / "tests" / "fixtures"
NODE = ["--procfs", FIX / "node" / "proc", "--sysfs", FIX / "node" / "sys"]
VM = ["--procfs", FIX / "node-vm" / "proc", "--sysfs", FIX / "node-vm" / "sys"]


def info_json(js, *args):
    proc = js("info", "--json", *args, check=True)
    return json.loads(proc.stdout)


def cpu_set(text):
    """The CPUs of a list like 0-3,8 (lscpu writes 0,1 where the kernel writes 0-1)."""
    out = set()
    for part in text.split(","):
        if part:
            lo, _, hi = part.partition("-")
            out.update(range(int(lo), int(hi or lo) + 1))
    return out


def lscpu():
    out = subprocess.run(["lscpu", "--json"], capture_output=True, text=True, check=True).stdout
    return {e["field"].rstrip(":"): e["data"] for e in json.loads(out)["lscpu"]}


@pytest.mark.skipif(shutil.which("lscpu") is None, reason="lscpu not installed")
def test_live_matches_lscpu(js):
    host = info_json(js)["host"]
    ref = lscpu()
    assert host["cpu.model"] == ref["Model name"]
    assert host["cpu.count"] == int(ref["CPU(s)"])
    assert cpu_set(host["cpu.online"]) == cpu_set(ref["On-line CPU(s) list"])
    assert host["cpu.sockets"] == int(ref["Socket(s)"])
    assert host["cpu.cores_per_socket"] == int(ref["Core(s) per socket"])
    assert host["cpu.threads_per_core"] == int(ref["Thread(s) per core"])
    assert host["numa.nodes"] == int(ref.get("NUMA node(s)", "1"))
    assert host["cpu.vendor"] == ref["Vendor ID"]
    for node in range(host["numa.nodes"]):
        key = f"NUMA node{node} CPU(s)"
        if key in ref:
            assert cpu_set(host[f"numa.node{node}.cpus"]) == cpu_set(ref[key])
    # caches: where lscpu shows them, the same sizes (lscpu prints the total over the instances)
    for name in ("L1d", "L1i", "L2", "L3"):
        if name in ref and f"cache.{name}.instances" in host:
            assert f"({host[f'cache.{name}.instances']} instance" in ref[name]


def test_live_text(js):
    proc = js("info", check=True)
    lines = proc.stdout.splitlines()
    assert lines[0] == "host:"
    assert any(line.split()[:1] == ["cpu.model"] for line in lines)
    # every source with an inventory is listed, found or not, with the reason when not
    for name in ("rapl", "infiniband", "cpufreq", "thermal"):
        assert any(line.startswith(name + ":") for line in lines), proc.stdout


def test_fixture_two_sockets(js):
    d = info_json(js, *NODE)
    h = d["host"]
    assert h["cpu.model"] == "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"
    assert (h["cpu.count"], h["cpu.sockets"], h["cpu.cores"], h["cpu.threads"]) == (8, 2, 4, 8)
    assert (h["cpu.cores_per_socket"], h["cpu.threads_per_core"]) == (2, 2)
    assert (h["cache.L1d.size_bytes"], h["cache.L1d.instances"]) == (32768, 4)
    assert (h["cache.L2.size_bytes"], h["cache.L2.instances"]) == (1048576, 4)
    assert (h["cache.L3.size_bytes"], h["cache.L3.instances"], h["cache.L3.total_bytes"]) == \
        (28160 * 1024, 2, 2 * 28160 * 1024)
    assert h["numa.nodes"] == 2
    assert h["numa.node0.cpus"] == "0-1,4-5" and h["numa.node1.cpus"] == "2-3,6-7"
    assert h["numa.node0.mem_total_bytes"] == 197130836 * 1024
    assert h["memory.total_bytes"] == 394798196 * 1024
    assert h["hostname"] == "node042" and h["kernel.release"] == "5.14.0-427.el9.x86_64"
    assert d["rapl"]["zones"] == 5 and d["rapl"]["package-1/dram.zone"] == "intel-rapl:1:0"
    assert d["infiniband"]["mlx5_0.1.data_width_bits"] == 64
    assert d["infiniband"]["mlx5_0.2.data_width_bits"] == 32
    assert d["cpufreq"]["source"] == "scaling_cur_freq" and d["cpufreq"]["driver"] == "intel_pstate"
    assert d["thermal"]["hwmon0/temp1.label"] == "Package id 0"


def test_numbers_are_json_numbers(js):
    """`info --json` gave every value as a string ("cpu.count": "2"): counts and sizes are JSON numbers now,
    with the same key always of the same type (a list such as numa.online stays text even when it is "0")."""
    for args in ([], NODE, VM):
        d = info_json(js, *args)
        h = d["host"]
        for key in ("cpu.count", "cpu.sockets", "cpu.cores", "numa.nodes", "memory.total_bytes"):
            assert type(h[key]) is int, (args, key, h[key])
        assert isinstance(h["cpu.online"], str) and isinstance(h["numa.online"], str)
        for src, kv in d.items():
            for k, v in kv.items():
                if isinstance(v, str) and v.isdigit():  # only identifiers and flags read as text
                    assert k in ("cpu.family", "cpu.model_id", "cpu.stepping", "numa.online", "selected") \
                        or k.endswith((".online", ".cpus", ".selected", "_id")), (args, src, k, v)
    raw = js("info", "--json", *NODE, check=True).stdout
    assert '"cpu.count": 8' in raw and '"memory.total_bytes": 404273352704' in raw, raw[:400]


def test_fixture_by_environment(js, monkeypatch):
    monkeypatch.setenv("JOBSCOPE_PROCFS", str(FIX / "node-vm" / "proc"))
    monkeypatch.setenv("JOBSCOPE_SYSFS", str(FIX / "node-vm" / "sys"))
    d = info_json(js)
    assert d["host"]["cpu.model"] == "AMD EPYC"
    assert d["host"]["cache.cpuinfo_size_bytes"] == 1048576
    assert "cache.L1d.size_bytes" not in d["host"]
    assert d["rapl"] == {"unavailable": "No such device"}
    assert d["infiniband"] == {"unavailable": "No such device"}
    assert d["thermal"] == {"unavailable": "No such device"}
    assert d["cpufreq"] == {"source": "cpuinfo"}


def test_fixture_text_aligned(js):
    proc = js("info", *NODE, check=True)
    block, in_host = [], False
    for line in proc.stdout.splitlines():
        if line == "host:":
            in_host = True
            continue
        if in_host and not line.startswith("  "):
            break
        if in_host:
            block.append(line)
    assert block, proc.stdout
    # values start in one column within a source
    cols = {len(line) - len(line[2:].split("  ", 1)[1].lstrip()) for line in block}
    assert len(cols) == 1, block
    assert "  cpu.sockets" in proc.stdout


@pytest.mark.parametrize("args", [["--bogus"], ["extra"], ["--procfs", "/nonexistent"], ["--sysfs", "/nonexistent"],
                                  ["--procfs"]])
def test_bad_arguments(js, args):
    assert_clean_error(js("info", *args))


def test_help(js):
    proc = js("info", "--help", check=True)
    assert proc.stdout.startswith("Usage: jobscope info")
    proc = js("--help", check=True)
    assert "  info [--json]" in proc.stdout
