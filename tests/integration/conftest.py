# SPDX-License-Identifier: MIT
"""Shared fixtures for the jobscope integration suite.

The suite runs the real binary (``$JOBSCOPE_BIN``, default ``build/jobscope`` in the repository) on real
workloads and checks its figures against independent oracles (GNU time, psutil, the workload itself).
Run it with Debian's interpreter:  JOBSCOPE_BIN=build/jobscope /usr/bin/python3 -m pytest -q tests/integration

Fixtures:
  jobscope_bin  path of the binary (session)
  js            a ``Jobscope`` helper bound to a fresh temporary directory (function)
  workload      path of a helper script under ``workloads/``
  shared_dir    a directory every user may write (tests that switch users)
Markers:
  timing        a figure compared within a tolerance that a loaded machine could break (CPU-time oracles);
                scripts/test.sh runs them a second time while stress-ng keeps every core busy
Helpers:
  assert_clean_error(proc)  non-zero exit, exactly one non-empty line on stderr, no crash
  assert_no_crash(proc)
  wait_for(cond, timeout)   poll a condition instead of sleeping a fixed time
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WORKLOADS = HERE / "workloads"
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
GNU_TIME = "/usr/bin/time"
MiB = 1024 * 1024

CRASH_MARKERS = ("Sanitizer", "runtime error:", "Segmentation", "Aborted", "core dumped", "Assertion", "double free")


def wait_for(cond, timeout, interval=0.02, what="condition"):
    """Poll cond() until it returns a truthy value; return it, or fail the test after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def read_pidfile(path):
    """The pid written to path, or None while the file is missing or incomplete."""
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        return None
    return int(text) if text.endswith("\n") else None


def kill_quietly(pid, sig=signal.SIGKILL):
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def assert_no_crash(proc):
    """The process ended by itself (not by a signal) and no sanitizer or crash report is on its stderr."""
    rc = proc.returncode
    assert rc is not None and rc >= 0, f"jobscope died of signal {-rc}; stderr:\n{proc.stderr}"
    for marker in CRASH_MARKERS:
        assert marker not in (proc.stderr or ""), f"crash marker {marker!r} in stderr:\n{proc.stderr}"


def stderr_lines(proc):
    text = proc.stderr or ""
    return [line for line in text.rstrip("\n").split("\n")] if text.strip() else []


def assert_clean_error(proc, rc=None):
    """Non-zero exit (rc if given), exactly one non-empty line on stderr, no crash."""
    assert_no_crash(proc)
    assert proc.returncode != 0, f"expected failure, got exit 0; stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    if rc is not None:
        assert proc.returncode == rc, f"expected exit {rc}, got {proc.returncode}; stderr:\n{proc.stderr}"
    lines = stderr_lines(proc)
    assert len(lines) == 1 and lines[0].strip(), f"expected exactly one line on stderr, got {len(lines)}:\n{proc.stderr!r}"


def gnu_time_seconds(path):
    """user+sys from a file written by GNU time -f '%U %S' -o path (the last line holds the figures)."""
    lines = [line for line in Path(path).read_text().splitlines() if line.strip()]
    user, system = (float(x) for x in lines[-1].split())
    return user + system


@dataclass
class RunResult:
    proc: subprocess.CompletedProcess
    summary: Optional[dict]
    recording: Path
    summary_path: Path

    @property
    def returncode(self):
        return self.proc.returncode


class Jobscope:
    """Runs the jobscope binary with its working directory in a private temporary directory."""

    def __init__(self, binary, tmp):
        self.binary = str(binary)
        self.tmp = Path(tmp)
        self._n = 0

    def path(self, name):
        return self.tmp / name

    def __call__(self, *args, timeout=120, cwd=None, check=False):
        """Run `jobscope ARGS...` to completion; return the CompletedProcess (text, errors replaced).

        stdout and stderr go to files, not pipes, so that an orphan that inherited them (and outlives
        jobscope) does not keep the test waiting: only jobscope's own exit is waited for.
        """
        self._n += 1
        out_path = self.tmp / f".out{self._n}"
        err_path = self.tmp / f".err{self._n}"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(
                [self.binary, *map(str, args)],
                cwd=str(cwd or self.tmp),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
                pytest.fail(
                    f"jobscope {' '.join(map(str, args))} did not finish within {timeout}s; "
                    f"stderr:\n{err_path.read_text(errors='replace')}"
                )
        cp = subprocess.CompletedProcess(
            proc.args,
            proc.returncode,
            out_path.read_bytes().decode(errors="replace"),
            err_path.read_bytes().decode(errors="replace"),
        )
        out_path.unlink()
        err_path.unlink()
        if check:
            assert_no_crash(cp)
            assert cp.returncode == 0, f"jobscope {' '.join(map(str, args))} exited {cp.returncode}:\n{cp.stderr}"
        return cp

    def popen(self, *args, **kw):
        """Start `jobscope ARGS...` in its own session; caller owns the Popen."""
        kw.setdefault("cwd", str(self.tmp))
        kw.setdefault("stdin", subprocess.DEVNULL)
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        kw.setdefault("start_new_session", True)
        return subprocess.Popen([self.binary, *map(str, args)], **kw)

    def run(self, cmd, interval="1s", extra=(), timeout=120, quiet=True, name=None):
        """`jobscope run -i INTERVAL -o REC --summary-json JSON [-q] EXTRA -- CMD`; the summary is loaded if written."""
        self._n += 1
        name = name or f"run{self._n}"
        rec = self.path(f"{name}.db")
        sj = self.path(f"{name}.summary.json")
        args = ["run", "-i", interval, "-o", rec, "--summary-json", sj]
        if quiet:
            args.append("-q")
        args += list(extra)
        args.append("--")
        args += list(cmd)
        proc = self(*args, timeout=timeout)
        assert_no_crash(proc)
        summary = json.loads(sj.read_text()) if sj.exists() else None
        return RunResult(proc, summary, rec, sj)

    def summary_json(self, recording, timeout=60):
        proc = self("summary", "--json", recording, timeout=timeout)
        assert_no_crash(proc)
        assert proc.returncode == 0, f"jobscope summary --json exited {proc.returncode}:\n{proc.stderr}"
        return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def jobscope_bin():
    env = os.environ.get("JOBSCOPE_BIN")
    path = Path(env) if env else REPO / "build" / "jobscope"
    if not path.is_absolute():
        path = (Path.cwd() / path).resolve()
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"jobscope binary not found at {path} (set JOBSCOPE_BIN or build into build/)")
    return path


@pytest.fixture
def js(jobscope_bin, tmp_path):
    return Jobscope(jobscope_bin, tmp_path)


@pytest.fixture
def shared_dir():
    """A fresh directory under /tmp that every user can enter and write (pytest's tmp_path is under a 0700
    parent), for tests that run jobscope as another user. Removed afterwards."""
    import tempfile

    d = Path(tempfile.mkdtemp(prefix="jobscope-test-"))
    d.chmod(0o777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def workload():
    def get(name):
        path = WORKLOADS / name
        assert path.is_file(), path
        return str(path)

    return get


def pytest_configure(config):
    config.addinivalue_line("markers", "timing: a figure compared within a tolerance that a loaded machine could "
                            "break; scripts/test.sh runs these once more under stress-ng (every core busy)")


needs_stress_ng = pytest.mark.skipif(shutil.which("stress-ng") is None, reason="stress-ng not installed")
needs_gnu_time = pytest.mark.skipif(not os.access(GNU_TIME, os.X_OK), reason="GNU time (/usr/bin/time) not installed")
