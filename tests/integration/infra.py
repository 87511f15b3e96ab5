# SPDX-License-Identifier: MIT
"""Real SLURM and Prometheus for integration tests: thin Python wrappers around the scripts in tests/infra/.

SLURM (``slurm_cluster``): a private cluster of nodes n1..nN on this host (munged, slurmctld, one slurmd per
node, each in its own UTS namespace so a task's ``hostname`` is its node's name). Needs root and Debian's
slurmctld, slurmd, slurm-client and munge packages.

    from infra import needs_slurm, slurm_cluster

    @pytest.fixture(scope="module")
    def cluster(tmp_path_factory):
        with slurm_cluster(tmp_path_factory.mktemp("slurm"), nodes=3) as c:
            yield c

    @needs_slurm
    def test_something(cluster):
        out = cluster.run(["srun", "-N3", "hostname"]).stdout           # "n1\\nn3\\nn2\\n" in some order
        job = cluster.sbatch(["-N2", "--wrap", "srun --overlap sleep 1"], user=cluster.user)
        cluster.wait_job(job, "COMPLETED", timeout=30)

Prometheus (``prometheus_server``): Debian's prometheus on 127.0.0.1 scraping the targets every second.

    with exposition_server(TEXT) as target, prometheus_server(tmp_path, [target.address]) as prom:
        prom.wait_scrape(target.address)
        assert prom.samples("up") == [({"__name__": "up", "instance": ..., "job": "test"}, 1.0)]

``promtool_check(text)`` lints an exposition with ``promtool check metrics``: (0, "") when clean, 1 for a parse
error, 3 for lint problems.

A test skips (with the reason) only when what it needs is not installed or it does not run as root
(``needs_slurm``, ``needs_spank``, ``needs_prometheus``, or the context managers themselves); with everything
present, any failure to start, stop or answer fails the test. The clusters and servers are always stopped when
the ``with`` block ends, whether the test passed or not.
"""
import contextlib
import json
import os
import random
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
INFRA = REPO / "tests" / "infra"
SPANK_PROBE_SRC = INFRA / "spank_probe.c"

SLURM_PORTS = (17000, 17999)  # slurmctld on the first port of a block, slurmd of node i on first + i
PROMETHEUS_PORTS = (19000, 19899)
TERMINAL_JOB_STATES = frozenset(
    {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL",
     "DEADLINE", "REVOKED", "SPECIAL_EXIT"}
)
# variables that change what SLURM's commands do; a test's environment must not inherit them
_SLURM_INPUT_PREFIXES = ("SLURM_", "SBATCH_", "SRUN_", "SALLOC_", "SQUEUE_", "SINFO_", "SCANCEL_", "SACCT_",
                         "JS_SLURM_")


def _missing_binaries(names):
    return [name for name in names if shutil.which(name) is None]


def slurm_missing():
    """Why a SLURM cluster cannot run here (a string), or None when it can."""
    missing = _missing_binaries(("slurmctld", "slurmd", "srun", "sbatch", "squeue", "scancel", "scontrol",
                                 "sinfo", "munged", "munge", "unshare", "runuser"))
    if missing:
        return f"SLURM not installed (missing {', '.join(missing)}; scripts/deps.sh installs it)"
    if os.geteuid() != 0:
        return "a SLURM cluster needs root (slurmd runs jobs as other users)"
    return None


def spank_missing():
    """Why a SPANK plugin cannot be built here, or None."""
    reason = slurm_missing()
    if reason:
        return reason
    if not Path("/usr/include/slurm/spank.h").is_file():
        return "slurm/spank.h not installed (libslurm-dev)"
    if shutil.which("gcc") is None:
        return "gcc not installed"
    return None


def prometheus_missing():
    """Why a Prometheus server cannot run here, or None."""
    missing = _missing_binaries(("prometheus", "promtool", "curl"))
    return f"Prometheus not installed (missing {', '.join(missing)})" if missing else None


needs_slurm = pytest.mark.skipif(slurm_missing() is not None, reason=str(slurm_missing()))
needs_spank = pytest.mark.skipif(spank_missing() is not None, reason=str(spank_missing()))
needs_prometheus = pytest.mark.skipif(prometheus_missing() is not None, reason=str(prometheus_missing()))


def _port_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def free_port_block(count, span):
    """The first of `count` consecutive TCP ports, all free now, chosen at random in span=(low, high)."""
    low, high = span
    starts = list(range(low, high - count + 2))
    random.shuffle(starts)
    for start in starts[:200]:
        if all(_port_free(p) for p in range(start, start + count)):
            return start
    pytest.fail(f"no {count} consecutive free ports in {low}-{high}")


def parse_exports(text):
    """{VAR: value} from the `export VAR=value` lines the start scripts print."""
    env = {}
    for line in text.splitlines():
        words = shlex.split(line)
        if len(words) == 2 and words[0] == "export" and "=" in words[1]:
            key, value = words[1].split("=", 1)
            env[key] = value
    return env


def _run_script(args, timeout, what):
    """Run one of the tests/infra scripts; its CompletedProcess, or a test failure with its stderr."""
    try:
        proc = subprocess.run([str(a) for a in args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{what}: {Path(str(args[0])).name} did not finish within {timeout}s; stderr:\n{e.stderr}")
    return proc


def _scontrol_fields(line):
    """Fields of one `scontrol show ... -o` line as a dict (values may hold spaces, e.g. Reason)."""
    return dict(re.findall(r"(\S+?)=(.*?)(?= \S+?=|$)", line.strip()))


class SlurmCluster:
    """A running cluster. Attributes: dir (its state directory), env (for subprocess: SLURM_CONF and the
    JS_SLURM_* variables on top of this process's environment minus SLURM's input variables), nodes
    (["n1", ...]), nodelist ("n[1-3]"), plugstack (Path of plugstack.conf, read by each srun and each step),
    workdir (world-writable folder for job files, the default cwd of run()), user (the non-root test user),
    uid, gid, proctrack ("linuxproc" or "cgroup"), port (slurmctld's)."""

    def __init__(self, state_dir, exports):
        self.dir = Path(state_dir)
        self.exports = exports
        base = {k: v for k, v in os.environ.items() if not k.startswith(_SLURM_INPUT_PREFIXES)}
        self.env = {**base, **exports}
        self.nodes = exports["JS_SLURM_NODES"].split(",")
        self.nodelist = exports["JS_SLURM_NODELIST"]
        self.plugstack = Path(exports["JS_SLURM_PLUGSTACK"])
        self.workdir = Path(exports["JS_SLURM_WORKDIR"])
        self.user = exports["JS_SLURM_USER"]
        self.proctrack = exports["JS_SLURM_PROCTRACK"]
        self.port = int(exports["JS_SLURM_PORT"])
        pw = subprocess.run(["getent", "passwd", self.user], capture_output=True, text=True, check=True)
        fields = pw.stdout.split(":")
        self.uid, self.gid = int(fields[2]), int(fields[3])

    def run(self, args, user=None, check=True, timeout=60, cwd=None, input=None):
        """Run a command (srun, sbatch, squeue, ...) against this cluster, as `user` if given (runuser), in
        `cwd` (default: workdir). Returns the CompletedProcess (text); with check, a non-zero exit fails the
        test and shows stdout and stderr."""
        argv = [str(a) for a in args]
        if user is not None:
            argv = ["runuser", "-u", user, "--", *argv]
        try:
            proc = subprocess.run(argv, env=self.env, cwd=str(cwd or self.workdir), input=input,
                                  stdin=None if input is not None else subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"{' '.join(argv)} did not finish within {timeout}s; stdout:\n{e.stdout}\nstderr:\n{e.stderr}")
        if check and proc.returncode != 0:
            pytest.fail(f"{' '.join(argv)} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
        return proc

    def sbatch(self, args, user=None, cwd=None):
        """Submit a batch job (sbatch --parsable ARGS); its job id."""
        out = self.run(["sbatch", "--parsable", *args], user=user, cwd=cwd).stdout
        return int(out.strip().split(";")[0])

    def job(self, jobid):
        """`scontrol show job -o JOBID` as a dict (JobState, NodeList, UserId, ExitCode, StdOut, ...); None when
        the controller does not know the job (yet or any more; completed jobs stay listed for MinJobAge=600 s)."""
        proc = self.run(["scontrol", "show", "job", "-o", str(jobid)], check=False)
        if proc.returncode != 0 or not proc.stdout.strip():
            return None
        return _scontrol_fields(proc.stdout.splitlines()[0])

    def job_state(self, jobid):
        """The job's state word (PENDING, RUNNING, COMPLETING, COMPLETED, CANCELLED, FAILED, ...) or None."""
        job = self.job(jobid)
        return job["JobState"].split()[0] if job else None

    def wait_job(self, jobid, states, timeout=30):
        """Poll until the job is in one of `states` (a state or a collection of them); returns its scontrol
        fields. Fails the test after `timeout` seconds, or at once when the job ends in another state."""
        wanted = {states} if isinstance(states, str) else set(states)
        deadline = time.monotonic() + timeout
        while True:
            job = self.job(jobid)
            state = job["JobState"].split()[0] if job else None
            if state in wanted:
                return job
            if state in TERMINAL_JOB_STATES:
                pytest.fail(f"job {jobid} ended {state}, waiting for {sorted(wanted)}: {job}\n{self.logs_tail()}")
            if time.monotonic() >= deadline:
                pytest.fail(f"job {jobid} still {state} after {timeout}s, waiting for {sorted(wanted)}: {job}")
            time.sleep(0.1)

    def listpids(self, jobid, node):
        """PIDs SLURM knows for the job (or "JOB.STEP") on `node`, by `scontrol listpids` (it needs the node
        name: without it only n1 answers). Returns [(pid, step, localid or None)], with pid -1 for a task not
        forked yet; [] while the job or step has nothing on that node (scontrol then exits 1)."""
        proc = self.run(["scontrol", "listpids", str(jobid), node], check=False)
        rows = []
        for line in proc.stdout.splitlines()[1:] if proc.returncode == 0 else []:
            f = line.split()
            rows.append((int(f[0]), f[2], None if f[3] == "-" else int(f[3])))
        return rows

    def add_spank(self, plugin_so, args=(), required=True):
        """Load a SPANK plugin in every later srun/sbatch and step: the .so is copied into the cluster's
        directory (readable by the test user, whose srun loads it too) and a line appended to plugstack.conf.
        Returns the path of the copy."""
        libdir = self.dir / "plugins"
        libdir.mkdir(mode=0o755, exist_ok=True)
        dest = libdir / Path(plugin_so).name
        shutil.copyfile(plugin_so, dest)
        dest.chmod(0o755)
        line = " ".join(["required" if required else "optional", str(dest), *map(str, args)])
        with open(self.plugstack, "a") as f:
            f.write(line + "\n")
        return dest

    def clear_spank(self):
        """Empty plugstack.conf again."""
        self.plugstack.write_text("")

    def shared_dir(self, name):
        """A fresh folder under workdir that jobs of any user may write (mode 1777)."""
        path = self.workdir / name
        path.mkdir()
        path.chmod(0o1777)
        return path

    def logs_tail(self, lines=20):
        """The last lines of slurmctld's and every slurmd's log, for failure messages."""
        parts = []
        for log in sorted((self.dir / "log").glob("slurm*.log")):
            text = log.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"--- {log.name}\n" + "\n".join(text))
        return "\n".join(parts)


def build_spank_probe(out_dir):
    """Compile tests/infra/spank_probe.c into OUT_DIR/spank_probe.so; its path."""
    out = Path(out_dir) / "spank_probe.so"
    proc = subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o", str(out),
                           str(SPANK_PROBE_SRC)], capture_output=True, text=True)
    assert proc.returncode == 0, f"building spank_probe.so failed:\n{proc.stderr}"
    return out


def read_probe_files(folder):
    """The records spank_probe wrote into `folder`: a list of {key: value} dicts, sorted by global task id."""
    records = []
    for path in Path(folder).glob("probe.*"):
        records.append(dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line))
    return sorted(records, key=lambda r: (int(r.get("job", 0)), int(r.get("step", 0)), int(r.get("task", 0))))


@contextlib.contextmanager
def slurm_cluster(tmp_dir, nodes=3, proctrack="linuxproc", user="jstest", port=None, timeout=120):
    """Start a cluster of `nodes` nodes (tests/infra/slurm-start.sh), yield a SlurmCluster, always stop it.

    The state directory is a fresh /tmp/js-slurm-XXXXXX rather than under tmp_dir: the test user must be able
    to reach slurm.conf and munge's socket, and pytest's base temporary folder is private to root. After the
    stop, the logs are copied to tmp_dir/slurm-logs and the state directory is removed. Skips the test when
    SLURM is not installed or this is not root. The stop's own messages go to tmp_dir/slurm-logs/slurm-stop.err."""
    reason = slurm_missing()
    if reason:
        pytest.skip(reason)
    tmp_dir = Path(tmp_dir)
    port = port or free_port_block(nodes + 1, SLURM_PORTS)
    state = Path(tempfile.mkdtemp(prefix="js-slurm-", dir="/tmp"))
    state.chmod(0o755)
    start = [INFRA / "slurm-start.sh", "-d", state, "-n", nodes, "-p", port, "-P", proctrack, "-u", user]
    try:
        proc = _run_script(start, timeout, "slurm cluster start")
        if proc.returncode != 0:
            pytest.fail(f"slurm-start.sh exited {proc.returncode}:\n{proc.stderr}")
        yield SlurmCluster(state, parse_exports(proc.stdout))
    finally:
        stop = _run_script([INFRA / "slurm-stop.sh", "-d", state], 60, "slurm cluster stop")
        if (state / "log").is_dir():
            shutil.copytree(state / "log", tmp_dir / "slurm-logs", dirs_exist_ok=True)
            (tmp_dir / "slurm-logs" / "slurm-stop.err").write_text(stop.stderr)
        if stop.returncode != 0:
            pytest.fail(f"slurm-stop.sh exited {stop.returncode} (state kept in {state}):\n{stop.stderr}")
        shutil.rmtree(state, ignore_errors=True)


class PrometheusServer:
    """A running Prometheus: url, port, dir, pid, scrape_targets (the host:port strings it scrapes, all in
    job "test")."""

    def __init__(self, exports, targets):
        self.url = exports["PROMETHEUS_URL"]
        self.port = int(exports["JS_PROM_PORT"])
        self.dir = Path(exports["JS_PROM_DIR"])
        self.pid = int(exports["JS_PROM_PID"])
        self.scrape_targets = list(targets)

    def api(self, path, params=None, timeout=10):
        """GET /api/v1/PATH?PARAMS; the parsed JSON. An HTTP error fails the test with Prometheus' message."""
        url = f"{self.url}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=timeout) as resp:
                return json.load(resp)
        except urllib.error.HTTPError as e:
            pytest.fail(f"GET {url}: HTTP {e.code}: {e.read().decode(errors='replace')}")

    def query(self, expr, at=None):
        """Instant query; the whole parsed response ({"status": "success", "data": {"resultType": ...}})."""
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        return self.api("query", params)

    def query_range(self, expr, start, end, step=1.0):
        """Range query over [start, end] (Unix seconds) every `step` seconds; the whole parsed response."""
        return self.api("query_range", {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}",
                                        "step": str(step)})

    def samples(self, expr):
        """An instant vector query as [(labels, value)], sorted by labels."""
        data = self.query(expr)["data"]
        assert data["resultType"] == "vector", data
        return sorted(((r["metric"], float(r["value"][1])) for r in data["result"]),
                      key=lambda s: sorted(s[0].items()))

    def targets(self):
        """The active targets (/api/v1/targets): dicts with scrapeUrl, labels, health ("up", "down",
        "unknown"), lastScrape, lastError, ..."""
        return self.api("targets", {"state": "active"})["data"]["activeTargets"]

    def wait_query(self, expr, cond, timeout=15, what=None):
        """Poll samples(expr) until cond(samples) is true; returns the samples, or fails the test."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.samples(expr)
            if cond(got):
                return got
            if time.monotonic() >= deadline:
                pytest.fail(f"timed out after {timeout}s waiting for {what or expr}; last: {got}")
            time.sleep(0.1)

    def wait_scrape(self, target, timeout=15):
        """Wait until `target` (host:port) has been scraped successfully (up == 1). The first scrape comes
        about 5-7 s after Prometheus starts."""
        self.wait_query(f'up{{instance="{target}"}} == 1', bool, timeout, f"a successful scrape of {target}")


@contextlib.contextmanager
def prometheus_server(tmp_dir, targets, port=None, wait_scrape=False, timeout=30):
    """Start Prometheus (tests/infra/prometheus-start.sh) scraping `targets` (host:port strings) every second,
    data in tmp_dir/prometheus; yield a PrometheusServer; always stop it. With wait_scrape, return only once
    every target has been scraped successfully. Skips the test when Prometheus is not installed."""
    reason = prometheus_missing()
    if reason:
        pytest.skip(reason)
    state = Path(tmp_dir) / "prometheus"
    port = port or free_port_block(1, PROMETHEUS_PORTS)
    args = [INFRA / "prometheus-start.sh", "-d", state, "-p", port, "-t", timeout]
    if wait_scrape:
        args.append("-w")
    args.append(",".join(targets))
    try:
        proc = _run_script(args, 2 * timeout + 30, "prometheus start")
        if proc.returncode != 0:
            pytest.fail(f"prometheus-start.sh exited {proc.returncode}:\n{proc.stderr}")
        yield PrometheusServer(parse_exports(proc.stdout), targets)
    finally:
        stop = _run_script([INFRA / "prometheus-stop.sh", "-d", state], 60, "prometheus stop")
        if stop.returncode != 0:
            pytest.fail(f"prometheus-stop.sh exited {stop.returncode}:\n{stop.stderr}")


class ExpositionServer:
    """A /metrics endpoint on 127.0.0.1 serving `text` (replace it with .text = ...); .address is host:port."""

    def __init__(self, text, port=0):
        self.text = text
        self.scrapes = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path.split("?")[0] != "/metrics":
                    self.send_error(404)
                    return
                body = owner.text.encode()
                owner.scrapes += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.address = f"127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, name=f"metrics-{self.port}", daemon=True)
        self._thread.start()

    def stop(self):
        """Stop serving and close the socket (a scrape then gets connection refused). Idempotent."""
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join()
        self._httpd.server_close()


@contextlib.contextmanager
def exposition_server(text):
    """An ExpositionServer on a free loopback port, stopped when the block ends."""
    server = ExpositionServer(text)
    try:
        yield server
    finally:
        server.stop()


def promtool_check(text):
    """Lint an exposition with `promtool check metrics`: (rc, output). rc 0 clean, 1 parse error, 3 lint
    problems (e.g. a counter without _total, no HELP); output is promtool's stdout and stderr together."""
    proc = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True,
                          timeout=30)
    return proc.returncode, proc.stdout + proc.stderr
