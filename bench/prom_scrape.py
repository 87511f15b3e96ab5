#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Scrape cost of `jobscope run --listen` (docs/PROMETHEUS.md): for a tree of N idle processes (bench/tree), the
time the monitor spends rendering each sample's exposition (both formats; jobscope_exposition_render_seconds,
the median of 20 samples) and what one scrape costs a client (median wall time of 200 GETs over keep-alive-less
HTTP, text and OpenMetrics), with the exposition's size.

    bench/prom_scrape.py [--build build] [--json FILE] [N ...]        (default N: 1 1000)

Each N is measured with the default exposition (the tree scope only) and with --listen-processes N.
"""
import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

OM = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(url, accept=None):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=10) as r:
        body = r.read()
    return time.perf_counter() - t0, body


def measure(build, n, processes):
    tree = subprocess.Popen([os.path.join(build, "bench", "tree"), str(n)], stdout=subprocess.PIPE, text=True)
    pid = int(tree.stdout.readline())
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        args = [os.path.join(build, "jobscope"), "attach", "-q", "-o", os.path.join(d, "r.db"), "-i", "0.5",
                "--listen", f"127.0.0.1:{port}"]
        if processes:
            args += ["--listen-processes", str(processes)]
        mon = subprocess.Popen(args + [str(pid)], stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}/metrics"
        try:
            for _ in range(100):
                try:
                    scrape(url)
                    break
                except OSError:
                    time.sleep(0.05)
            render = []
            for _ in range(20):
                _, body = scrape(url)
                m = re.search(rb"^jobscope_exposition_render_seconds\{[^}]*\} (\S+)$", body, re.M)
                if m:
                    render.append(float(m.group(1)))
                time.sleep(0.5)
            text = [scrape(url)[0] for _ in range(200)]
            om = [scrape(url, OM)[0] for _ in range(200)]
            size_t, size_o = len(scrape(url)[1]), len(scrape(url, OM)[1])
            series = sum(1 for line in scrape(url)[1].splitlines() if line and not line.startswith(b"#"))
        finally:
            mon.send_signal(signal.SIGINT)
            mon.wait()
            tree.send_signal(signal.SIGTERM)
            tree.wait()
    return {"render_ms": statistics.median(render) * 1e3, "text_ms": statistics.median(text) * 1e3,
            "om_ms": statistics.median(om) * 1e3, "text_kib": size_t / 1024, "om_kib": size_o / 1024,
            "series": series}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--json", help="also write the figures to FILE (a list, one object per line of the table)")
    ap.add_argument("n", nargs="*", type=int, default=[1, 1000])
    a = ap.parse_args()
    out = []
    print("| processes | exposed | series | render per sample (both formats) | scrape, text | scrape, OpenMetrics "
          "| size text / OM |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for n in a.n:
        for procs in (0, n):
            r = measure(a.build, n, procs)
            out.append(dict(r, n=n, listen_processes=procs))
            what = f"--listen-processes {procs}" if procs else "default (scope only)"
            print(f"| {n} | {what} | {r['series']} | {r['render_ms']:.3f} ms | {r['text_ms']:.3f} ms | "
                  f"{r['om_ms']:.3f} ms | {r['text_kib']:.1f} / {r['om_kib']:.1f} KiB |")
            sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
