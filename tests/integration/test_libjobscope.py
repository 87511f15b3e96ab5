# SPDX-License-Identifier: MIT
"""libjobscope as installed: `meson install --destdir` into a temporary directory, then programs built
against it through pkg-config only, as a user would.

- the shared library: soname libjobscope.so.0, only the js_* API exported, every symbol versioned JOBSCOPE_0;
- it and the CLI link no optional library (libpfm4, libmicrohttpd, HDF5 are dlopen'ed): readelf and ldd;
- a C program (and the header compiled as C++) marking phases from the main thread and 4 threads inside
  `jobscope run`: the phases and the event are in the summary, and outside a monitored run every call is a
  no-op returning 0;
- the Fortran module compiled with gfortran and called from a Fortran program inside `jobscope run`;
- the embedded monitor used from the installed library (parent and child phases in its summary);
- `jobscope mark` from a shell script: begin, end, event with data, and outside a monitored run.
"""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, assert_clean_error, assert_no_crash

HERE = Path(__file__).resolve().parent
ABI = HERE / "abi"

EXPORTED = {
    "js_phase_begin", "js_phase_end", "js_event", "js_marks_active", "js_marks_dropped", "js_monitor_start",
    "js_monitor_sample", "js_monitor_stop", "js_monitor_summary", "js_monitor_address", "js_recording_export",
    "js_recording_summary", "js_free", "js_version",
}


def build_dir():
    env = os.environ.get("JOBSCOPE_BUILD")
    return Path(env).resolve() if env else REPO / "build"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The install tree and the environment that finds it (pkg-config through a sysroot, the loader)."""
    dest = tmp_path_factory.mktemp("destdir")
    b = build_dir()
    if not (b / "build.ninja").exists():
        pytest.skip(f"no meson build directory at {b} (set JOBSCOPE_BUILD)")
    p = subprocess.run(["meson", "install", "-C", str(b), "--destdir", str(dest), "--no-rebuild", "--quiet"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    pcs = list(dest.rglob("jobscope.pc"))
    assert len(pcs) == 1, pcs
    libs = list(dest.rglob("libjobscope.so.0"))
    assert len(libs) == 1, libs
    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = str(pcs[0].parent)
    env["PKG_CONFIG_SYSROOT_DIR"] = str(dest)
    env["LD_LIBRARY_PATH"] = str(libs[0].parent)
    env.pop("JOBSCOPE_SOCKET", None)
    return {"dest": dest, "env": env, "lib": libs[0], "pc": pcs[0]}


def pkg(installed, *args):
    p = subprocess.run(["pkg-config", *args, "jobscope"], env=installed["env"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def compile_c(installed, tmp_path, src, out, compiler="cc", extra=()):
    cmd = [compiler, "-O2", "-Wall", "-Wextra", "-Werror", *extra, str(src), "-o", str(out),
           *pkg(installed, "--cflags"), *pkg(installed, "--libs"), "-lpthread"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=installed["env"])
    assert p.returncode == 0, " ".join(cmd) + "\n" + p.stderr
    return out


# What the CLI and libjobscope.so.0 may link (DT_NEEDED, the dynamic loader aside): everything else they use
# (libpfm4, libmicrohttpd, HDF5, NVML, ROCm SMI) is loaded with dlopen when needed.
BASE_NEEDED = {"libc.so.6", "libm.so.6", "libsqlite3.so.0", "libbpf.so.1"}
OPTIONAL_LIBS = re.compile(r"libpfm|libmicrohttpd|libhdf5|libnvidia-ml|librocm_smi")


def linked(path):
    """The DT_NEEDED entries of the ELF file at `path`, ld-linux left out."""
    dyn = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return {n for n in re.findall(r"Shared library: \[([^\]]+)\]", dyn) if not n.startswith("ld-linux")}


def ldd(path):
    """ldd's listing: every library mapped at start, direct or not."""
    return subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=True).stdout


def test_cli_links_no_optional_library(jobscope_bin):
    """The CLI starts (a `jobscope mark` in a job script above all) without mapping libpfm4, libmicrohttpd or
    HDF5: they are dlopen'ed by the perf source, the /metrics endpoint and the HDF5 export."""
    assert linked(jobscope_bin) <= BASE_NEEDED, linked(jobscope_bin)
    assert {"libc.so.6", "libsqlite3.so.0"} <= linked(jobscope_bin)
    assert not OPTIONAL_LIBS.search(ldd(jobscope_bin)), ldd(jobscope_bin)


def test_installed_library(installed):
    lib = installed["lib"]
    dyn = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True).stdout
    assert "Library soname: [libjobscope.so.0]" in dyn
    syms = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True).stdout
    names = {}
    for line in syms.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtDdBbRr":
            name, _, ver = parts[2].partition("@@")
            names[name] = ver
    assert set(names) == EXPORTED, sorted(set(names) ^ EXPORTED)
    assert set(names.values()) == {"JOBSCOPE_0"}
    # no optional library at link time (NVML, ROCm SMI and libpfm4 are dlopen'ed) and no HTTP server: libc,
    # SQLite, libm, and libbpf (the BPF process reader of the embedded monitor)
    assert linked(lib) <= BASE_NEEDED, linked(lib)
    assert not OPTIONAL_LIBS.search(ldd(lib)), ldd(lib)
    assert pkg(installed, "--modversion") == ["0.1.0"]
    inc = installed["dest"].rglob("include/jobscope.h")
    assert list(inc)
    assert list(installed["dest"].rglob("include/jobscope.f90"))


def test_c_program_marks(installed, tmp_path, js):
    exe = compile_c(installed, tmp_path, ABI / "abi_check.c", tmp_path / "abi_check", extra=["-std=c11"])
    ldd = subprocess.run(["ldd", str(exe)], env=installed["env"], capture_output=True, text=True).stdout
    assert str(installed["lib"].parent) in ldd, ldd
    # outside a monitored run: no-ops returning 0
    p = subprocess.run([str(exe), "marks"], env=installed["env"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "active=0 rc=0,0,0,0,0 threads=0 dropped=0"
    # inside jobscope run
    os.environ["LD_LIBRARY_PATH"] = installed["env"]["LD_LIBRARY_PATH"]
    try:
        r = js.run([str(exe), "marks"], interval="100ms")
    finally:
        del os.environ["LD_LIBRARY_PATH"]
    assert r.returncode == 0, r.proc.stderr
    ph = r.summary["phases"]
    names = {p["name"]: p for p in ph["phases"]}
    assert set(names) == {"init", "solve", "worker"}
    assert names["init"]["activations"] == 1 and names["solve"]["activations"] == 1
    assert names["worker"]["begins"] == 400 and names["worker"]["ends"] == 400  # 4 threads x 100
    assert names["init"]["cpu_s"] > 0.05
    assert [e["name"] for e in ph["events"]] == ["checkpoint"]
    assert ph["events"][0]["last_data"] == {"step": 10}
    assert ph["dropped_by_senders"] == 0
    # the phases' self totals and the outside add up to the run's
    cpu = sum(p["self"]["cpu_s"] for p in ph["phases"]) + ph["outside"]["cpu_s"]
    assert cpu == pytest.approx(ph["run"]["cpu_s"], abs=1e-6)
    # which are the process tree's (the summary's total is the cgroup's when the run has one: clock-tick
    # rounding apart, the same)
    assert ph["run"]["cpu_s"] == pytest.approx(r.summary["cpu"]["tree_total_s"], abs=1e-6)
    assert ph["run"]["cpu_s"] == pytest.approx(r.summary["cpu"]["total_s"], abs=0.02 + 0.01 * ph["run"]["cpu_s"])
    wall = sum(p["self"]["wall_s"] for p in ph["phases"]) + ph["outside"]["wall_s"]
    assert wall == pytest.approx(ph["run"]["wall_s"], abs=1e-6)


def test_header_compiles_as_cpp(installed, tmp_path):
    if not shutil.which("g++"):
        pytest.skip("no C++ compiler")
    src = tmp_path / "t.cpp"
    src.write_text('#include <jobscope.h>\nint main() { return js_phase_begin("x") == 0 && '
                   'js_marks_dropped() == 0 ? 0 : 1; }\n')
    exe = compile_c(installed, tmp_path, src, tmp_path / "tcpp", compiler="g++")
    p = subprocess.run([str(exe)], env=installed["env"])
    assert p.returncode == 0


def test_fortran_module(installed, tmp_path, js):
    if not shutil.which("gfortran"):
        pytest.skip("gfortran not installed")
    mod_src = next(installed["dest"].rglob("include/jobscope.f90"))
    work = tmp_path / "f"
    work.mkdir()
    cmds = [["gfortran", "-c", "-Wall", "-Werror", str(mod_src), "-o", "jobscope_mod.o"],
            ["gfortran", "-Wall", str(ABI / "prog.f90"), "jobscope_mod.o", "-o", "prog",
             *pkg(installed, "--libs")]]
    for c in cmds:
        p = subprocess.run(c, cwd=work, capture_output=True, text=True, env=installed["env"])
        assert p.returncode == 0, " ".join(c) + "\n" + p.stderr
    p = subprocess.run([str(work / "prog")], env=installed["env"], capture_output=True, text=True)
    assert p.returncode == 0 and "ierr=0 active=F" in p.stdout, p.stdout + p.stderr
    os.environ["LD_LIBRARY_PATH"] = installed["env"]["LD_LIBRARY_PATH"]
    try:
        r = js.run([str(work / "prog")], interval="100ms")
    finally:
        del os.environ["LD_LIBRARY_PATH"]
    assert r.returncode == 0, r.proc.stderr
    assert "ierr=0 active=T" in (r.proc.stdout or "")
    ph = r.summary["phases"]
    assert [p["name"] for p in ph["phases"]] == ["fortran-solve"]  # trailing blanks trimmed
    assert ph["phases"][0]["ends"] == 1 and not ph["phases"][0]["open_at_end"]
    assert ph["events"][0]["name"] == "fortran-event" and ph["events"][0]["last_data"] == {"x": 1}


def test_embedded_from_installed_library(installed, tmp_path):
    exe = compile_c(installed, tmp_path, ABI / "abi_check.c", tmp_path / "abi_embed", extra=["-std=c11"])
    p = subprocess.run([str(exe), "embed"], env=installed["env"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["mode"] == "embedded" and s["state"] == "complete"
    names = {x["name"]: x for x in s["phases"]["phases"]}
    assert set(names) == {"parent", "child"}
    assert names["parent"]["cpu_s"] > 0.05 and names["child"]["cpu_s"] > 0.05
    assert s["cpu"]["total_s"] >= names["parent"]["cpu_s"] + names["child"]["cpu_s"] - 1e-6


def test_shell_marks(js, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text(f"""#!/bin/sh
set -e
J={js.binary}
$J mark begin setup
SLURM_PROCID=3 $J mark event ranked
OMPI_COMM_WORLD_RANK=5 SLURM_PROCID=3 $J mark event ranked
sleep 0.3
$J mark end setup
$J mark begin solve
$J mark event checkpoint --data '{{"step": 10}}'
sleep 0.3
$J mark end solve
""")
    script.chmod(0o755)
    r = js.run([str(script)], interval="100ms")
    assert r.returncode == 0, r.proc.stderr
    ph = r.summary["phases"]
    assert [p["name"] for p in ph["phases"]] == ["setup", "solve"]
    for p in ph["phases"]:
        # the 0.3 s sleep and the `jobscope mark` processes started inside the phase (each exec of the CLI
        # takes tens of milliseconds on a loaded machine)
        assert 0.29 <= p["wall_s"] <= 1.5, p
    ev = {e["name"]: e for e in ph["events"]}
    assert ev["checkpoint"]["last_data"] == {"step": 10} and ev["ranked"]["count"] == 2
    # the recording keeps them: the marks view of the export
    out = js("export", "--format", "csv", "--scope", "marks", r.recording, check=True).stdout.splitlines()
    assert out[0].startswith("time,unix_s,sample,t_s,mark_unix_s,kind,name,pid,tid,rank,host,data,phase,depth")
    kinds = [line.split(",")[5:7] for line in out[1:]]
    assert kinds == [["begin", "setup"], ["event", "ranked"], ["event", "ranked"], ["end", "setup"],
                     ["begin", "solve"], ["event", "checkpoint"], ["end", "solve"]]
    ranks = [line.split(",")[9] for line in out[1:]]
    assert ranks == ["", "3", "5", "", "", "", ""]  # OMPI_COMM_WORLD_RANK first, then SLURM_PROCID
    # the summary read back from the recording agrees
    again = js.summary_json(r.recording)
    assert again["phases"]["phases"] == ph["phases"]


def test_shell_mark_outside_and_usage(js):
    env = dict(os.environ)
    env.pop("JOBSCOPE_SOCKET", None)
    p = subprocess.run([js.binary, "mark", "begin", "x"], env=env, capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == ""
    for args in (["mark"], ["mark", "begin"], ["mark", "start", "x"], ["mark", "event", "x", "--data", "{bad"],
                 ["mark", "begin", ""], ["mark", "begin", "x" * 257], ["mark", "a", "b", "c"]):
        p = subprocess.run([js.binary, *args], env=env, capture_output=True, text=True)
        assert_no_crash(p)
        assert p.returncode == 2, (args, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1
    # a monitor announced that is not there (it has ended), or an address that is not a private socket path
    # (an abstract name, which anyone can bind): the mark goes nowhere and says so, in one line, exit 1
    for addr, why in (("/nonexistent-jobscope-dir/marks", "No such file or directory"),
                      ("@jobscope-gone-0", "not an absolute path")):
        env["JOBSCOPE_SOCKET"] = addr
        p = subprocess.run([js.binary, "mark", "event", "x"], env=env, capture_output=True, text=True)
        assert_clean_error(p, rc=1)
        assert addr in p.stderr and why in p.stderr, p.stderr
