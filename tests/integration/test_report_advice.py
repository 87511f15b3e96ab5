# SPDX-License-Identifier: MIT
"""The report's advice on real recordings of jobs that waited for CPU (issue 24): the rule that fired is named
on the page (`data-rule` on each piece of advice), and a starved job is never told to request fewer cores.

- Starved by neighbours: the job's two CPU burners share the host's cores with burners outside the job (two per
  core of the host), without a cgroup of its own: the host's CPU pressure and busy share make it `cpu-starved`.
- Starved by a quota: the job sets its own cgroup's CPU quota to a tenth of a core and runs two burners
  (`run --cgroup auto`, needs root): `cpu-throttled`, nothing else about its cores.

- Serial: one thread on 2 or more cores (`cpu-serial`, decided by the job's demand whatever the load).
- Over-allocated: four threads at once for a moment, then sleep (`cpu-over-allocated`, not serial).
- Memory near its limit: the monitor starts in a memory cgroup of 256 MiB, the job holds 228 MiB
  (`memory-near-limit`).
- An idle GPU on the fake NVML: one GPU busy, one at 2% (`gpu-idle` names the idle one only).

All burn a fixed CPU time (workloads/burn.py), so the load on the machine changes how long they take, not
what they do; the neighbours make the host busy whatever else runs. `summary --json` holds no advice (the
report computes it from the summary), so the page's `data-rule` attributes are what is checked.
"""
import html
import json
import os
import re
import subprocess
import sys
import time

import pytest

from conftest import PYTHON, WORKLOADS, assert_no_crash

BURN = str(WORKLOADS / "burn.py")

QUOTA_JOB = ("import subprocess, sys\n"
             "done = False\n"
             "for line in open('/proc/self/cgroup'):\n"
             "    _, ctl, path = line.rstrip('\\n').split(':', 2)\n"
             "    if 'cpu' in ctl.split(','):\n"
             "        open('/sys/fs/cgroup/' + ctl + path + '/cpu.cfs_quota_us', 'w').write('10000')\n"
             "        done = True\n"
             "    elif ctl == '' and not done and path.startswith('/jobscope'):\n"
             "        try:\n"
             "            open('/sys/fs/cgroup' + path + '/cpu.max', 'w').write('10000 100000')\n"
             "            done = True\n"
             "        except OSError:\n"
             "            pass\n"
             "if not done:\n"
             "    sys.exit(3)\n"
             f"ps = [subprocess.Popen([sys.executable, {BURN!r}, '0.25']) for _ in range(2)]\n"
             "sys.exit(max(p.wait() for p in ps))\n")


def advice_rules(js, recording):
    """The rules that fired on the report of `recording`, and the advice's text."""
    p = js("report", recording)
    assert_no_crash(p)
    assert p.returncode == 0, p.stderr
    text = open(p.stdout.strip(), encoding="utf-8").read()
    section = text[text.index('id="advice"'):]
    section = section[:section.index("</ul>")]
    return re.findall(r'data-rule="([a-z-]+)"', section), html.unescape(re.sub(r"<[^>]+>", "", section))


def no_fewer_cores(rules, text):
    assert "cpu-over-allocated" not in rules and "cpu-serial" not in rules, rules
    assert not re.search(r"Request \d+ cores?", text), text


def test_starved_by_neighbours(js, tmp_path):
    ncpu = os.cpu_count() or 1
    # two burners per core of the host, outside the job, for longer than the job runs
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * ncpu)]
    try:
        r = js.run(["sh", "-c", f"{PYTHON} {BURN} 0.6 & {PYTHON} {BURN} 0.6 & wait"], interval="0.2s",
                   extra=["--cgroup", "off"], name="starved")
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert r.returncode == 0, r.proc.stderr
    cpu = r.summary["cpu"]
    # the job got a fraction of the host: what the old advice read as "over-allocated"
    assert cpu["mean_cores"] < 0.5 * cpu["cores_available"], cpu
    rules, text = advice_rules(js, r.recording)
    assert "cpu-starved" in rules, text
    assert "waited for CPU" in text and "rule cpu-starved" in text, text
    no_fewer_cores(rules, text)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a cgroup needs root here")
def test_starved_by_quota(js):
    r = js.run([PYTHON, "-c", QUOTA_JOB], interval="0.2s", extra=["--cgroup", "auto"], name="quota")
    if r.returncode == 3 or "cgroup" not in r.summary:
        pytest.skip(f"no CPU quota could be set in the run's cgroup: {r.proc.stderr.strip()}")
    assert r.returncode == 0, r.proc.stderr
    thr = r.summary["cgroup"]["throttling"]
    assert thr["throttled_periods"] > 0.5 * thr["periods"], thr
    rules, text = advice_rules(js, r.recording)
    assert "cpu-throttled" in rules, text
    assert "cpu-starved" not in rules, text  # one cause, the quota's
    no_fewer_cores(rules, text)


# ---- the allocation rules, and memory and GPU, on real recordings ----------------------------------------
# Each job runs in a cgroup of its own (`--cgroup auto`, root), whose pressure gives the job's demand for
# cores (cores in use + CPU pressure some, per sample): one thread stays at or below 1 core however long it
# waits, several runnable threads go above it however little they run, so the verdicts hold under any load.

OVER_JOB = ("import subprocess, sys, time\n"
            f"ps = [subprocess.Popen([sys.executable, {BURN!r}, '0.15']) for _ in range(4)]\n"
            "rc = max(p.wait() for p in ps)\n"
            "time.sleep(8)\n"
            "sys.exit(rc)\n")


def own_cgroup(r):
    if "cgroup" not in r.summary:
        pytest.skip(f"the run got no cgroup of its own: {r.proc.stderr.strip()}")


@pytest.mark.skipif(os.geteuid() != 0, reason="making a cgroup needs root here")
def test_serial(js):
    """One thread burning 2 s of CPU on an allocation of every CPU of the host (2 or more): `cpu-serial`, and
    none of the rules that would ask for more cores or blame the neighbours."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one CPU: no allocation of 2 cores")
    r = js.run([PYTHON, BURN, "2"], interval="0.2s", extra=["--cgroup", "auto"], name="serial")
    assert r.returncode == 0, r.proc.stderr
    own_cgroup(r)
    cpu = r.summary["cpu"]
    assert cpu["cores_available"] >= 2 and cpu["max_cores"] < 1.2, cpu
    rules, text = advice_rules(js, r.recording)
    assert "cpu-serial" in rules, text
    assert "Request 1 core" in text, text
    for other in ("cpu-starved", "cpu-throttled", "cpu-over-allocated"):
        assert other not in rules, text


@pytest.mark.skipif(os.geteuid() != 0, reason="making a cgroup needs root here")
def test_over_allocated(js):
    """Four threads burn 0.15 s each at once, then the job sleeps 8 s: on 2 or more cores it used a small
    share of them (mean well under half) though it could run in parallel: `cpu-over-allocated`, not serial."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one CPU: no allocation of 2 cores")
    r = js.run([PYTHON, "-c", OVER_JOB], interval="0.1s", extra=["--cgroup", "auto"], name="over")
    assert r.returncode == 0, r.proc.stderr
    own_cgroup(r)
    cpu = r.summary["cpu"]
    assert cpu["mean_cores"] < 0.25 * cpu["cores_available"], cpu
    rules, text = advice_rules(js, r.recording)
    assert "cpu-over-allocated" in rules, text
    for other in ("cpu-serial", "cpu-starved", "cpu-throttled"):
        assert other not in rules, text


MiB = 1024 * 1024
MEM_LIMIT = 256 * MiB
MEM_JOB = ("import time\n"
           f"b = bytearray({228 * MiB})\n"
           "for k in range(0, len(b), 4096): b[k] = 1\n"
           "time.sleep(1.5)\n")


def limited_cgroup(limit):
    """A memory cgroup with `limit` for the monitor to start in (its own run cgroup is made below it, so the
    limit is the run's allocation): (directory to join, directories to remove, deepest first), or a reason
    to skip. cgroup v2: <root>/jobscope-test-PID with memory.max, the monitor in its leaf `mon`; v1: the
    memory hierarchy's jobscope-test-PID with memory.limit_in_bytes."""
    name = f"jobscope-test-{os.getpid()}"
    root = "/sys/fs/cgroup"
    try:
        if os.path.exists(f"{root}/cgroup.controllers"):
            if "memory" not in open(f"{root}/cgroup.subtree_control").read().split():
                return None, [], "the memory controller is not enabled below the root"
            top = f"{root}/{name}"
            os.mkdir(top)
            made = [top]
            open(f"{top}/memory.max", "w").write(str(limit))
            os.mkdir(f"{top}/mon")
            made.insert(0, f"{top}/mon")
            return f"{top}/mon", made, None
        top = f"{root}/memory/{name}"
        os.mkdir(top)
        open(f"{top}/memory.limit_in_bytes", "w").write(str(limit))
        return top, [top], None
    except OSError as e:
        return None, [], f"no memory cgroup with a limit could be made: {e}"


@pytest.mark.skipif(os.geteuid() != 0, reason="making a cgroup needs root here")
def test_memory_near_limit(js):
    """The monitor starts in a memory cgroup limited to 256 MiB (its run's cgroup made below it: the limit is
    the run's allocation); the job touches 228 MiB and holds it: its peak is over 90% of the limit, so
    `memory-near-limit` fires (with the limit and the peak it read), and neither OOM nor "far below"."""
    join, made, why = limited_cgroup(MEM_LIMIT)
    if why:
        pytest.skip(why)
    try:
        rec, sj = js.path("mem.db"), js.path("mem.summary.json")
        proc = subprocess.run([js.binary, "run", "-q", "-i", "0.2s", "--cgroup", "auto", "-o", str(rec),
                               "--summary-json", str(sj), "--", PYTHON, "-c", MEM_JOB],
                              cwd=js.tmp, capture_output=True, text=True, timeout=120,
                              preexec_fn=lambda: open(f"{join}/cgroup.procs", "w").write(str(os.getpid())))
    finally:
        for d in made:
            for _ in range(50):  # the run's own cgroup below is removed by jobscope as it ends
                try:
                    os.rmdir(d)
                    break
                except OSError:
                    time.sleep(0.1)
    assert_no_crash(proc)
    assert proc.returncode == 0, proc.stderr
    s = json.load(open(sj))
    if "cgroup" not in s:
        pytest.skip(f"the run got no cgroup of its own: {proc.stderr.strip()}")
    assert s["allocation"]["memory_limit_bytes"] == MEM_LIMIT, s["allocation"]
    assert s["cgroup"]["memory"]["oom_kills"] in (0, None), s["cgroup"]["memory"]
    rules, text = advice_rules(js, rec)
    assert "memory-near-limit" in rules, text
    assert "256 MiB" in text, text
    for other in ("oom-kill", "memory-far-below", "memory-host"):
        assert other not in rules, text


BUILD = os.path.abspath(os.environ.get("JOBSCOPE_BUILD", os.path.join(os.path.dirname(__file__), "..", "..", "build")))
FAKE_NVML = os.path.join(os.environ.get("JOBSCOPE_FAKE_NVML_DIR", os.path.join(BUILD, "tests", "fakes", "nvml")),
                         "libnvidia-ml.so.1")
GPU_SCENARIO = """driver_version 550.90.07
nvml_version 12.550.90.07
cuda_version 12040
device 0
name "NVIDIA H100 80GB HBM3"
uuid GPU-11111111-2222-3333-4444-555555555555
pci 00000000:19:00.0
memory_total 80GiB
value gpu_util_pct 90
value mem_util_pct 40
value mem_used_bytes 30GiB
value power_mw 250000
value power_limit_mw 700000
value temp_c 65
proc compute file:{main} used 20GiB
device 1
name "NVIDIA H100 80GB HBM3"
uuid GPU-66666666-7777-8888-9999-000000000000
pci 00000000:3B:00.0
memory_total 80GiB
value gpu_util_pct 2
value mem_util_pct 1
value mem_used_bytes 1GiB
value power_mw 70000
value power_limit_mw 700000
value temp_c 35
"""


@pytest.mark.skipif(not os.path.exists(FAKE_NVML), reason=f"fake NVML not built ({FAKE_NVML})")
def test_idle_gpu(js, tmp_path, monkeypatch):
    """Two GPUs on the fake NVML (tests/fakes/nvml), the job's main process on GPU 0 at 90% utilisation, GPU 1
    at 2% all along: `gpu-idle` names GPU 1 (1 of the job's 2 GPUs) and not GPU 0; `gpu-low` stays silent
    (90% is busy, 2% is idle, not low)."""
    scn = tmp_path / "nvml.scn"
    scn.write_text(GPU_SCENARIO.format(main=tmp_path / "main.pid"))
    monkeypatch.setenv("JOBSCOPE_NVML_LIBRARY", FAKE_NVML)
    monkeypatch.setenv("FAKE_NVML_SCENARIO", str(scn))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv("NVIDIA_VISIBLE_DEVICES", raising=False)
    job = [PYTHON, str(WORKLOADS / "gpu_job.py"), str(tmp_path / "main.pid"), str(tmp_path / "child.pid"), "2"]
    r = js.run(job, interval="0.2s", name="gpu")
    assert r.returncode == 0, r.proc.stderr
    assert len(r.summary["gpu"]["devices"]) == 2, r.summary["gpu"]
    rules, text = advice_rules(js, r.recording)
    assert "gpu-idle" in rules, text
    assert "1 of the job's 2 GPUs stayed idle" in text, text
    idle = text[text.index("stayed idle"):]
    idle = idle[:idle.index("rule gpu-idle")]
    assert "2%" in idle and "90%" not in idle, idle
    assert "gpu-low" not in rules, text
