# SPDX-License-Identifier: MIT
"""The report's advice on real recordings of jobs that waited for CPU (issue 24): the rule that fired is named
on the page (`data-rule` on each piece of advice), and a starved job is never told to request fewer cores.

- Starved by neighbours: the job's two CPU burners share the host's cores with burners outside the job (two per
  core of the host), without a cgroup of its own: the host's CPU pressure and busy share make it `cpu-starved`.
- Starved by a quota: the job sets its own cgroup's CPU quota to a tenth of a core and runs two burners
  (`run --cgroup auto`, needs root): `cpu-throttled`, nothing else about its cores.

Both burn a fixed CPU time (workloads/burn.py), so the load on the machine changes how long they take, not
what they do; the neighbours make the host busy whatever else runs.
"""
import os
import re
import subprocess
import sys

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
    return re.findall(r'data-rule="([a-z-]+)"', section), re.sub(r"<[^>]+>", "", section)


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
