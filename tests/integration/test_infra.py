# SPDX-License-Identifier: MIT
"""The test infrastructure itself (tests/infra/ and infra.py): a real SLURM cluster of several nodes on this
host, a SPANK plugin loaded through plugstack.conf, a cgroup-tracked cluster, and a real Prometheus server
scraping a loopback exposition. Later tests build on exactly these behaviours."""
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import wait_for
from infra import (
    INFRA,
    build_spank_probe,
    exposition_server,
    free_port_block,
    needs_prometheus,
    needs_slurm,
    needs_spank,
    parse_exports,
    prometheus_server,
    promtool_check,
    read_probe_files,
    slurm_cluster,
    SLURM_PORTS,
)

GOOD_EXPOSITION = """\
# HELP js_infra_value A gauge served to the test Prometheus.
# TYPE js_infra_value gauge
js_infra_value{kind="test"} 42
"""


def proc_state(pid):
    """The state letter of /proc/PID/stat, or None when the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def gone(pid):
    return proc_state(pid) in (None, "Z", "X")


def proc_uid(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid line for {pid}")


def proc_environ(pid):
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)


def proc_cgroups(pid):
    """{controller: path} from /proc/PID/cgroup (v1 lines "4:memory:/path"; "" names the v2 line)."""
    cgroups = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(","):
            cgroups[c] = path
    return cgroups


def command_in(procs_file, comm):
    """The first PID listed in a cgroup.procs file whose command name is `comm`, or None."""
    try:
        pids = [int(p) for p in Path(procs_file).read_text().split()]
    except FileNotFoundError:
        return None
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == comm:
                return pid
        except FileNotFoundError:
            pass
    return None


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with slurm_cluster(tmp_path_factory.mktemp("slurm"), nodes=3) as c:
        yield c


@needs_slurm
def test_srun_runs_on_every_node(cluster):
    out = cluster.run(["srun", "-N3", "hostname"]).stdout
    assert sorted(out.split()) == ["n1", "n2", "n3"]
    assert cluster.nodes == ["n1", "n2", "n3"] and cluster.nodelist == "n[1-3]"


@needs_slurm
def test_sbatch_on_two_nodes_completes_with_output(cluster):
    script = cluster.workdir / "two_nodes.sh"
    script.write_text(
        "#!/bin/sh\n"
        'echo "batch host=$(hostname) node=$SLURMD_NODENAME nodes=$SLURM_JOB_NODELIST"\n'
        "srun --ntasks-per-node=1 --overlap sh -c "
        "'echo \"task $SLURM_PROCID host=$(hostname) node=$SLURMD_NODENAME step=$SLURM_STEP_ID\"' | sort\n"
    )
    jobid = cluster.sbatch(["-N2", "-o", "two_nodes-%j.out", str(script)])
    job = cluster.wait_job(jobid, "COMPLETED", timeout=30)
    assert job["NodeList"] == "n[1-2]" and job["ExitCode"] == "0:0", job
    out = Path(job["StdOut"])
    assert out == cluster.workdir / f"two_nodes-{jobid}.out"
    assert out.read_text().splitlines() == [
        "batch host=n1 node=n1 nodes=n[1-2]",
        "task 0 host=n1 node=n1 step=0",
        "task 1 host=n2 node=n2 step=0",
    ]


@needs_slurm
def test_jobs_run_as_the_test_user(cluster):
    out = cluster.run(["srun", "-N3", "sh", "-c", "echo $(id -u) $SLURM_JOB_USER"], user=cluster.user).stdout
    assert out.splitlines() == [f"{cluster.uid} {cluster.user}"] * 3
    jobid = cluster.sbatch(["-N1", "-o", "as_user-%j.out", "--wrap", "id -un"], user=cluster.user)
    job = cluster.wait_job(jobid, "COMPLETED", timeout=30)
    assert job["UserId"] == f"{cluster.user}({cluster.uid})", job
    out = Path(job["StdOut"])
    assert out.read_text() == f"{cluster.user}\n"
    assert out.stat().st_uid == cluster.uid


@needs_slurm
def test_scancel_ends_a_running_job_and_its_tasks(cluster):
    jobid = cluster.sbatch(["-N3", "--wrap", "srun --ntasks-per-node=1 --overlap sleep 300"], user=cluster.user)
    cluster.wait_job(jobid, "RUNNING", timeout=30)

    def task_pids():
        pids = {}
        for node in cluster.nodes:
            # (scontrol lists PID -1 for a task slurmstepd has not forked yet)
            rows = [pid for pid, step, localid in cluster.listpids(f"{jobid}.0", node) if localid == 0 and pid > 0]
            if not rows:
                return None
            try:  # forked by slurmstepd, not yet the task's command: look again
                if Path(f"/proc/{rows[0]}/comm").read_text().strip() != "sleep":
                    return None
            except OSError:
                return None
            pids[node] = rows[0]
        return pids

    pids = wait_for(task_pids, 15, interval=0.1, what=f"a task of step {jobid}.0 on every node")
    for node, pid in pids.items():
        # what a monitor sees of a task without asking SLURM: the command, the user, the step in the parent's
        # command line, the job in the environment
        assert Path(f"/proc/{pid}/comm").read_text().strip() == "sleep"
        assert proc_uid(pid) == cluster.uid
        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        assert Path(f"/proc/{parent}/cmdline").read_bytes().rstrip(b"\0 ") == f"slurmstepd: [{jobid}.0]".encode()
        env = proc_environ(pid)
        assert (env["SLURM_JOB_ID"], env["SLURM_STEP_ID"], env["SLURMD_NODENAME"]) == (str(jobid), "0", node)

    cluster.run(["scancel", str(jobid)])
    cluster.wait_job(jobid, "CANCELLED", timeout=30)
    wait_for(lambda: all(gone(pid) for pid in pids.values()), 15, what="the cancelled tasks to end")


@needs_spank
def test_spank_plugin_runs_on_every_node(cluster, tmp_path):
    plugin = build_spank_probe(tmp_path)
    out = cluster.shared_dir("probe")
    cluster.add_spank(plugin, [f"dir={out}"])
    try:
        assert "--probe" in cluster.run(["srun", "--help"]).stdout  # plugstack.conf is read by each srun
        cluster.run(["srun", "-N3", "--ntasks-per-node=1", "--probe=hello", "true"], user=cluster.user)
        records = read_probe_files(out)
        assert [(r["task"], r["node"], r["host"], r["uid"], r["tag"]) for r in records] == [
            (str(i), node, node, str(cluster.uid), "hello") for i, node in enumerate(cluster.nodes)
        ]
        cluster.run(["srun", "-N3", "true"])  # a step without --probe is left alone
        assert len(read_probe_files(out)) == 3
    finally:
        cluster.clear_spank()


@needs_slurm
def test_cgroup_cluster_puts_each_step_in_its_cgroups(tmp_path):
    with slurm_cluster(tmp_path, nodes=2, proctrack="cgroup") as c:
        jobid = c.sbatch(["-N2", "--wrap", "srun --ntasks-per-node=1 --overlap sleep 300"], user=c.user)
        c.wait_job(jobid, "RUNNING", timeout=30)
        for rank, node in enumerate(c.nodes):
            # SLURM's cgroup v1 layout, as built by Debian's multiple-slurmd build: slurm_<node> (a single-slurmd
            # build uses "slurm"), then uid_<uid>/job_<id>/step_<step>; memory and cpuacct add task_<n>
            job_cg = f"/slurm_{node}/uid_{c.uid}/job_{jobid}"
            procs = Path(f"/sys/fs/cgroup/freezer{job_cg}/step_0/cgroup.procs")
            # (slurmstepd forks each task into the step's cgroups before it execs the command)
            pid = wait_for(lambda: command_in(procs, "sleep"), 15, interval=0.1, what=f"sleep in {procs}")
            cg = proc_cgroups(pid)
            assert cg["freezer"] == f"{job_cg}/step_0"
            assert cg["cpuset"] == f"{job_cg}/step_0"
            assert cg["memory"] == f"{job_cg}/step_0/task_0"  # task_<local id> ...
            assert cg["cpuacct"] == f"{job_cg}/step_0/task_{rank}"  # ... but task_<global rank> here
            assert int(Path(f"/sys/fs/cgroup/memory{job_cg}/memory.usage_in_bytes").read_text()) > 0
            assert pid in [p for p, _, _ in c.listpids(f"{jobid}.0", node)]
        # the batch script (named slurm_script by slurmd) has a step of its own on the first node
        batch = Path(f"/sys/fs/cgroup/freezer/slurm_n1/uid_{c.uid}/job_{jobid}/step_batch/cgroup.procs")
        pid = wait_for(lambda: command_in(batch, "slurm_script"), 15, interval=0.1, what=f"the script in {batch}")
        assert proc_cgroups(pid)["memory"] == f"/slurm_n1/uid_{c.uid}/job_{jobid}/step_batch/task_0"
        c.run(["scancel", str(jobid)])
        c.wait_job(jobid, "CANCELLED", timeout=30)
        job_dirs = [Path(f"/sys/fs/cgroup/{ctrl}/slurm_{n}/uid_{c.uid}/job_{jobid}")
                    for ctrl in ("freezer", "memory", "cpuacct", "cpuset") for n in c.nodes]
        wait_for(lambda: not any(d.exists() for d in job_dirs), 15, what="SLURM to remove the job's cgroups")


@needs_slurm
def test_slurm_scripts_restart_recover_and_stop_idempotently(tmp_path):
    state = Path(tempfile.mkdtemp(prefix="js-slurm-", dir="/tmp"))
    state.chmod(0o755)
    port = free_port_block(2, SLURM_PORTS)
    start = [str(INFRA / "slurm-start.sh"), "-d", str(state), "-n", "1", "-p", str(port)]
    stop = [str(INFRA / "slurm-stop.sh"), "-d", str(state)]

    def run(argv):
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"{argv} exited {proc.returncode}:\n{proc.stderr}"
        return proc

    def daemons():
        return [int(p.read_text()) for p in (state / "run").glob("*.pid")]

    try:
        first = run(start)
        env = parse_exports(first.stdout)
        assert env["SLURM_CONF"] == f"{state}/etc/slurm.conf" and env["JS_SLURM_NODES"] == "n1"
        again = run(start)  # the same cluster is up: only the environment again
        assert again.stdout == first.stdout and "already up" in again.stderr
        pids = daemons()
        assert len(pids) == 3  # munged, slurmctld, slurmd n1

        for pid in pids:  # a killed run: stale pidfiles and munge socket
            os.kill(pid, signal.SIGKILL)
        wait_for(lambda: all(gone(p) for p in pids), 10, what="the killed daemons")
        assert (state / "munge" / "munge.socket").exists()
        run(start)
        srun = subprocess.run(["srun", "-N1", "hostname"], env={**os.environ, **env}, cwd=str(state / "work"),
                              capture_output=True, text=True, timeout=60)
        assert srun.stdout == "n1\n", srun.stderr

        pids = daemons()
        run(stop)
        assert all(gone(p) for p in pids)
        assert not daemons() and not (state / "munge" / "munge.socket").exists()
        run(stop)
    finally:
        subprocess.run(stop, capture_output=True, timeout=60)
        subprocess.run(["rm", "-rf", str(state)])


@pytest.fixture(scope="module")
def scraped(tmp_path_factory):
    """One Prometheus for the module (its first scrape costs about 6 s), scraping two expositions."""
    with exposition_server(GOOD_EXPOSITION) as a, exposition_server(GOOD_EXPOSITION) as b:
        with prometheus_server(tmp_path_factory.mktemp("prom"), [a.address, b.address], wait_scrape=True) as prom:
            yield prom, a, b


@needs_prometheus
def test_prometheus_scrapes_a_loopback_exposition(scraped):
    prom, a, _ = scraped
    response = prom.query(f'up{{instance="{a.address}"}}')
    assert response["status"] == "success"
    assert [float(r["value"][1]) for r in response["data"]["result"]] == [1.0]
    assert prom.samples(f'js_infra_value{{instance="{a.address}"}}') == [
        ({"__name__": "js_infra_value", "instance": a.address, "job": "test", "kind": "test"}, 42.0)
    ]
    health = {t["labels"]["instance"]: t["health"] for t in prom.targets()}
    assert health[a.address] == "up"
    # scraped every second: three scrapes within 10 s, then a point per second in a range query
    prom.wait_query(f'count_over_time(up{{instance="{a.address}"}}[10s]) >= 3', bool, timeout=10,
                    what="three scrapes")
    now = time.time()
    matrix = prom.query_range(f'up{{instance="{a.address}"}}', now - 2, now, step=1)["data"]
    assert matrix["resultType"] == "matrix"
    assert [v for _, v in matrix["result"][0]["values"]] == ["1"] * 3


@needs_prometheus
def test_prometheus_series_goes_stale_when_its_target_stops(scraped):
    prom, a, b = scraped
    prom.wait_scrape(b.address)
    b.stop()
    t0 = time.monotonic()
    prom.wait_query(f'js_infra_value{{instance="{b.address}"}}', lambda s: s == [], timeout=10,
                    what="the stopped target's series to go stale")
    assert time.monotonic() - t0 < 5
    assert [v for _, v in prom.samples(f'up{{instance="{b.address}"}}')] == [0.0]
    assert len(prom.samples(f'js_infra_value{{instance="{a.address}"}}')) == 1


@needs_prometheus
def test_prometheus_stop_is_idempotent(tmp_path):
    with exposition_server(GOOD_EXPOSITION) as a:
        with prometheus_server(tmp_path, [a.address]) as prom:
            pid = prom.pid
            assert Path(f"/proc/{pid}/comm").read_text().strip() == "prometheus"
        assert gone(pid)
    for _ in range(2):
        proc = subprocess.run([str(INFRA / "prometheus-stop.sh"), "-d", str(tmp_path / "prometheus")],
                              capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr


@needs_prometheus
def test_promtool_flags_malformed_expositions():
    assert promtool_check(GOOD_EXPOSITION) == (0, "")
    rc, out = promtool_check('js_broken{kind="x" 1\n')
    assert rc == 1 and "parsing error" in out, out
    rc, out = promtool_check("# HELP js_requests Requests.\n# TYPE js_requests counter\njs_requests 1\n")
    assert rc == 3 and '"_total" suffix' in out, out
