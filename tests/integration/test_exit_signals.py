# SPDX-License-Identifier: MIT
"""Exit statuses and signal forwarding (issue 2, Integration: exit codes and signals)."""
import os
import signal
import subprocess
import time

import psutil
import pytest

from conftest import assert_clean_error, assert_no_crash, wait_for


@pytest.mark.parametrize("code", [0, 1, 7, 255])
def test_exit_status_passes_through(js, code):
    r = js.run(["sh", "-c", f"exit {code}"], interval="0.1s")
    assert r.returncode == code, r.proc.stderr
    assert r.summary is not None
    assert r.summary["exit_status"] == code, r.summary["exit_status"]


def test_child_killed_by_signal_gives_128_plus_n(js):
    r = js.run(["sh", "-c", "kill -KILL $$"], interval="0.1s")
    assert r.returncode == 128 + signal.SIGKILL, r.proc.stderr


def sleep_child(p, timeout=10):
    """The `sleep` process jobscope started (psutil.Process), once it has exec'd."""

    def find():
        try:
            for c in psutil.Process(p.pid).children(recursive=True):
                if c.name() == "sleep":
                    return c
        except psutil.NoSuchProcess:
            pytest.fail(f"jobscope exited early with {p.poll()}: {p.stderr.read().decode(errors='replace')}")
        return None

    return wait_for(find, timeout, what="jobscope's sleep child")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1])
def test_signal_to_jobscope_reaches_child(js, sig):
    rec = js.path("sig.db")
    # the child must see default dispositions whatever the test runner ignores
    p = js.popen("run", "-q", "-i", "0.1", "-o", rec, "--", "sleep", "30", preexec_fn=lambda: _default_signals())
    try:
        child = sleep_child(p)
        t0 = time.monotonic()
        os.kill(p.pid, sig)
        try:
            _, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail(f"jobscope did not exit within 10 s of {sig.name}")
        elapsed = time.monotonic() - t0
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    cp = subprocess.CompletedProcess(p.args, p.returncode, "", err.decode(errors="replace"))
    assert_no_crash(cp)
    assert p.returncode == 128 + sig, f"expected {128 + sig} after {sig.name}, got {p.returncode}: {cp.stderr}"
    assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE, "the child outlived jobscope"
    assert elapsed < 5.0, f"jobscope took {elapsed:.2f}s to exit after {sig.name}"


def _default_signals():
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(s, signal.SIG_DFL)


def test_missing_command_gives_127(js):
    r = js.run(["jobscope-no-such-command-xyz"], interval="0.1s")
    assert_clean_error(r.proc, rc=127)
    assert "jobscope-no-such-command-xyz" in r.proc.stderr


def test_missing_command_by_path_gives_127(js):
    r = js.run([str(js.path("does-not-exist"))], interval="0.1s")
    assert_clean_error(r.proc, rc=127)


def test_non_executable_file_gives_126(js):
    f = js.path("not-executable.sh")
    f.write_text("#!/bin/sh\nexit 0\n")
    f.chmod(0o644)
    r = js.run([str(f)], interval="0.1s")
    assert_clean_error(r.proc, rc=126)


def test_directory_as_command_gives_126(js):
    d = js.path("adir")
    d.mkdir()
    r = js.run([str(d)], interval="0.1s")
    assert_clean_error(r.proc, rc=126)


def test_uncreatable_output_is_reported_before_command_starts(js):
    marker = js.path("command-ran")
    proc = js("run", "-q", "-o", js.path("no/such/dir/rec.db"), "--", "touch", marker)
    assert_clean_error(proc)
    assert not marker.exists(), "COMMAND was started although the recording could not be created"


def test_summary_on_stderr_unless_quiet(js):
    loud = js("run", "-i", "0.1", "-o", js.path("loud.db"), "--", "true")
    assert_no_crash(loud)
    assert loud.returncode == 0
    assert loud.stderr.strip(), "no summary on stderr without -q"
    quiet = js("run", "-q", "-i", "0.1", "-o", js.path("quiet.db"), "--", "true")
    assert quiet.returncode == 0
    assert quiet.stderr == "", f"-q should leave stderr empty, got {quiet.stderr!r}"


def test_command_output_passes_through(js):
    proc = js("run", "-q", "-i", "0.1", "-o", js.path("out.db"), "--", "sh", "-c", "echo out; echo err >&2")
    assert proc.returncode == 0
    assert proc.stdout == "out\n"
    assert proc.stderr == "err\n"


def test_long_interval_does_not_delay_exit(js):
    t0 = time.monotonic()
    r = js.run(["true"], interval="1h", timeout=60)
    assert r.returncode == 0, r.proc.stderr
    assert time.monotonic() - t0 < 10, "jobscope waited for the next 1 h sample instead of the child's exit"
