# SPDX-License-Identifier: MIT
"""`jobscope perfmon`, the drop-in for SKA SDP perfmon (docs/PERFMON.md), and the end of `jobscope job` when the
batch script only waits (the `wait` hang).

On a real SLURM cluster (tests/infra, 3 nodes, proctrack/cgroup and task/cgroup; needs root): perfmon's documented batch
scripts (tests/integration/perfmon_scripts/, from the seed's "Example use cases") run with `perfmon` replaced
by `jobscope perfmon` and nothing else changed: the typical script (`srun ... perfmon &`, the main step,
`wait`), the one that waits for the monitor only (`wait $MON_PID` after `echo FINISHED > .ipc-$SLURM_JOB_ID`)
with every option, and the dask-style one whose processes outlive the main step. The main step is
`stress-ng --matrix` (perfmon's matmul) under GNU time on each node: the oracle for each node's CPU time in
cpu_metrics.json. metrics/cpu_metrics.json is validated against the schema perfmon documents
(tests/fixtures/perfmon/cpu_metrics.schema.json), the PNG plots are decoded, a page of the PDF job report is
rendered with pdftoppm and must not be blank, the exports are read back (pandas, h5py).

`jobscope job` in README's pattern followed by `wait` hung the job before (the monitors waited for the job's
work, which included the batch shell waiting for them): the job must now complete, every node's monitor
stopping with "job ended".

Without SLURM: a PBS job from PBS_NODEFILE_LOCAL (the environment perfmon's PBS example sets up, as a fresh
local user), bad arguments, and `jobscope report --format pdf|png` (and its message without librsvg).
"""
import json
import os
import pwd
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import CRASH_MARKERS, PYTHON, REPO, assert_clean_error, gnu_time_seconds, wait_for
from infra import needs_slurm, slurm_cluster

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "perfmon_scripts"
SCHEMA = REPO / "tests" / "fixtures" / "perfmon" / "cpu_metrics.schema.json"
STRESS = shutil.which("stress-ng")
PDFTOPPM = shutil.which("pdftoppm")
needs_stress = pytest.mark.skipif(STRESS is None, reason="stress-ng not installed (scripts/deps.sh)")


def have_rsvg():
    try:
        import ctypes

        ctypes.CDLL("librsvg-2.so.2")
        return True
    except OSError:
        return False


needs_rsvg = pytest.mark.skipif(not have_rsvg(), reason="librsvg2-2 not installed (scripts/deps.sh)")
needs_pdftoppm = pytest.mark.skipif(PDFTOPPM is None, reason="poppler-utils not installed (scripts/deps.sh)")


def meta(db):
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return dict(con.execute("SELECT key, value FROM meta"))
    finally:
        con.close()


def validate_cpu_metrics(doc):
    """cpu_metrics.json against perfmon's published schema: node-0-hostname's schema for every host."""
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    host_schema = schema["properties"].pop("node-0-hostname")
    # the one correction (docs/PERFMON.md): swap is a number in perfmon's files (psutil), "string" in its doc
    host_schema["properties"]["memory_full_info"]["properties"]["swap"]["items"]["type"] = "number"
    jsonschema.validate(doc, schema)
    for h in doc["host_names"]:
        jsonschema.validate(doc[h], host_schema)
    # every key the schema lists is there, with one value per timestamp
    for h in doc["host_names"]:
        d = doc[h]
        assert set(host_schema["properties"]) <= set(d), set(host_schema["properties"]) - set(d)
        n = len(d["time_stamps"])
        assert n >= 2
        for k, v in d.items():
            if isinstance(v, list) and k != "child_proc_md":
                assert len(v) == n, (h, k)
            elif isinstance(v, dict) and k != "parent_proc_md":
                for kk, vv in v.items():
                    assert len(vv) == n, (h, k, kk)


def png_ok(path):
    """Decode a PNG; it must have drawn pixels (not one colour)."""
    from PIL import Image

    with Image.open(path) as im:
        im.load()
        assert im.width >= 400 and im.height >= 100, im.size
        colours = im.convert("RGB").getcolors(maxcolors=1 << 20)
        assert colours is None or len(colours) > 10, f"{path}: {len(colours)} colours"


def pdf_page_ok(pdf, page, out_prefix):
    """Render one page of the PDF with pdftoppm; it must not be blank."""
    from PIL import Image

    subprocess.run([PDFTOPPM, "-r", "40", "-f", str(page), "-l", str(page), "-png", str(pdf), str(out_prefix)],
                   check=True, capture_output=True, timeout=120)
    pngs = sorted(Path(out_prefix).parent.glob(Path(out_prefix).name + "*.png"))
    assert pngs, "pdftoppm wrote nothing"
    with Image.open(pngs[-1]) as im:
        g = im.convert("L")
        dark = sum(1 for p in g.getdata() if p < 200)
        assert dark > 200, f"page {page} of {pdf} is blank ({dark} dark pixels)"
    for p in pngs:
        p.unlink()


def pdf_pages(pdf):
    out = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    return int(next(line.split()[1] for line in out.splitlines() if line.startswith("Pages:")))


# ---- the cluster ----

@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # task/cgroup: the job's cgroup counts from the job's start, so a monitor that starts after the main step
    # (perfmon's scripts start both at once; on a loaded machine the monitor's step may come up seconds
    # later) still has every CPU second of it; with linuxproc a step that ended before its node's monitor
    # started is not seen (docs/BATCH.md)
    with slurm_cluster(tmp_path_factory.mktemp("slurm"), nodes=3, proctrack="cgroup") as c:
        yield c


def setup_job(c, jobscope_bin, name):
    """A folder for one job; the binary on PATH as `jobscope` and the Python package, for the job's user."""
    d = c.shared_dir(name)
    bin_dir = c.workdir / "bin"
    if not bin_dir.exists():
        bin_dir.mkdir(mode=0o755)
        shutil.copy2(jobscope_bin, bin_dir / "jobscope")
        (bin_dir / "jobscope").chmod(0o755)
        shutil.copytree(REPO / "python" / "jobscope", c.workdir / "python" / "jobscope",
                        ignore=shutil.ignore_patterns("__pycache__"))
        for p in (c.workdir / "python").rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)
        (c.workdir / "python").chmod(0o755)
    for f in ("matmul", "fake_dask.py"):
        shutil.copy2(SCRIPTS / f, d / f)
        (d / f).chmod(0o755)
    return d


def wrapped(d, script_name, **subst):
    """The seed script as d/job.sh, run by a batch script with the same #SBATCH header that times it all
    with GNU time (the batch step's own work, on the batch node) and notes the batch node."""
    text = read_script(script_name, D=d, **subst)
    (d / "job.sh").write_text(text)
    header = "\n".join(line for line in text.splitlines() if line.startswith(("#!", "#SBATCH")))
    w = d / "batch.sh"
    w.write_text(f"{header}\necho $SLURMD_NODENAME > {d}/batch-node\n"
                 f"/usr/bin/time -f '%U %S' -o {d}/time-batch bash {d}/job.sh\n")
    w.chmod(0o755)
    return w


def job_env(c):
    """The environment the test user submits from: jobscope on PATH, its Python package, and SLURM_OVERLAP.
    perfmon's scripts predate SLURM 20.11: since then a step gets every CPU of the job on its nodes unless it
    overlaps, so the main step would wait for the monitor's step to end, with perfmon as with jobscope;
    SLURM_OVERLAP=1 is srun's --overlap from the environment (docs/PERFMON.md)."""
    return {**c.env, "PATH": f"{c.workdir / 'bin'}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "PYTHONPATH": str(c.workdir / "python"), "JOBSCOPE_PYTHON": PYTHON, "SLURM_OVERLAP": "1"}


def submit(c, script, d, args=(), timeout=120):
    """sbatch the script (as the test user, from d), in job_env; wait for COMPLETED."""
    env = job_env(c)
    saved = c.env
    c.env = env
    try:
        t0 = time.monotonic()
        job = c.sbatch([*args, str(script)], user=c.user, cwd=d)
        c.wait_job(job, "COMPLETED", timeout=timeout)
        took = time.monotonic() - t0
    finally:
        c.env = saved
    return job, took


def check_no_crash(d):
    for f in d.rglob("*"):
        if f.is_file() and f.suffix in (".log", ".out", ".err", ".txt"):
            text = f.read_text(errors="replace")
            assert not any(k in text for k in CRASH_MARKERS), f"{f}:\n{text}"


def node_cpu(doc, host):
    return doc[host]["cpu_time"][-1]


def compare_nodes(doc, d, job, batch_extra=0.0, batch_node=None, rec_dir=None):
    """Each node's last cpu_time, less the monitor's own CPU (it runs in the job's cgroup, and says how much
    it used in its recording), against GNU time of its task (the batch node: plus the batch script's own
    work when it is measured). Returns {node: (recorded, monitor, oracle)}."""
    out = {}
    for h in doc["host_names"]:
        oracle = gnu_time_seconds(d / f"time-{h}") + (batch_extra if h == batch_node else 0)
        mon = float(meta((rec_dir or d) / f"{job}-{h}.db").get("monitor_cpu_s", 0))
        out[h] = (node_cpu(doc, h) - mon, mon, oracle)
    return out


# ---- the wait hang of `jobscope job` ----

JOB_WAIT = """#!/bin/bash
srun --ntasks-per-node=1 --overlap jobscope job -d {d} -i 1 2>{d}/monitor.err &
sleep 2
srun --ntasks-per-node=1 bash -c "/usr/bin/time -f '%U %S' -o {d}/time-\\$SLURMD_NODENAME stress-ng --cpu 1 -t 3 -q"
wait
"""


@needs_slurm
@needs_stress
def test_job_then_wait_completes(jobscope_bin, cluster):
    """README's user-run pattern followed by `wait`: the job completes (it hung until its time limit
    before), every node's monitor stops with "job ended", and each node's CPU matches its task's."""
    c = cluster
    d = setup_job(c, jobscope_bin, "jobwait")
    script = d / "job.sh"
    script.write_text(JOB_WAIT.format(d=d))
    script.chmod(0o755)
    job, took = submit(c, script, d, ["-N2", "-t", "3", "-o", str(d / "out.txt")], timeout=100)
    check_no_crash(d)
    print(f"job {job} with `wait` completed in {took:.1f} s")
    assert took < 60, took
    names = sorted(p.name[len(f"{job}-"):-3] for p in d.glob(f"{job}-*.db"))
    assert len(names) == 2
    assert (d / f".{job}.end").read_text() == "FINISHED\n"
    for n in names:
        m = meta(d / f"{job}-{n}.db")
        assert m["stop_reason"] == "job ended", m["stop_reason"]
    assert (d / f"{job}.db").exists()


# ---- perfmon's example scripts ----

def read_script(name, **subst):
    text = (SCRIPTS / name).read_text()
    assert "jobscope perfmon" in text
    for k, v in subst.items():
        text = text.replace("{" + k + "}", str(v))
    return text


@needs_slurm
@needs_stress
def test_perfmon_typical_script(jobscope_bin, cluster):
    """perfmon's typical script, `perfmon` alone (30 s interval, no report): perfmon's metrics files for every
    node, in the documented schema, with each node's CPU time against its task's GNU time."""
    c = cluster
    d = setup_job(c, jobscope_bin, "typical")
    job, took = submit(c, wrapped(d, "typical.sh"), d, timeout=150)
    check_no_crash(d)
    print(f"typical perfmon script: job {job} completed in {took:.1f} s")
    doc = json.loads((d / "metrics" / "cpu_metrics.json").read_text())
    validate_cpu_metrics(doc)
    assert sorted(doc["host_names"]) == ["n1", "n2"]
    assert doc["sampling_frequency"] == 30
    perf = json.loads((d / "metrics" / "perf_metrics.json").read_text())
    md = json.loads((d / "metrics" / "meta_data.json").read_text())
    assert sorted(perf["host_names"]) == sorted(md["host_names"]) == ["n1", "n2"]
    for h in doc["host_names"]:
        assert md[h]["cpu"]["CPU(s)"], md[h]
        assert "software_events" in perf[h] and "hardware_events" in perf[h]
    # the node recordings and the merged job beside perfmon's files; the check points are gone
    assert (d / f"{job}.db").exists() and (d / f"{job}-n1.db").exists()
    assert not (d / "metrics" / "partial").exists()
    assert (d / "ska_sdp_monitoring_metrics.log").exists()
    batch = gnu_time_seconds(d / "time-batch")
    cmp = compare_nodes(doc, d, job, batch, (d / "batch-node").read_text().strip())
    for h in doc["host_names"]:
        m = meta(d / f"{job}-{h}.db")
        print(f"  {h}: stop {m.get('stop_reason')}, samples {m.get('samples_taken')}, "
              f"start {int(m['start_unix_ns']) / 1e9:.3f}, stop {int(m['stop_unix_ns']) / 1e9:.3f}")
    for h, (got, mon, want) in cmp.items():
        print(f"  {h}: cpu_metrics.json cpu_time {got + mon:.3f} s - the monitor's {mon:.3f} s = {got:.3f} s, "
              f"GNU time {want:.3f} s ({100 * (got - want) / want:+.2f}%)")
        assert abs(got - want) <= 0.03 * want + 0.1, (h, got, want)
    for h in doc["host_names"]:
        m = meta(d / f"{job}-{h}.db")
        assert m["stop_reason"] == "job ended", (h, m["stop_reason"])


@needs_slurm
@needs_stress
@needs_rsvg
@needs_pdftoppm
def test_perfmon_every_option(jobscope_bin, cluster):
    """The script that waits for the monitor only (FINISHED, `wait $MON_PID`), with every option: the folder
    and prefix, launcher, interval, check points (seen while the job runs), report (plots, PDF, HTML),
    every export (csv, hdf5, pickle natively or through pandas; parquet, feather and orc said missing with no
    file), the benchmark names and verbose mode (a log and a run configuration per host)."""
    pytest.importorskip("pandas")
    pytest.importorskip("h5py")
    c = cluster
    d = setup_job(c, jobscope_bin, "options")
    save = d / "save"
    script = d / "job.sh"
    script.write_text(read_script("finished.sh", D=d, SAVE=save))
    script.chmod(0o755)
    # the check points appear while the job runs (every 2 s)
    job = None
    saved = c.env
    c.env = job_env(c)
    try:
        job = c.sbatch([str(script)], user=c.user, cwd=d)
        out = save / "pm" / "metrics" / "partial"
        got = wait_for(lambda: len(list(out.glob("cpu_metrics_*.json"))) >= 3 and list(out.glob("*.json")), 60,
                       interval=0.2, what="check point files of 3 nodes")
        print("check points seen while running:", sorted(p.name for p in got))
        partial = json.loads(next(out.glob("cpu_metrics_*.json")).read_text())
        assert "cpu_time" in partial and "host_name" in partial
        # without pyarrow, parquet, feather and orc cannot be written: the node that post-processes says so
        # and exits 1, and `wait $MON_PID`, the script's last command, makes the job FAILED (exit code 1)
        end = c.wait_job(job, ("COMPLETED", "FAILED"), timeout=120)
    finally:
        c.env = saved
    sys.path.insert(0, str(REPO / "python"))
    from jobscope import perfmon as jp

    missing = [f for f in ("parquet", "feather", "orc") if jp.engine_missing(f)]
    assert end["ExitCode"] == ("1:0" if missing else "0:0"), end["ExitCode"]
    check_no_crash(d)
    data = save / "pm"
    doc = json.loads((data / "metrics" / "cpu_metrics.json").read_text())
    validate_cpu_metrics(doc)
    hosts = sorted(doc["host_names"])
    assert hosts == ["n1", "n2", "n3"]
    assert doc["sampling_frequency"] == 1
    assert not (data / "metrics" / "partial").exists()
    # every node stopped on the FINISHED file
    for h in hosts:
        assert meta(data / f"{job}-{h}.db")["stop_reason"] == "ipc-file"
    cmp = compare_nodes(doc, d, job, rec_dir=data)
    for h, (got, mon, want) in cmp.items():
        print(f"  {h}: cpu_time {got + mon:.3f} s - the monitor's {mon:.3f} s = {got:.3f} s, "
              f"GNU time of its task {want:.3f} s")
        assert got >= want - 0.05, (h, got, want)  # the batch node also ran the batch script
    # plots: perfmon's names, decoded
    plots = sorted(p.name for p in (data / "plots").glob("*.png"))
    print("plots:", plots)
    for name in ("CPU_Load_per_node.png", "Average_CPU_Load_all_nodes.png", "Memory_per_node.png",
                 "Average_Memory_all_nodes.png", "Total_Output_Traffic_all_nodes.png",
                 "Input_Traffic_per_node.png", "Total_IO_Read_Traffic_all_nodes.png"):
        assert name in plots, name
    for p in (data / "plots").glob("*.png"):
        png_ok(p)
    # the PDF job report: the summary first, then the plots
    pdf = data / f"job-report-{job}.pdf"
    n = pdf_pages(pdf)
    assert n >= 3, n
    for page in (1, 2, n):
        pdf_page_ok(pdf, page, d / "page")
    assert (data / f"{job}.html").exists() and (data / f"{job}.db").exists()
    # exports
    import pandas as pd

    cpu = pd.read_csv(data / "cpu_metrics.csv")
    assert list(cpu.columns[:3]) == ["Host", "Timestamps", "CPU time [s]"]
    assert sorted(cpu["Host"].unique()) == hosts
    assert len(cpu) == sum(len(doc[h]["time_stamps"]) for h in hosts)
    pk = pd.read_pickle(data / "cpu_metrics.pkl")
    assert list(pk.columns) == list(cpu.columns) and len(pk) == len(cpu)
    h5 = jp.read_hdf(data / "metrics.h5", f"cpu_metrics_{job}")
    assert list(h5.columns) == list(cpu.columns) and len(h5) == len(cpu)
    assert abs(h5["CPU time [s]"].max() - cpu["CPU time [s]"].max()) < 1e-9
    for fmt, ext in (("parquet", "parquet"), ("feather", "feather"), ("orc", "orc")):
        if jp.engine_missing(fmt):
            assert not (data / f"cpu_metrics.{ext}").exists()
    log = {h: (data / f"ska_sdp_monitoring_metrics_{h}.log").read_text() for h in hosts}
    for fmt in missing:
        assert any(f"export {fmt} failed" in t for t in log.values()), (fmt, log)
    errors = [line for t in log.values() for line in t.splitlines()
              if "| ERROR |" in line and not any(f"export {f} failed" in line for f in missing)
              and "exits with status" not in line]
    assert not errors, errors
    # -v: a run configuration per host with every option
    for h in hosts:
        cfg = (data / "configs" / f"{h}_run_config.yml").read_text()
        for line in ("system: sys-a", "partition: part-b", "env: env-c", "name: test-d", "launcher: srun",
                     "check_point: 2", "sampling_freq: 1", "prefix: pm"):
            assert line in cfg, (line, cfg)
    md = json.loads((data / "metrics" / "meta_data.json").read_text())
    assert md[hosts[0]]["cpu"]["CPU(s)"]


@needs_slurm
@needs_stress
def test_perfmon_dask_style(jobscope_bin, cluster):
    """perfmon's dask script: a scheduler and workers that outlive the main step; the FINISHED file stops the
    monitors and `wait $MON_PID` returns, long before the workers would end."""
    c = cluster
    d = setup_job(c, jobscope_bin, "dask")
    script = d / "job.sh"
    script.write_text(read_script("dask.sh", D=d))
    script.chmod(0o755)
    job, took = submit(c, script, d, timeout=150)
    check_no_crash(d)
    print(f"dask-style script: job {job} completed in {took:.1f} s (workers would run 300 s)")
    assert took < 100, took
    doc = json.loads((d / "metrics" / "cpu_metrics.json").read_text())
    validate_cpu_metrics(doc)
    assert sorted(doc["host_names"]) == ["n1", "n2"]
    for h in doc["host_names"]:
        assert meta(d / f"{job}-{h}.db")["stop_reason"] == "ipc-file"
    # each worker's own getrusage (its work before idling) is in its node's figures (the batch node's also
    # holds the client and the scheduler)
    for h in doc["host_names"]:
        got, want = doc[h]["cpu_time"][-1], gnu_time_seconds(d / f"time-{h}")
        print(f"  {h}: cpu_time {got:.3f} s, the worker's own getrusage {want:.3f} s")
        assert got >= want - 0.05, (h, got, want)


# ---- PBS, without a server ----

@pytest.fixture
def local_user():
    """A fresh local user (unique name), removed afterwards."""
    if os.geteuid() != 0 or not shutil.which("useradd"):
        pytest.skip("needs root and useradd")
    name = f"jspm{os.getpid() % 100000}"
    subprocess.run(["useradd", "-M", "-s", "/bin/bash", name], check=True, capture_output=True)
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
        subprocess.run(["userdel", name], capture_output=True)


@needs_stress
def test_perfmon_pbs_nodefile_local(jobscope_bin, shared_dir, local_user):
    """perfmon's PBS example: the node file copied where every node reads it, PBS_NODEFILE_LOCAL exported to
    the monitors; `wait` at the end. The job's processes on the node are watched; the monitor stops when they
    are gone, merges and writes perfmon's files."""
    d = shared_dir / "pbs"
    d.mkdir()
    host = socket.gethostname()
    (d / "pbs_nodefile").write_text(f"{host}\n{host}\n")
    shutil.copy2(jobscope_bin, d / "jobscope")
    shutil.copy2(SCRIPTS / "matmul", d / "matmul")
    script = d / "job.sh"
    script.write_text(read_script("pbs.sh", D=d))
    script.chmod(0o755)
    shutil.chown(d, local_user.pw_name)
    for p in d.iterdir():
        shutil.chown(p, local_user.pw_name)
    env = {"PATH": f"{d}:/usr/bin:/bin", "HOME": str(d), "USER": local_user.pw_name, "PBS_JOBID": "8123.pbs",
           "PBS_NODEFILE": str(d / "pbs_nodefile"), "LANG": "C.UTF-8"}
    t0 = time.monotonic()
    proc = subprocess.run([shutil.which("runuser"), "-u", local_user.pw_name, "--", "/bin/bash", str(script)], cwd=d, env=env,
                          capture_output=True, text=True, timeout=120)
    took = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    log = (d / f"ska_sdp_monitoring_metrics_{socket.gethostname()}.log").read_text()
    assert not any(k in log for k in CRASH_MARKERS), log
    print(f"PBS script finished in {took:.1f} s")
    assert took < 60, (took, log)
    doc = json.loads((d / "metrics" / "cpu_metrics.json").read_text())
    validate_cpu_metrics(doc)
    assert doc["host_names"] == [host]
    m = meta(d / f"8123.pbs-{host}.db")
    assert m["batch_scheduler"] == "pbs" and m["job_nodefile"] == str(d / "nodefile")
    assert m["stop_reason"] == "job ended", m["stop_reason"]
    got, want = doc[host]["cpu_time"][-1], gnu_time_seconds(d / "time-work")
    print(f"  {host}: cpu_time {got:.3f} s, GNU time of the work {want:.3f} s")
    # the user's processes: the work, the batch shell, sleep (the monitor itself is not counted)
    assert want - 0.05 <= got <= want * 1.05 + 0.3, (got, want)
    assert (d / "cpu_metrics.csv").exists()


# ---- the command line ----

@pytest.mark.parametrize("args", [
    ["--bogus"],
    ["-e"],
    ["-e", "xlsx"],
    ["-i", "abc"],
    ["-i"],
    ["--s", "x"],            # ambiguous: --save_dir, --sampling_freq, --system
    ["-r", "stray"],
    ["-i", "0"],
])
def test_perfmon_bad_arguments(js, args):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_", "OAR_"))}
    env["SLURM_JOB_ID"] = "1"
    proc = subprocess.run([js.binary, "perfmon", *args], env=env, capture_output=True, text=True, timeout=30,
                          cwd=js.tmp)
    assert_clean_error(proc, rc=2)


def test_perfmon_outside_a_job(js):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_", "OAR_"))}
    proc = subprocess.run([js.binary, "perfmon"], env=env, capture_output=True, text=True, timeout=30, cwd=js.tmp)
    assert_clean_error(proc, rc=1)
    assert "not inside a batch job" in proc.stderr


def test_perfmon_help_lists_every_option(js):
    proc = subprocess.run([js.binary, "perfmon", "--help"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0
    for opt in ("--save_dir", "--prefix", "--launcher", "--sampling_freq", "--check_point", "--gen_report",
                "--export", "--system", "--partition", "--env", "--name", "--verbose"):
        assert opt in proc.stdout, opt


# ---- report --format ----

@needs_stress
@needs_rsvg
@needs_pdftoppm
def test_report_pdf_and_png(js, tmp_path):
    r = js.run([STRESS, "--cpu", "1", "-t", "1", "-q"], interval="0.2s")
    rec = r.recording
    pdf = tmp_path / "r.pdf"
    proc = js("report", "--format", "pdf", "-o", pdf, rec)
    assert proc.returncode == 0, proc.stderr
    assert pdf.read_bytes()[:5] == b"%PDF-"
    n = pdf_pages(pdf)
    assert n >= 2
    pdf_page_ok(pdf, 1, tmp_path / "p")
    pdf_page_ok(pdf, 2, tmp_path / "p")
    out = tmp_path / "charts"
    proc = js("report", "-f", "png", "-o", out, rec)
    assert proc.returncode == 0, proc.stderr
    pngs = sorted(out.glob("*.png"))
    assert any(p.name.endswith("-cpu.png") for p in pngs) and any(p.name.endswith("-mem.png") for p in pngs)
    for p in pngs:
        png_ok(p)
    # the same charts as the HTML page, in its order
    html = tmp_path / "r.html"
    assert js("report", "-o", html, rec).returncode == 0
    assert html.read_text().count('<figure class="chart') == len(pngs)
    # an existing output is not replaced without --force
    assert_clean_error(js("report", "--format", "pdf", "-o", pdf, rec))
    assert js("report", "--format", "pdf", "--force", "-o", pdf, rec).returncode == 0


def test_report_pdf_without_librsvg(js, tmp_path, monkeypatch):
    r = js.run(["true"], interval="0.2s")
    monkeypatch.setenv("JOBSCOPE_RSVG_LIBRARY", str(tmp_path / "nonexistent.so"))
    out = tmp_path / "x.pdf"
    proc = js("report", "--format", "pdf", "-o", out, r.recording)
    assert_clean_error(proc, rc=1)
    assert "librsvg" in proc.stderr
    assert not out.exists()
    assert_clean_error(js("report", "--format", "svgz", r.recording), rc=2)
