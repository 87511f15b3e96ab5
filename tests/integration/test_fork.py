# SPDX-License-Identifier: MIT
"""The embedded monitor (Python Tracker) across fork (docs/RELIABILITY.md, "shared node", 5).

An outer Tracker(output=...) runs while a multiprocessing pool of forked workers each runs a Tracker of its
own (with and without a recording). Before the fix the children wrote through the parent's SQLite handle:
every worker's stop() raised EIO (or EBUSY), the outer stop() failed in 2 of 3 runs and the outer
recording's monitor_pid became a worker's. Now: each worker's Tracker works on its own (its CPU figure
covers the work it did, by the kernel's own count), the outer recording is complete and names the parent,
and the outer marks socket is gone once the outer Tracker stops, even while the forked workers live.

The scenario runs in a child interpreter (the test process itself never forks with a monitor thread).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PYTHON, REPO

pytest.importorskip("psutil")  # the package's own imports need nothing else; psutil marks a full Python env

PYDIR = REPO / "python"


def build_dir():
    env = os.environ.get("JOBSCOPE_BUILD")
    return Path(env).resolve() if env else REPO / "build"


LIB = build_dir() / "lib" / "libjobscope.so.0"

SCENARIO = r"""
import json, os, socket, sys, time, sqlite3
import multiprocessing as mp
sys.path.insert(0, sys.argv[1])
import jobscope as js

OUT = sys.argv[2]


def burn(seconds):
    t = time.process_time()
    while time.process_time() - t < seconds:
        pass


def work(i):
    out = os.path.join(os.path.dirname(OUT), f"worker{i}.db") if i % 2 else None
    t = js.Tracker(interval=0.05, output=out)
    try:
        c0 = time.process_time()
        t.start()
        burn(0.3)
        t.stop()
        used = time.process_time() - c0
        s = t.jobscope_summary
        return {"i": i, "ok": True, "pid": os.getpid(), "out": out, "used": used,
                "cpu_s": s["cpu"]["total_s"]}
    except Exception as e:  # reported, not raised: the pool would hide which worker failed
        return {"i": i, "ok": False, "error": repr(e)}


def connectable(addr):
    fam = socket.AF_UNIX
    name = "\0" + addr[1:] if addr.startswith("@") else addr
    for kind in (socket.SOCK_SEQPACKET, socket.SOCK_STREAM, socket.SOCK_DGRAM):
        s = socket.socket(fam, kind)
        try:
            s.connect(name)
            return True
        except OSError:
            continue
        finally:
            s.close()
    return False


res = {"parent": os.getpid()}
outer = js.Tracker(interval=0.05, output=OUT).start()
addr = os.environ.get("JOBSCOPE_SOCKET")
pool = mp.get_context("fork").Pool(4)
try:
    res["workers"] = pool.map_async(work, range(4)).get(timeout=60)
    try:
        outer.stop()
        res["outer_stop"] = "ok"
    except Exception as e:
        res["outer_stop"] = repr(e)
    # the workers still live, with copies of everything the parent had open when they were forked
    res["socket_after_stop"] = connectable(addr) if addr else None
finally:
    pool.close()
    pool.join()
db = sqlite3.connect(OUT)
res["meta"] = dict(db.execute("select key, value from meta where key in "
                              "('monitor_pid','stop_unix_ns','root_pid')").fetchall())
print(json.dumps(res))
"""


@pytest.fixture
def lib_env():
    if not LIB.exists():
        pytest.skip(f"{LIB} not built")
    env = dict(os.environ, JOBSCOPE_LIBRARY=str(LIB))
    env.pop("JOBSCOPE_SOCKET", None)
    return env


def test_trackers_in_forked_workers(lib_env, tmp_path, js):
    out = tmp_path / "outer.db"
    script = tmp_path / "scenario.py"
    script.write_text(SCENARIO)
    p = subprocess.run([PYTHON, str(script), str(PYDIR), str(out)], env=lib_env, capture_output=True,
                       text=True, timeout=180)
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout.strip().splitlines()[-1])
    failed = [w for w in res["workers"] if not w["ok"]]
    assert not failed, f"workers' Trackers failed: {failed}"
    for w in res["workers"]:
        # the worker's own Tracker counted the CPU the worker burnt (kernel counts, 10 ms ticks)
        assert w["cpu_s"] is not None and w["cpu_s"] >= 0.9 * w["used"] - 0.05, w
        if w["out"]:
            wm = js.summary_json(w["out"])
            assert wm["command"] is not None
    assert res["outer_stop"] == "ok"
    meta = res["meta"]
    assert int(meta["monitor_pid"]) == res["parent"], meta
    assert int(meta["root_pid"]) == res["parent"], meta
    assert "stop_unix_ns" in meta  # complete
    assert res["socket_after_stop"] is False, "the outer marks socket outlived its monitor in the workers"
    assert js.summary_json(out)["state"] == "complete"
