#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seed the fuzz corpora (fuzz/corpus/TARGET/) from the test fixtures: each seed is the selector byte the
target's switch uses, then a fixture file's bytes. Run from the repository root after a fixture is added;
the output is committed (small files only: each seed is cut at 4 KiB)."""
import glob
import hashlib
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests", "fixtures")
OUT = os.path.join(ROOT, "fuzz", "corpus")


def seed(target, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    data = data[:4096]
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def files(pattern):
    for p in sorted(glob.glob(os.path.join(FIX, pattern), recursive=True)):
        if os.path.isfile(p) and not os.path.islink(p):
            with open(p, "rb") as f:
                yield f.read()


# fuzz_procfs: selector % 14
procfs = {2: "**/proc/[0-9]*/stat", 3: "**/proc/[0-9]*/io", 4: "**/proc/[0-9]*/statm",
          5: "**/proc/[0-9]*/status", 6: "**/proc/[0-9]*/smaps_rollup", 7: "**/schedstat",
          8: "**/proc/[0-9]*/cmdline", 11: "**/cpu/online", 12: "**/cpu/online"}
for sel, pat in procfs.items():
    for n, data in enumerate(files(pat)):
        if n < 6:
            seed("procfs", bytes([sel]) + data)
for data in files("**/mountinfo"):
    for line in data.splitlines()[:20]:
        seed("procfs", bytes([9]) + line)
for sel, text in [(0, b"123 -45 18446744073709551616 7"), (1, b"VmHWM:\t  1234 kB\nVmRSS: 5 kB\n"),
                  (10, b"  -42 \n"), (13, b"0,GPU-6f4e2b1c,MIG-1/2/3, all"), (13, b"void")]:
    seed("procfs", bytes([sel]) + text)

# fuzz_system: selector % 8
system = {0: "system/stat", 1: "system/loadavg", 2: "system/pressure/cpu", 3: "system/pressure/memory",
          4: "system/pressure/io", 5: "system/meminfo", 7: "**/cpuinfo"}
for sel, pat in system.items():
    for n, data in enumerate(files(pat)):
        if n < 4:
            seed("system", bytes([sel]) + data)
for data in files("system/net/dev"):
    seed("system", bytes([6, 1]) + data)
for data in files("system/diskstats"):
    seed("system", bytes([6]) + data)

# fuzz_cgroup: selector % 10
cg = {0: "**/memory.current", 1: "**/cpu.stat", 2: "**/cpuacct.stat", 3: "cgroup-v1/**/memory.stat",
      4: "cgroup-v2/**/memory.stat", 5: "**/memory.events", 6: "**/memory.oom_control", 7: "**/io.stat",
      9: "**/cpu.pressure"}
for sel, pat in cg.items():
    for n, data in enumerate(files(pat)):
        if n < 3:
            seed("cgroup", bytes([sel]) + data)
b = list(files("**/blkio.throttle.io_service_bytes*"))
i = list(files("**/blkio.throttle.io_serviced*"))
if b and i:
    seed("cgroup", bytes([8]) + b[0] + b"\0" + i[0])

# fuzz_gpu: byte 0 even = NVML, odd = ROCm; bit 1 = attach mode
for p in sorted(glob.glob(os.path.join(ROOT, "tests", "fakes", "scenarios", "*.scn"))):
    with open(p, "rb") as f:
        data = f.read()
    sel = 1 if os.path.basename(p).startswith("rocm") else 0
    seed("gpu", bytes([sel]) + data)
    seed("gpu", bytes([sel | 2]) + data)

# fuzz_http: raw requests
for req in [b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text; version=1.0.0\r\n"
            b"Authorization: Bearer s3cret\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
            b"HEAD /metrics HTTP/1.0\r\nAuthorization: Basic dXNlcjpwYXNz\r\n\r\n",
            b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: text/plain;q=0.5, application/openmetrics-text;q=0.9\r\n\r\n"]:
    seed("http", req)

# fuzz_markwire: valid packets (40-byte header, name, host, data)
def mark(kind, name, host=b"", data=b""):
    hdr = struct.pack("=2sBBiqqIIHHB3x", b"JS", 1, kind, 3, 123456789, 1700000000000000000, 42, 0,
                      len(name), len(data), len(host))
    return hdr + name + host + data
seed("markwire", mark(0, b"load", b"node1", b'{"file":"a.h5","n":3}'))
seed("markwire", mark(1, b"load"))
seed("markwire", mark(2, b"checkpoint", b"", b"not json"))

# fuzz_recording: no damage, a truncation, a flipped header byte
seed("recording", struct.pack("<I", 0xFFFFFFFF))
seed("recording", struct.pack("<I", 50000))
seed("recording", struct.pack("<IIB", 0xFFFFFFFF, 16, 0x40))
seed("recording", struct.pack("<IIB", 0xFFFFFFFF, 4200, 0xFF))
