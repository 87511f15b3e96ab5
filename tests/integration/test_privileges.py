# SPDX-License-Identifier: MIT
"""What jobscope records and creates, and what it runs: no shell anywhere in the code (a grep), the environment
is never recorded (a secret in it is not in the recording's bytes, in run or attach), command lines can be
redacted (--redact-cmdline REGEX), and outputs are created new (O_EXCL unless --force, never through a
symbolic link) with the mode the umask allows of 0644 (0600 under umask 077)."""
import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import PYTHON, REPO, assert_clean_error, assert_no_crash

SECRET = "s3cr3t-VALUE-7f1c9a"


def test_no_shell_in_the_code():
    """No system(), popen() or `sh -c` in the C sources, the headers or the Python package."""
    call = re.compile(r'\b(system|popen)\s*\(|\bos\.system\b|subprocess\.[a-z_]+\(.*shell\s*=\s*True')
    shell = re.compile(r'"(/bin/)?sh"\s*,\s*"-c"|"sh\s+-c|"/bin/sh"')
    literal = re.compile(r'"(?:\\.|[^"\\])*"' + r"|'(?:\\.|[^'\\])*'")
    hits = []
    for base in ("src", "include", "lib", "python/jobscope"):
        for p in (REPO / base).rglob("*"):
            if p.suffix in (".c", ".h", ".py") and p.is_file():
                for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
                    code = line.split("//")[0]
                    if code.lstrip().startswith(("*", "/*", "#")):
                        continue  # comments (and Python's) may name what the code must not do
                    if call.search(literal.sub('""', code)) or shell.search(code):
                        hits.append(f"{p.relative_to(REPO)}:{n}: {line.strip()}")
    assert not hits, "\n".join(hits)


def db_bytes(rec):
    data = b""
    for suffix in ("", "-wal", "-journal"):
        p = Path(str(rec) + suffix)
        if p.exists():
            data += p.read_bytes()
    return data


def test_environment_is_never_recorded(js, monkeypatch):
    monkeypatch.setenv("JOB_API_TOKEN", SECRET)
    r = js.run(["sh", "-c", "sleep 0.3"], interval="50ms")
    assert r.returncode == 0, r.proc.stderr
    assert SECRET.encode() not in db_bytes(r.recording)
    # attach: the attached process's environment is read (GPU selection) but not recorded either
    target = subprocess.Popen([PYTHON, "-c", "import time; time.sleep(3)"], env={**os.environ, "OTHER": SECRET})
    try:
        rec = js.path("attach.db")
        p = js("attach", "-q", "-i", "50ms", "--duration", "0.5s", "-o", rec, target.pid, timeout=60)
        assert_no_crash(p)
        assert p.returncode == 0, p.stderr
        assert SECRET.encode() not in db_bytes(rec)
    finally:
        target.kill()
        target.wait()


def test_redact_cmdline(js):
    cmd = ["sh", "-c", f"sleep 0.3; echo --password={SECRET} >/dev/null", "x", f"--token={SECRET}"]
    r = js.run(cmd, interval="50ms", extra=["--redact-cmdline", "(password|token)=[^ ]*"])
    assert r.returncode == 0, r.proc.stderr
    assert SECRET.encode() not in db_bytes(r.recording)
    con = sqlite3.connect(f"file:{r.recording}?mode=ro", uri=True)
    cmdlines = [c for (c,) in con.execute("SELECT cmdline FROM proc_info")]
    command = con.execute("SELECT value FROM meta WHERE key = 'command'").fetchone()[0]
    con.close()
    assert any("echo --*** >" in c and c.endswith(',"--***"]') for c in cmdlines), cmdlines
    assert command.endswith(',"--***"]'), command
    assert SECRET not in js.summary_json(r.recording).__repr__()
    # a regex that does not compile is a usage error, before anything runs
    assert_clean_error(js("run", "-q", "--redact-cmdline", "(unclosed", "--", "true"), rc=2)


@pytest.mark.parametrize("umask,mode", [(0o077, 0o600), (0o022, 0o644), (0o027, 0o640)])
def test_output_modes_follow_umask(js, umask, mode):
    rec = js.path(f"m{umask:o}.db")
    sj = js.path(f"m{umask:o}.json")
    p = subprocess.run([js.binary, "run", "-q", "-o", str(rec), "--summary-json", str(sj), "--", "true"],
                       preexec_fn=lambda: os.umask(umask), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    for f in (rec, sj):
        assert (f.stat().st_mode & 0o777) == mode, (f, oct(f.stat().st_mode))


def test_recording_never_replaced_or_followed(js, tmp_path):
    rec = js.path("exists.db")
    rec.write_bytes(b"precious")
    p = js("run", "-q", "-o", rec, "--", "true")
    assert_clean_error(p)
    assert rec.read_bytes() == b"precious"  # O_EXCL: refused, untouched
    victim = tmp_path / "victim"
    victim.write_bytes(b"victim")
    link = js.path("link.db")
    link.symlink_to(victim)
    p = js("run", "-q", "--force", "-o", link, "--", "true")
    assert_clean_error(p)
    assert victim.read_bytes() == b"victim" and link.is_symlink()  # never through a symbolic link
