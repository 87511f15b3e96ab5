# SPDX-License-Identifier: MIT
"""Memory peak against psutil, and written bytes of an fsync'd write (issue 2, Integration: memory, I/O)."""
import json
import os
import selectors
import subprocess
import time

import psutil
import pytest

from conftest import MiB, PYTHON, assert_no_crash


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def read_line(stream, timeout):
    """One line from a pipe, waiting at most timeout seconds."""
    sel = selectors.DefaultSelector()
    sel.register(stream, selectors.EVENT_READ)
    buf = b""
    deadline = time.monotonic() + timeout
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not sel.select(left):
            pytest.fail(f"no line from the workload within {timeout}s (got {buf!r})")
        chunk = os.read(stream.fileno(), 1)
        if not chunk:
            pytest.fail(f"workload closed its output early (got {buf!r})")
        buf += chunk
    return buf.decode()


@pytest.mark.skipif(mem_available() < 1200 * MiB, reason="needs about 1.2 GiB of available memory")
def test_memory_peak_matches_psutil(js, workload):
    size = 512 * MiB
    rec, sj = js.path("mem.db"), js.path("mem.json")
    p = js.popen(
        "run", "-i", "0.2", "-q", "-o", rec, "--summary-json", sj, "--",
        PYTHON, workload("touch_mem.py"), "512", "3",
    )
    try:
        line = read_line(p.stdout, 60)
        assert line.startswith("READY "), line
        pid = int(line.split()[1])
        proc = psutil.Process(pid)
        # read psutil several times while the workload holds the memory (it holds it for 3 s)
        readings = []
        for _ in range(5):
            readings.append(proc.memory_info().rss)
            time.sleep(0.1)
        oracle = max(readings)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, 9)
            p.wait()
    cp = subprocess.CompletedProcess(p.args, p.returncode, out.decode(), err.decode())
    assert_no_crash(cp)
    assert p.returncode == 0, cp.stderr
    s = json.loads(sj.read_text())
    m = s["memory"]
    assert oracle >= size, f"psutil saw only {oracle} bytes resident"
    assert m["peak_rss_sum_bytes"] >= size, f"sampled peak {m['peak_rss_sum_bytes']} < 512 MiB: {m}"
    assert abs(m["peak_rss_sum_bytes"] - oracle) <= 0.05 * oracle, (
        f"sampled peak {m['peak_rss_sum_bytes']} vs psutil {oracle}: "
        f"{(m['peak_rss_sum_bytes'] - oracle) / oracle * 100:+.2f}% (allowed ±5%)"
    )
    assert m["peak_rss_kernel_bytes"] is not None and m["peak_rss_kernel_bytes"] >= size, m
    assert m["peak_bytes"] >= size, m  # the headline: one process, no page shared
    assert m["main"]["peak_rss_bytes"] >= size, m
    print(f"memory: sampled peak {m['peak_rss_sum_bytes']} B, psutil {oracle} B, kernel {m['peak_rss_kernel_bytes']} B")


def fs_type(path):
    out = subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True)
    return out.stdout.strip()


def disk_dir(tmp_path):
    """A directory on a filesystem that accounts write_bytes (not tmpfs/ramfs)."""
    candidates = [tmp_path, os.environ.get("JOBSCOPE_BUILD"), os.path.dirname(os.path.abspath(__file__))]
    for c in candidates:
        if c and os.path.isdir(c) and fs_type(c) not in ("tmpfs", "ramfs", ""):
            return c
    pytest.skip("no directory on a disk-backed filesystem for the I/O test")


def test_written_bytes_of_fsynced_write(js, tmp_path):
    d = disk_dir(tmp_path)
    target = os.path.join(d, f"jobscope-io-test-{os.getpid()}.bin")
    try:
        r = js.run(
            ["dd", "if=/dev/zero", f"of={target}", "bs=1M", "count=256", "conv=fsync", "status=none"],
            interval="0.5s",
            timeout=180,
        )
    finally:
        if os.path.exists(target):
            os.unlink(target)
    assert r.returncode == 0, r.proc.stderr
    io = r.summary["io"]
    assert io["write_bytes"] is not None and io["write_bytes"] >= 256 * MiB, io
    print(f"io: {io}")
