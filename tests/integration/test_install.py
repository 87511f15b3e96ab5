# SPDX-License-Identifier: MIT
"""What the packages install, checked from the build tree (issue 27; scripts/packages.sh builds the wheel and
the .debs themselves and smoke-tests them installed, in CI):

- the bash completion (data/jobscope.bash-completion): commands, each command's options as its --help lists
  them, fixed value sets, --opt=VALUE split by bash, the command after `run --`;
- the systemd unit of `serve` (data/jobscope-serve.service.in as configured): `systemd-analyze verify`, its
  exposure score, and its capabilities being what serve needs: run as an unprivileged user with exactly the
  unit's ambient capabilities, serve reads root-only RAPL energy files (CAP_DAC_READ_SEARCH) and opens
  node-wide perf counters (CAP_PERFMON); without them it cannot (so each capability is needed);
- the Python package finds its own libjobscope.so.0 (the wheel's layout) before any other, with no
  environment variable;
- Meson installs every module under python/jobscope/ (subpackages too), not a list.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import PYTHON, REPO, kill_quietly

COMPLETION = REPO / "data" / "jobscope.bash-completion"


def build_dir():
    env = os.environ.get("JOBSCOPE_BUILD")
    return Path(env).resolve() if env else REPO / "build"


# --- bash completion --------------------------------------------------------------------------------------

def complete(jobscope_bin, *words):
    """COMPREPLY for the command line `words` (the cursor in the last word), as bash would ask."""
    script = (f"source {str(COMPLETION)!r}\n"
              'COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _jobscope\n'
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    env = dict(os.environ, PATH=f"{jobscope_bin.parent}:{os.environ['PATH']}")
    p = subprocess.run(["bash", "-c", script, "jobscope", "jobscope", *words], capture_output=True, text=True,
                       env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stderr == "", p.stderr
    return [w for w in p.stdout.split("\n") if w]


def test_completion_commands_and_options(jobscope_bin):
    assert "export" in complete(jobscope_bin, "")
    assert complete(jobscope_bin, "su") == ["summary"]
    assert complete(jobscope_bin, "help", "ser") == ["serve"]
    # the options are those of `jobscope run --help` (a description line that starts with --x is not one)
    helptext = subprocess.run([str(jobscope_bin), "run", "--help"], capture_output=True, text=True).stdout
    run_opts = set(complete(jobscope_bin, "run", "--"))
    assert {"--interval", "--output", "--listen", "--cgroup", "--backend", "--report", "--"} <= run_opts
    listed = set(re.findall(r"^\s+(?:-\w, )?(--[a-z][a-z0-9-]*)", helptext, re.M))
    assert {o for o in run_opts if o != "--"} == listed
    assert set(complete(jobscope_bin, "export", "--f")) == {"--format", "--force"}


def test_completion_values(jobscope_bin, tmp_path):
    assert complete(jobscope_bin, "export", "--format", "") == ["csv", "jsonl", "hdf5"]
    assert complete(jobscope_bin, "export", "-f", "j") == ["jsonl"]
    assert complete(jobscope_bin, "run", "--cgroup", "") == ["auto", "off"]
    assert complete(jobscope_bin, "run", "--backend", "p") == ["procfs"]
    assert complete(jobscope_bin, "job", "--track", "") == ["auto", "cgroup", "stepd"]
    assert complete(jobscope_bin, "mark", "") == ["begin", "end", "event"]
    assert "root" in complete(jobscope_bin, "watch", "--user", "ro")
    # bash splits --opt=VALUE at the = (COMP_WORDBREAKS): the value still completes, here files
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.db").write_text("")
    (tmp_path / "notes.txt").write_text("")
    here = str(tmp_path) + "/"
    assert complete(jobscope_bin, "run", "--cgroup", "=", "o") == ["off"]
    assert set(complete(jobscope_bin, "run", "--report", "=", here)) == {here + n for n in ("sub", "a.db", "notes.txt")}
    # recordings for summary: *.db and folders
    assert set(complete(jobscope_bin, "summary", here)) == {here + "a.db", here + "sub"}
    # the option value is skipped when counting: after `run -o x.db` the next word is the command
    assert "sh" in complete(jobscope_bin, "run", "-o", "x.db", "sh")
    assert "sh" in complete(jobscope_bin, "run", "-i", "1s", "--", "sh")
    assert str(os.getpid()) in complete(jobscope_bin, "attach", str(os.getpid()))


# --- the systemd unit ---------------------------------------------------------------------------------------

def unit_for(jobscope_bin, tmp_path):
    """The configured unit with ExecStart pointing at the build's binary."""
    unit = build_dir() / "data" / "jobscope-serve.service"
    if not unit.exists():
        pytest.skip(f"{unit} not configured (meson option systemdsystemunitdir=no?)")
    text = re.sub(r"^ExecStart=\S+/jobscope ", f"ExecStart={jobscope_bin} ", unit.read_text(), flags=re.M)
    out = tmp_path / "jobscope-serve.service"
    out.write_text(text)
    return out


needs_systemd_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                                           reason="systemd-analyze not installed (Debian: systemd)")


@needs_systemd_analyze
def test_unit_verifies_and_is_hardened(jobscope_bin, tmp_path):
    unit = unit_for(jobscope_bin, tmp_path)
    p = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)], capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr.strip() == "", p.stderr
    p = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager", str(unit)],
                       capture_output=True, text=True)
    m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", p.stdout + p.stderr)
    assert m, p.stdout + p.stderr
    # 2.2 as written ("OK"); the same unit without its sandboxing scores 9.6 ("UNSAFE")
    assert float(m.group(1)) <= 3.0, p.stdout
    text = unit.read_text()
    for key in ("DynamicUser=yes", "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes",
                "PrivateTmp=yes", "CapabilityBoundingSet=", "SystemCallFilter=@system-service"):
        assert re.search("^" + re.escape(key), text, re.M), key
    # not installed enabled: the Debian package ships it disabled (debian/rules), meson only copies it
    assert "WantedBy=multi-user.target" in text


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_metrics(jobscope_bin, caps, extra=()):
    """/metrics of `serve` run as nobody with exactly `caps` (ambient), after two samples."""
    port = free_port()
    caps_arg = ",".join("+" + c.lower().removeprefix("cap_") for c in caps) or "-all"
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", f"--inh-caps={caps_arg}",
           f"--ambient-caps={caps_arg}", str(jobscope_bin), "serve", "-i", "200ms",
           "--listen", f"127.0.0.1:{port}", *extra]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
                m = re.search(r"^jobscope_samples_total\{[^}]*\} (\d+)", body, re.M)
                if m and int(m.group(1)) >= 3:
                    return body
            except OSError:
                pass
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.1)
        pytest.fail("serve answered no /metrics with 3 samples in 60 s")
    finally:
        kill_quietly(proc.pid)
        proc.wait()
        proc.stderr.close()


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_unit_capabilities_are_what_serve_needs(jobscope_bin, tmp_path):
    unit = unit_for(jobscope_bin, tmp_path).read_text()
    caps = re.search(r"^AmbientCapabilities=(.*)$", unit, re.M).group(1).split()
    bounding = re.search(r"^CapabilityBoundingSet=(.*)$", unit, re.M).group(1).split()
    assert set(caps) == set(bounding) == {"CAP_DAC_READ_SEARCH", "CAP_PERFMON"}
    # a sysfs whose RAPL energy counters are root-only (0400), as Linux >= 5.10 has them, that nobody can reach
    sysfs = Path(tempfile.mkdtemp(prefix=f"jobscope-unit-{os.getpid()}-"))
    try:
        shutil.copytree(REPO / "tests" / "fixtures" / "node" / "sys", sysfs, dirs_exist_ok=True)
        for root, dirs, files in os.walk(sysfs):
            os.chmod(root, 0o755)
            for f in files:
                os.chmod(os.path.join(root, f), 0o400 if f == "energy_uj" else 0o444)
        with_caps = serve_metrics(jobscope_bin, caps, ["--sysfs", str(sysfs)])
        without = serve_metrics(jobscope_bin, [], ["--sysfs", str(sysfs)])
    finally:
        shutil.rmtree(sysfs, ignore_errors=True)
    assert re.search(r'^jobscope_energy_joules_total\{.*zone="intel-rapl:0"', with_caps, re.M), with_caps
    assert re.search(r'^jobscope_energy_errno\{.*zone="intel-rapl:0".*\} -13$', without, re.M)
    # node-wide perf counters: every CPU, every task (perf_event_paranoid > 0 refuses them to a plain user)
    paranoid = int(Path("/proc/sys/kernel/perf_event_paranoid").read_text())
    with_caps = serve_metrics(jobscope_bin, caps)
    assert re.search(r"^jobscope_perf_count_total\{", with_caps, re.M), with_caps
    if paranoid > 0:
        assert not re.search(r"^jobscope_perf_count_total\{", serve_metrics(jobscope_bin, []), re.M)


# --- the Python package's library ---------------------------------------------------------------------------

def test_python_package_loads_its_own_library_first(tmp_path):
    """The wheel's layout (site-packages/jobscope/libjobscope.so.0): found with no JOBSCOPE_LIBRARY, before a
    build tree or the loader's search path (LD_LIBRARY_PATH names another copy here)."""
    lib = build_dir() / "lib" / "libjobscope.so.0"
    if not lib.exists():
        pytest.skip(f"no {lib}")
    pkg = tmp_path / "site" / "jobscope"
    shutil.copytree(REPO / "python" / "jobscope", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(lib, pkg / "libjobscope.so.0")
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(lib, other / "libjobscope.so.0")
    env = {k: v for k, v in os.environ.items() if k not in ("JOBSCOPE_LIBRARY", "PYTHONPATH")}
    env.update(PYTHONPATH=str(tmp_path / "site"), LD_LIBRARY_PATH=str(other))
    code = ("import jobscope\n"
            "assert jobscope.available()\n"
            "print([l.split()[-1] for l in open('/proc/self/maps') if 'libjobscope.so' in l][0])\n")
    p = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str((pkg / "libjobscope.so.0").resolve())
    # JOBSCOPE_LIBRARY still wins
    env["JOBSCOPE_LIBRARY"] = str(other / "libjobscope.so.0")
    p = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(other / "libjobscope.so.0")


def test_every_python_module_is_installed():
    """python/meson.build installs every module and subpackage under python/jobscope/ (found when Meson
    configures: a module added since needs `meson setup --reconfigure`)."""
    b = build_dir()
    if not (b / "build.ninja").exists():
        pytest.skip(f"no meson build directory at {b}")
    p = subprocess.run(["meson", "introspect", "--installed", str(b)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    import json
    installed = json.loads(p.stdout)
    src = REPO / "python"
    tree = {f.relative_to(src).as_posix() for f in (src / "jobscope").rglob("*.py")
            if "__pycache__" not in f.parts}
    got = {}
    for source, dest in installed.items():
        if source.startswith(str(src / "jobscope") + "/"):
            got[Path(source).relative_to(src).as_posix()] = dest
    if not got:
        pytest.skip("the Python package is not installed by this build (-Dpython=disabled)")
    assert set(got) == tree, f"reconfigure the build directory? {sorted(set(got) ^ tree)}"
    for rel, dest in got.items():
        assert dest.endswith("/" + rel), (rel, dest)  # the package's layout kept (subpackages)
