# SPDX-License-Identifier: MIT
"""`jobscope job`, `merge` and the summary of a merged job recording (docs/BATCH.md).

On a real SLURM cluster (tests/infra, needs root): batch jobs on 2 and 3 nodes run a CPU-bound workload
(`srun stress-ng --cpu 1 -t 5`, one task per node) beside one monitor per node started the user-run way
(`srun --ntasks-per-node=1 --overlap jobscope job -d DIR &`). Every node leaves DIR/JOBID-NODE.db named after
its SLURM node, the last node to finish merges them into DIR/JOBID.db, and the job's CPU total matches the
kernel's own accounting within 2%: with proctrack/linuxproc (slurmstepd roots) against GNU time around each
task and around the batch script's own work; with task/cgroup against the job cgroup's cpuacct.usage on each
node. With task/cgroup a daemon the job starts with setsid, which outlives its step, is counted and does not
keep the monitor past the stop file.

Without SLURM: merge's refusals (a truncated recording, a file given twice, a merged recording merged again,
recordings of different jobs), with node recordings made by `jobscope job` from a SLURM-like environment.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import CRASH_MARKERS, assert_clean_error, assert_no_crash, gnu_time_seconds
from infra import needs_slurm, slurm_cluster

STRESS = shutil.which("stress-ng")
needs_stress = pytest.mark.skipif(STRESS is None, reason="stress-ng not installed (scripts/deps.sh)")


def meta(db):
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return dict(con.execute("SELECT key, value FROM meta"))
    finally:
        con.close()


def install_binary(jobscope_bin, cluster):
    """The binary where the job's (non-root) user may run it."""
    dest = cluster.workdir / "jobscope"
    if not dest.exists():
        shutil.copy2(jobscope_bin, dest)
        dest.chmod(0o755)
    return dest


# ---- user-run pattern on a real cluster ----

# the batch script: GNU time around all of it (its shell, the sruns, sleep, touch) for the oracle
BATCH = """#!/bin/bash
/usr/bin/time -f '%U %S' -o {dir}/time-batch bash {dir}/inner.sh
"""

# the user-run pattern: one monitor per node beside the work, stopped by a file at the end; the work starts
# once every node's recording exists (a step that ends before its node's monitor starts is not seen without
# a cgroup)
INNER = """D={dir}
echo $SLURMD_NODENAME > $D/batch-node
srun --ntasks-per-node=1 --overlap {js} job -d $D -i {interval} --until-file $D/stop 2>$D/monitor.err &
while [ $(ls $D | grep -c '^[0-9]*-.*[.]db$') -lt $SLURM_JOB_NUM_NODES ]; do sleep 0.1; done
sleep 0.5
bash $D/work.sh
touch $D/stop
wait
"""

WORK = ("srun --ntasks-per-node=1 bash -c \"/usr/bin/time -f '%U %S' -o $D/time-\\$SLURMD_NODENAME "
        "stress-ng --cpu 1 -t 5 -q\"")


def run_job(cluster, js_path, name, nodes, interval="1s", work=WORK, extra_sbatch=()):
    d = cluster.shared_dir(name)
    script = d / "job.sh"
    script.write_text(BATCH.format(dir=d))
    script.chmod(0o755)
    (d / "inner.sh").write_text(INNER.format(dir=d, js=js_path, interval=interval))
    (d / "work.sh").write_text(f"export D={d}\n{work}\n")
    job = cluster.sbatch([f"-N{nodes}", "-o", str(d / "out.txt"), *extra_sbatch, str(script)], user=cluster.user)
    cluster.wait_job(job, "COMPLETED", timeout=90)
    return job, d


def check_job(js, cluster, job, d, nodes):
    """Every node's recording, named after its SLURM node; the automatic merge; the summary. Returns the
    summary and the job's node names."""
    for f in ("monitor.err", "out.txt"):
        text = (d / f).read_text(errors="replace") if (d / f).exists() else ""
        assert not any(k in text for k in CRASH_MARKERS), text
    names = sorted(p.name[len(f"{job}-"):-3] for p in d.glob(f"{job}-*.db"))
    assert len(names) == nodes and set(names) <= set(cluster.nodes), names
    for n in names:
        rec = d / f"{job}-{n}.db"
        assert rec.exists(), f"no recording for node {n}: {sorted(p.name for p in d.iterdir())}\n" \
                             f"{(d / 'monitor.err').read_text() if (d / 'monitor.err').exists() else ''}"
        m = meta(rec)
        assert m["job_node"] == n and m["host"] == n and m["job_id"] == str(job)
        assert m["batch_scheduler"] == "slurm" and m["mode"] == "job"
        assert m["stop_reason"] == "until-file"
        assert float(m["job_alloc_cores"]) >= 1
        st = os.stat(rec)
        assert st.st_uid == cluster.uid  # written by the job's user
    merged = d / f"{job}.db"
    # the last node to finish merged them all (no node's file is missing)
    assert merged.exists(), f"no automatic merge: {sorted(p.name for p in d.iterdir())}\n{(d / 'out.txt').read_text()}"
    mm = meta(merged)
    assert mm["merged"] == "1" and mm["merged_nodes"] == str(nodes) and mm["job_id"] == str(job)
    s = js.summary_json(merged)
    assert [x["node"] for x in s["nodes"]] == names
    assert s["node_count"] == nodes
    for x in s["nodes"]:
        assert x["state"] == "complete"
        assert x["samples"]["taken"] >= 4
    return s, names


def self_cost(db):
    """The monitor's CPU per sample on a node, from its self table (seconds)."""
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        cols = [r[1] for r in con.execute("PRAGMA table_info(self)")]
        u = "utime_us" if "utime_us" in cols else None
        if not u:
            return None
        # the slope: the monitor's CPU from its first sample to its last, per sample (its start-up aside)
        rows = con.execute("SELECT utime_us + stime_us FROM self ORDER BY sample").fetchall()
        return (rows[-1][0] - rows[0][0]) / 1e6 / (len(rows) - 1) if len(rows) > 1 else None
    finally:
        con.close()


@pytest.fixture(scope="module")
def linuxproc_cluster(tmp_path_factory):
    with slurm_cluster(tmp_path_factory.mktemp("slurm"), nodes=3, proctrack="linuxproc") as c:
        yield c


@needs_slurm
@needs_stress
@pytest.mark.parametrize("nodes", [2, 3])
def test_user_run_linuxproc(js, jobscope_bin, linuxproc_cluster, nodes):
    c = linuxproc_cluster
    exe = install_binary(jobscope_bin, c)
    job, d = run_job(c, exe, f"lp{nodes}", nodes)
    s, names = check_job(js, c, job, d, nodes)
    batch_node = (d / "batch-node").read_text().strip()
    for n in names:
        m = meta(d / f"{job}-{n}.db")
        assert m["job_watch"] == "slurmstepd" and m["scope_kind"] == "tree"
    # the oracle: GNU time around each node's task, and around the batch script's own work (its sruns)
    tasks = sum(gnu_time_seconds(d / f"time-{n}") for n in names)
    # the batch script: its shell, its sruns (the monitors' too), sleep, touch: the job's on the batch node too
    batch = gnu_time_seconds(d / "time-batch")
    want = tasks + batch
    got = s["cpu"]["total_s"]
    print(f"linuxproc {nodes} nodes: merged {got:.3f} CPU-s, GNU time {want:.3f} (tasks {tasks:.3f}, "
          f"batch {batch:.3f}), error {100 * (got - want) / want:+.2f}%; cost per sample "
          f"{[round(self_cost(d / f'{job}-{n}.db') * 1e3, 2) for n in names]} ms")
    print("  per node (recorded - GNU time):",
          {x["node"]: round(x["cpu"]["total_s"] - gnu_time_seconds(d / f"time-{x['node']}")
                            - (batch if x["node"] == batch_node else 0), 3) for x in s["nodes"]})
    assert s["exact"]["cpu"], s["nodes"]
    assert abs(got - want) <= 0.02 * want + 0.03, (got, want)
    # each node's task on its own node: the node totals split the same way
    for x in s["nodes"]:
        mine = gnu_time_seconds(d / f"time-{x['node']}")
        extra = batch if x["node"] == batch_node else 0
        assert abs(x["cpu"]["total_s"] - mine - extra) <= 0.05 * mine + 0.05, (x["node"], x["cpu"]["total_s"], mine, extra)
    # a manual merge gives the same job; merging again is refused
    out = d / "again.db"
    t0 = time.monotonic()
    proc = js("merge", "-o", out, *[d / f"{job}-{n}.db" for n in names])
    took = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    print(f"merge of {nodes} nodes: {took:.3f} s")
    assert abs(js.summary_json(out)["cpu"]["total_s"] - got) < 1e-6
    assert_clean_error(js("merge", "-o", d / "third.db", out, d / f"{job}-{names[0]}.db"))
    # export: a node column, every node's rows
    proc = js("export", "-f", "csv", out)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split(",")[:4] == ["time", "unix_s", "sample", "node"]
    assert {ln.split(",")[3] for ln in lines[1:]} == set(names)


@pytest.fixture(scope="module")
def cgroup_cluster(tmp_path_factory):
    with slurm_cluster(tmp_path_factory.mktemp("slurm"), nodes=3, proctrack="cgroup") as c:
        yield c


# with task/cgroup: the job cgroup's own accounting on each node, read by a step once the work is done
CG_WORK = (WORK + "\n"
           "kill -STOP $DPID; sleep 0.3\n"  # the daemon holds still (alive) while the accounting is read
           "srun --ntasks-per-node=1 --overlap bash -c 'cat /sys/fs/cgroup/cpuacct/slurm_$SLURMD_NODENAME/"
           "uid_$SLURM_JOB_UID/job_$SLURM_JOB_ID/cpuacct.usage > $D/cpuacct-$SLURMD_NODENAME'")

DAEMON = ("setsid {py} -c 'import time\nend=time.time()+{secs}\nwhile time.time()<end: pass' </dev/null >/dev/null 2>&1 &\n"
          "DPID=$!")


@needs_slurm
@needs_stress
def test_user_run_cgroup_with_daemon(js, jobscope_bin, cgroup_cluster):
    c = cgroup_cluster
    exe = install_binary(jobscope_bin, c)
    py = "/usr/bin/python3"
    # a daemon started by the job (setsid: out of every process tree) that outlives the main step and the
    # stop file: 40 s of CPU, killed by SLURM when the job ends
    work = DAEMON.format(py=py, secs=40) + "\n" + CG_WORK
    t0 = time.time()
    job, d = run_job(c, exe, "cg3", 3, work=work)
    s, names = check_job(js, c, job, d, 3)
    batch_node = (d / "batch-node").read_text().strip()
    for n in names:
        m = meta(d / f"{job}-{n}.db")
        assert m["job_watch"] == "cgroup" and m["scope_kind"] == "cgroup", m
        assert m["cgroup_path"].endswith(f"/job_{job}"), m["cgroup_path"]
    want = sum(int((d / f"cpuacct-{n}").read_text()) / 1e9 for n in names)
    got = s["cpu"]["total_s"]
    print(f"cgroup 3 nodes: merged {got:.3f} CPU-s, cpuacct {want:.3f}, error {100 * (got - want) / want:+.2f}%")
    # the monitors ran a little after the cpuacct read (the read's own step, their closing samples)
    assert want - 0.02 <= got <= want * 1.02 + 0.05, (got, want)
    # the daemon ran on the batch node (n1) and is counted there: beyond what the task used
    first = d / f"{job}-{batch_node}.db"
    n1 = next(x for x in s["nodes"] if x["node"] == batch_node)
    task = gnu_time_seconds(d / f"time-{batch_node}")
    con = sqlite3.connect(f"file:{first}?mode=ro&immutable=1", uri=True)
    cmds = [r[0] for r in con.execute("SELECT cmdline FROM proc_info")]
    con.close()
    assert any("while time.time()<end" in x for x in cmds), cmds
    assert n1["cpu"]["total_s"] > task + 0.5, (n1["cpu"]["total_s"], task)
    # and it did not keep the monitor alive: the job (40 s daemon) ended well before the daemon would have
    stop = int(meta(first)["stop_unix_ns"]) / 1e9
    assert stop - t0 < 35, stop - t0
    assert meta(first)["stop_reason"] == "until-file"


# ---- merge's refusals, without a cluster ----

def node_recording(js, d, job, node, extra_env=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_", "OAR_"))}
    env.update({"SLURM_JOB_ID": str(job), "SLURMD_NODENAME": node, "SLURM_JOB_NODELIST": f"{node}",
                "SLURM_CPUS_ON_NODE": "1"})
    env.update(extra_env or {})
    proc = subprocess.run([js.binary, "job", "-d", str(d), "--duration", "1", "-i", "0.25", "--no-merge", "-q"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert_no_crash(proc)
    assert proc.returncode == 0, proc.stderr
    rec = d / f"{job}-{node}.db"
    assert rec.exists() and (d / f".{job}-{node}.done").exists()
    return rec


def test_merge_refusals(js, tmp_path):
    a = node_recording(js, tmp_path, 77, "na")
    b = node_recording(js, tmp_path, 77, "nb")
    good = tmp_path / "job.db"
    proc = js("merge", "-o", good, a, b)
    assert proc.returncode == 0, proc.stderr
    s = js.summary_json(good)
    assert [x["node"] for x in s["nodes"]] == ["na", "nb"]
    # the same file twice (by another name too)
    assert_clean_error(js("merge", "-o", tmp_path / "x.db", a, a))
    assert_clean_error(js("merge", "-o", tmp_path / "x.db", a, tmp_path / "." / a.name))
    # the output exists: a job is merged once
    assert_clean_error(js("merge", "-o", good, a, b))
    # a merged recording merged again
    assert_clean_error(js("merge", "-o", tmp_path / "x.db", good, a))
    # a truncated recording: one line, nothing written
    t = tmp_path / "77-nc.db"
    t.write_bytes(b.read_bytes()[: os.path.getsize(b) // 2])
    proc = js("merge", "-o", tmp_path / "x.db", a, t)
    assert_clean_error(proc)
    assert "77-nc.db" in proc.stderr
    # garbage, and an empty file
    g = tmp_path / "garbage.db"
    g.write_bytes(b"not a recording at all\n" * 100)
    assert_clean_error(js("merge", "-o", tmp_path / "x.db", a, g))
    e = tmp_path / "empty.db"
    e.write_bytes(b"")
    assert_clean_error(js("merge", "-o", tmp_path / "x.db", a, e))
    # another job's node
    other = node_recording(js, tmp_path, 78, "na")
    assert_clean_error(js("merge", "-o", tmp_path / "x.db", a, other))
    assert not (tmp_path / "x.db").exists()
    assert not list(tmp_path.glob("x.db.merging*"))


def test_job_outside_a_job(js, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_", "OAR_"))}
    proc = subprocess.run([js.binary, "job", "-d", str(tmp_path), "--duration", "1"], env=env,
                          capture_output=True, text=True, timeout=30)
    assert_clean_error(proc)
    assert "not inside a batch job" in proc.stderr


def test_job_pbs_nodefile(js, tmp_path):
    """PBS: the node file names the nodes; this node is found by its host name; the automatic merge happens
    when the only node is done."""
    host = os.uname().nodename
    nf = tmp_path / "nodefile"
    nf.write_text(f"{host}\n{host}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_", "OAR_"))}
    env.update({"PBS_JOBID": "123.server", "PBS_NODEFILE": str(nf)})
    proc = subprocess.run([js.binary, "job", "-d", str(tmp_path), "--duration", "1", "-i", "0.25"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert_no_crash(proc)
    assert proc.returncode == 0, proc.stderr
    m = meta(tmp_path / f"123.server-{host}.db")
    assert m["batch_scheduler"] == "pbs" and m["job_alloc_cores"] == "2" and m["job_watch"] == "user"
    assert m["job_nodefile"] == str(nf)
    assert meta(tmp_path / "123.server.db")["merged"] == "1"


def test_job_sigterm_closes_the_recording(js, tmp_path):
    """SIGTERM (SLURM's end of a step) ends the monitor with a closing sample and exit status 0; the node is
    marked complete and, the job having one node, merged."""
    import signal
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_", "OAR_"))}
    env.update({"SLURM_JOB_ID": "91", "SLURMD_NODENAME": "nx", "SLURM_JOB_NODELIST": "nx"})
    p = subprocess.Popen([js.binary, "job", "-d", str(tmp_path), "-i", "0.2"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    rec = tmp_path / "91-nx.db"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not rec.exists():
        time.sleep(0.05)
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    m = meta(rec)
    assert m["stop_reason"] == "signal SIGTERM" and int(m["samples_taken"]) >= 3
    assert (tmp_path / ".91-nx.done").exists()
    assert meta(tmp_path / "91.db")["merged"] == "1"
    assert "91-nx.db" in err


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm")
def test_job_node_local_moved_and_killed(js, tmp_path):
    """--node-local (what a network file system gets): written in $TMPDIR, here another file system than DIR
    (a copy, not a rename), moved into DIR at the end; a monitor killed with SIGKILL leaves its node-local
    file, which the start said where to find, readable up to its last sample."""
    import signal
    local = Path(os.environ.get("JS_TEST_SHM", "/dev/shm")) / f"jobscope-test-{os.getpid()}"
    local.mkdir()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_", "OAR_"))}
        env.update({"SLURM_JOB_ID": "92", "SLURMD_NODENAME": "ny", "SLURM_JOB_NODELIST": "ny,nz",
                    "TMPDIR": str(local)})
        proc = subprocess.run([js.binary, "job", "-d", str(tmp_path), "--node-local", "--duration", "1", "-i", "0.25"],
                              env=env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert "moved to" in proc.stderr and str(local) in proc.stderr
        rec = tmp_path / "92-ny.db"
        m = meta(rec)
        assert m["job_written_at"].startswith(str(local)) and m["job_recording"] == str(rec)
        assert not list(local.iterdir())  # moved, nothing left behind
        assert not (tmp_path / "92.db").exists()  # nz has not finished: no merge yet
        # killed: the node-local file stays where the start said
        env["SLURMD_NODENAME"] = "nz"
        p = subprocess.Popen([js.binary, "job", "-d", str(tmp_path), "--node-local", "-i", "0.2"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not list(local.glob("jobscope-92-nz.*.db")):
            time.sleep(0.05)

        def taken():  # samples committed so far (a busy machine may take a second before the first)
            try:
                with sqlite3.connect(f"file:{next(local.glob('jobscope-92-nz.*.db'))}?mode=ro", uri=True) as db:
                    return db.execute("SELECT count(*) FROM samples").fetchone()[0]
            except (sqlite3.Error, StopIteration):
                return 0
        while time.monotonic() < deadline + 20 and taken() < 3:
            time.sleep(0.05)
        p.send_signal(signal.SIGKILL)
        _, err = p.communicate(timeout=30)
        left = list(local.glob("jobscope-92-nz.*.db"))
        assert len(left) == 1 and str(left[0]) in err, (left, err)
        assert not (tmp_path / "92-nz.db").exists()
        s = js.summary_json(left[0])
        assert s["state"] == "incomplete" and s["samples"]["taken"] >= 2
    finally:
        shutil.rmtree(local, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="watches root's processes as a PBS job's user")
def test_job_report_beside_the_recording(js, tmp_path):
    """--report (the SPANK plugin's `report` option): the node's HTML report lands in DIR beside its recording,
    also when the recording is written node-local first."""
    local = tmp_path / "local"
    local.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_", "OAR_"))}
    env.update({"SLURM_JOB_ID": "93", "SLURMD_NODENAME": "nr", "SLURM_JOB_NODELIST": "nr", "TMPDIR": str(local)})
    proc = subprocess.run([js.binary, "job", "-d", str(out), "--node-local", "--report", "--duration", "1",
                           "-i", "0.25"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    page = out / "93-nr.html"
    assert page.exists(), sorted(p.name for p in out.iterdir())
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "</html>" in text
    assert not list(local.iterdir())  # nothing left node-local


def test_merged_summary_flags(js, tmp_path):
    """The job's summary flags: node `busy` (a PBS job's view: the user's processes, here root's, with a
    busy loop among them) over a 1 MiB memory limit, node `idle` (a SLURM job with no step here): idle,
    imbalance, memory near the limit."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_", "OAR_"))}
    busy = subprocess.Popen(["/usr/bin/python3", "-c",
                             "import time\nend=time.time()+2.5\nwhile time.time()<end: pass"])
    try:
        env = dict(base, PBS_JOBID="555", SLURM_MEM_PER_NODE="1", SLURM_CPUS_ON_NODE="1")
        proc = subprocess.run([js.binary, "job", "-d", str(tmp_path), "--node", "busy", "--duration", "2",
                               "-i", "0.25", "--no-merge", "-q"], env=env, capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr
    finally:
        busy.wait(10)
    env = dict(base, SLURM_JOB_ID="555", SLURMD_NODENAME="idle", SLURM_CPUS_ON_NODE="2")
    proc = subprocess.run([js.binary, "job", "-d", str(tmp_path), "--duration", "1", "-i", "0.25", "--no-merge",
                           "-q"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "555.db"
    assert js("merge", "-q", "-o", out, tmp_path / "555-busy.db", tmp_path / "555-idle.db").returncode == 0
    s = js.summary_json(out)
    by = {x["node"]: x for x in s["nodes"]}
    assert by["busy"]["cpu"]["total_s"] > 1.0 and by["idle"]["cpu"]["total_s"] == 0
    assert by["busy"]["memory_limit_bytes"] == 1024 * 1024 and by["busy"]["memory_fraction"] >= 0.9
    flags = {(f["kind"], f["node"]) for f in s["flags"]}
    assert ("idle", "idle") in flags and ("memory", "busy") in flags, s["flags"]
    assert not any(f[1] == "busy" and f[0] in ("idle", "imbalance") for f in flags)
    text = js("summary", out).stdout
    assert "flag           node idle idle" in text and "memory near the limit on node busy" in text


@pytest.mark.parametrize("args", [["-d", "/nonexistent/dir"], ["-d", "/etc/passwd"], ["--track", "bogus"],
                                  ["--stepd-pid", "x"], ["--step", "a/b"], ["--node", ".."], ["extra"]])
def test_job_bad_arguments(js, tmp_path, args):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_", "OAR_"))}
    env["SLURM_JOB_ID"] = "93"
    proc = subprocess.run([js.binary, "job", *args], env=env, cwd=str(tmp_path), capture_output=True, text=True,
                          timeout=30)
    assert_clean_error(proc)
    assert not list(tmp_path.iterdir())


def test_report_of_a_merged_job_draws_every_node(js, tmp_path):
    """A merged recording carries every node (docs/REPORT.md said recordings could not): its report has the
    Nodes section and each node's name."""
    d = tmp_path / "mon"
    d.mkdir()
    nodes = ("na", "nb")
    recs = [node_recording(js, d, 94, n, {"SLURM_JOB_NODELIST": ",".join(nodes)}) for n in nodes]
    out = tmp_path / "94.db"
    assert js("merge", "-q", "-o", out, *recs).returncode == 0
    html = tmp_path / "94.html"
    r = js("report", "-o", html, out)
    assert r.returncode == 0, r.stderr
    text = html.read_text()
    assert 'id="sec-nodes"' in text, "no Nodes section in the report of a 2-node job"
    for n in nodes:
        assert n in text


def test_merged_summary_imbalance(js, tmp_path):
    """Four synthetic nodes (bench/synth_recording: node k runs at 1 - 0.25 k of node 0's load): the last one
    is under half the mean CPU, flagged as imbalance; the job's CPU is the sum of the nodes'."""
    build = Path(os.environ.get("JOBSCOPE_BUILD", js.binary.rsplit("/", 1)[0]))
    synth = build / "bench" / "synth_recording"
    if not synth.exists():
        pytest.skip(f"{synth} not built")
    files = []
    for k in range(4):
        f = tmp_path / f"8-s{k}.db"
        subprocess.run([str(synth), str(f), "0.05", "1", str(k)], check=True, capture_output=True, timeout=60)
        con = sqlite3.connect(f)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('job_id', '8'), ('job_node', ?), ('stop_unix_ns', "
                    "(SELECT value FROM meta WHERE key = 'start_unix_ns') + 180000000000)", (f"s{k}",))
        con.commit()
        con.close()
        files.append(f)
    out = tmp_path / "8.db"
    assert js("merge", "-q", "-o", out, *files).returncode == 0
    s = js.summary_json(out)
    cpu = [x["cpu"]["total_s"] for x in s["nodes"]]
    assert cpu[0] > cpu[1] > cpu[2] > cpu[3] > 0
    assert abs(s["cpu"]["total_s"] - sum(cpu)) < 1e-6
    flags = {(f["kind"], f["node"]) for f in s["flags"]}
    assert flags == {("imbalance", "s3")}, s["flags"]
