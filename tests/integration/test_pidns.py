# SPDX-License-Identifier: MIT
"""A PID namespace without its own /proc (docs/RELIABILITY.md, "shared node", 6).

`unshare -pf jobscope run ...` makes jobscope PID 1 of a new PID namespace that still sees the host's /proc:
before the fix the host's PID 1 tree (kthreadd, every orphan of the node, other users' command lines) became
"the job" (68 processes and kthreadd for `true` here), and as a plain user (`unshare -Urpf`) the run never
ended. Now jobscope refuses with one line before creating anything; with a procfs of the namespace's own
(`--mount-proc`) the run is the job's tree only. The embedded monitor (Python Tracker) refuses the same way.
"""
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import PYTHON, REPO, assert_clean_error, assert_no_crash

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def run(argv, timeout=60, cwd=None):
    """Run argv in its own session; on timeout kill the whole session and fail (the old bug: it never ended)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                         start_new_session=True, stdin=subprocess.DEVNULL)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail(f"{' '.join(argv)} did not end within {timeout} s")
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


def can(argv):
    try:
        return subprocess.run(argv, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


needs_unshare = pytest.mark.skipif(shutil.which("unshare") is None, reason="no unshare (util-linux)")


@needs_unshare
def test_pid_namespace_without_proc_is_refused(js):
    if os.geteuid() != 0 or not can(["unshare", "-pf", "true"]):
        pytest.skip("unshare -pf needs root here")
    rec = js.path("ns.db")
    p = run(["unshare", "-pf", js.binary, "run", "-i", "0.1", "-o", str(rec), "-q", "--", "true"])
    assert_clean_error(p)
    assert "PID namespace" in p.stderr and "mount-proc" in p.stderr
    assert not rec.exists()
    # attach and watch --user name PIDs and users of this namespace too
    p = run(["unshare", "-pf", js.binary, "watch", "--user", "root", "--duration", "1s", "-o", str(rec), "-q"])
    assert_clean_error(p)
    assert not rec.exists()


@needs_unshare
def test_pid_namespace_as_a_plain_user_ends(js, shared_dir):
    if not shutil.which("setpriv") or os.geteuid() != 0:
        pytest.skip("needs root to become nobody (setpriv)")
    if not can([*NOBODY, "unshare", "-Urpf", "true"]):
        pytest.skip("unprivileged user namespaces are not allowed here")
    rec = shared_dir / "ns.db"
    p = run([*NOBODY, "unshare", "-Urpf", js.binary, "run", "-i", "0.1", "-o", str(rec), "-q", "--", "true"],
            timeout=60, cwd=shared_dir)
    assert_clean_error(p)
    assert "PID namespace" in p.stderr
    assert not rec.exists()


@needs_unshare
def test_pid_namespace_with_its_own_proc_is_the_job(js, shared_dir):
    if os.geteuid() == 0:
        prefix = ["unshare", "-pf", "--mount-proc"]
    else:
        prefix = ["unshare", "-Urpf", "--mount-proc"]
    if not can([*prefix, "true"]):
        pytest.skip("cannot make a PID namespace with its own /proc here")
    rec, sj = shared_dir / "own.db", shared_dir / "own.json"
    p = run([*prefix, js.binary, "run", "-i", "0.1", "-o", str(rec), "--summary-json", str(sj), "-q", "--",
             "/bin/sh", "-c", "sleep 0.3 & wait"], cwd=shared_dir)
    assert_no_crash(p)
    assert p.returncode == 0, p.stderr
    s = json.loads(sj.read_text())
    assert s["processes"]["total"] <= 3, s["processes"]  # sh and sleep (not the host's tree)
    assert s["processes"].get("ignores_sigchld") is None  # kthreadd would be there
    assert s["cpu"]["total_s"] < 1.0


@needs_unshare
def test_tracker_in_pid_namespace_without_proc(tmp_path):
    lib = Path(os.environ.get("JOBSCOPE_BUILD", REPO / "build")).resolve() / "lib" / "libjobscope.so.0"
    if not lib.exists():
        pytest.skip(f"{lib} not built")
    if os.geteuid() != 0 or not can(["unshare", "-pf", "true"]):
        pytest.skip("unshare -pf needs root here")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import jobscope\n"
            "try:\n    jobscope.Tracker(interval=0.1).start()\nexcept RuntimeError as e:\n    print('refused:', e)\n")
    env = dict(os.environ, JOBSCOPE_LIBRARY=str(lib))
    p = subprocess.run(["unshare", "-pf", PYTHON, "-c", code, str(REPO / "python")], env=env, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "refused:" in p.stdout and "PID namespace" in p.stdout, p.stdout
