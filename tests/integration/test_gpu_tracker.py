# SPDX-License-Identifier: MIT
"""gpu_tracker's documented behaviours on jobscope.gpu_tracker (issue 21), with real processes and oracles:

- a child that burns 1 s of CPU and holds 200 MB: the descendants' CPU against RUSAGE_CHILDREN and GNU time,
  their private RAM against the allocation and GNU time's peak RSS;
- 4 children x 100 MB alive together: private RAM summed (psutil's USS as oracle), shared pages counted once
  (less than the naive sum of each child's shared pages), 4 descendant threads;
- 200 children of 20 ms each, all shorter than the interval: their CPU time against RUSAGE_CHILDREN (psutil
  polling, gpu_tracker's way, sees almost none of it);
- process_id of a separate process (not a child of the tracker's), against that process's own rusage; the
  tracker's own CPU is not counted;
- units, state errors, validation errors, thread counts without the monitor thread, the backup pickle (removed
  on success, left with the figures when tracking is interrupted);
- sub-tracking of two code blocks (SubTracker and @sub_track, CSV and SQLite tracking files), the analysis and
  the comparison, and the blocks as jobscope phases with exact CPU times;
- the command line (quoting works, exit status, output formats, sub-track analyze) against GNU time;
- GPU figures through the fake NVML (brand, UUID selection);
- an example script written for gpu_tracker, unchanged under the shim and with its import line changed.

CPU comparisons are in CPU time (never wall time), so they hold on a busy machine.
"""
import json
import os
import pickle
import resource
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import GNU_TIME, PYTHON, REPO, wait_for

psutil = pytest.importorskip("psutil")
pd = pytest.importorskip("pandas")

PYDIR = REPO / "python"
BUILD = Path(os.environ.get("JOBSCOPE_BUILD", REPO / "build")).resolve()
LIB = BUILD / "lib" / "libjobscope.so.0"
FAKE_NVML = BUILD / "tests" / "fakes" / "nvml" / "libnvidia-ml.so.1"
MB = 1e6


@pytest.fixture(scope="module")
def gput():
    if not LIB.exists():
        pytest.skip(f"{LIB} not built")
    os.environ["JOBSCOPE_LIBRARY"] = str(LIB)
    sys.path.insert(0, str(PYDIR))
    import jobscope.gpu_tracker as g

    yield g
    sys.path.remove(str(PYDIR))


def env():
    e = dict(os.environ, JOBSCOPE_LIBRARY=str(LIB), PYTHONPATH=str(PYDIR))
    for v in ("JOBSCOPE_SOCKET", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"):
        e.pop(v, None)
    return e


def kids_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cpu_s(pct, usage):
    """CPU seconds from a mean sum percent and the compute time (in seconds)."""
    return pct / 100.0 * usage.compute_time.time


BURN_HOLD = r"""
import sys, time
b = bytearray(int(sys.argv[1]) * 1000 * 1000)
for i in range(0, len(b), 4096):
    b[i] = 1
t = time.thread_time()
while time.thread_time() - t < float(sys.argv[2]):
    pass
time.sleep(float(sys.argv[3]))
"""


def test_child_burns_1s_and_holds_200mb(gput, tmp_path):
    out = tmp_path / "time.txt"
    k0 = kids_cpu()
    with gput.Tracker(sleep_time=0.1, ram_unit="megabytes", time_unit="seconds", disable_logs=True) as t:
        subprocess.run([GNU_TIME, "-f", "%U %S %M", "-o", str(out), PYTHON, "-c", BURN_HOLD, "200", "1.0", "0.3"],
                       check=True)
    kernel = kids_cpu() - k0
    u = t.resource_usage
    tu, ts, max_kb = out.read_text().split()
    gnu = float(tu) + float(ts)
    desc = cpu_s(u.cpu_utilization.descendants.mean_sum_percent, u)
    print(f"descendants CPU {desc:.3f} s; RUSAGE_CHILDREN {kernel:.3f} s; GNU time (the child) {gnu:.3f} s; "
          f"descendants peak RSS {u.max_ram.descendants.total_rss:.1f} MB (private "
          f"{u.max_ram.descendants.private_rss:.1f}); GNU time max RSS {int(max_kb) / 1000:.1f} MB")
    assert gnu > 0.95
    assert desc == pytest.approx(kernel, abs=0.06)  # a clock tick per process
    assert desc >= gnu - 0.03
    # the 200 MB array is private to the child; its peak is a sampled one, the kernel's a high-water mark
    assert u.max_ram.descendants.private_rss >= 200
    assert u.max_ram.descendants.total_rss <= int(max_kb) * 1.024 / 1000 + 5  # + /usr/bin/time's own
    # each peak is its own (gpu_tracker's); at each sample total = private + shared
    for tp in t.timepoints:
        if tp["descendants_private_ram"] is not None:
            assert tp["descendants_ram"] == pytest.approx(tp["descendants_private_ram"] + tp["descendants_shared_ram"])
    assert u.max_ram.combined.total_rss >= u.max_ram.descendants.total_rss
    assert u.compute_time.unit == "seconds" and u.compute_time.time > 1.0
    # the main process did nearly nothing: its CPU is not the monitor thread's
    assert cpu_s(u.cpu_utilization.main.mean_sum_percent, u) < 0.2


CHILD_100 = BURN_HOLD


def test_four_children_100mb_each(gput):
    procs = [subprocess.Popen([PYTHON, "-c", CHILD_100, "100", "0", "3"]) for _ in range(4)]
    try:
        with gput.Tracker(sleep_time=0.2, ram_unit="megabytes", time_unit="seconds", disable_logs=True) as t:
            ps = [psutil.Process(p.pid) for p in procs]
            # all four hold their 100 MB: psutil's view at one moment is the oracle
            wait_for(lambda: all(x.memory_info().rss > 100e6 for x in ps), 30, what="children allocated")
            time.sleep(0.5)
            full = [x.memory_full_info() for x in ps]
            for p in procs:
                p.wait()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    u = t.resource_usage.max_ram.descendants
    uss = sum(f.uss for f in full) / MB
    naive_shared = sum(f.rss - f.uss for f in full) / MB
    largest_shared = max(f.rss - f.uss for f in full) / MB
    print(f"descendants: total {u.total_rss:.1f} MB, private {u.private_rss:.1f}, shared {u.shared_rss:.1f}; "
          f"psutil: sum USS {uss:.1f} MB, sum of shared {naive_shared:.1f}, largest shared {largest_shared:.1f}")
    assert u.private_rss >= 400
    assert u.private_rss == pytest.approx(uss, rel=0.03)
    # shared pages counted once: the four interpreters share their libraries
    assert u.shared_rss < naive_shared * 0.6
    assert u.shared_rss >= largest_shared * 0.9
    assert t.resource_usage.cpu_utilization.descendants_n_threads == 4


def test_200_short_children(gput):
    k0 = kids_cpu()
    with gput.Tracker(sleep_time=1.0, time_unit="seconds", disable_logs=True) as t:
        for _ in range(200):
            pid = os.fork()
            if pid == 0:
                x = time.thread_time()
                while time.thread_time() - x < 0.02:
                    pass
                os._exit(0)
            os.waitpid(pid, 0)
    kernel = kids_cpu() - k0
    u = t.resource_usage
    desc = cpu_s(u.cpu_utilization.descendants.mean_sum_percent, u)
    print(f"200 children x 20 ms: descendants CPU {desc:.3f} s, RUSAGE_CHILDREN {kernel:.3f} s")
    assert kernel >= 3.9
    assert desc == pytest.approx(kernel, rel=0.02, abs=0.05)


SEPARATE = r"""
import os, resource, sys, time
go, result = sys.argv[1], sys.argv[2]
while not os.path.exists(go):
    time.sleep(0.01)
t = time.thread_time()
while time.thread_time() - t < 0.5:
    pass
pid = os.fork()
if pid == 0:
    t = time.thread_time()
    while time.thread_time() - t < 0.3:
        pass
    os._exit(0)
os.waitpid(pid, 0)
s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
with open(result + ".tmp", "w") as f:
    f.write(f"{s.ru_utime + s.ru_stime} {c.ru_utime + c.ru_stime}")
os.rename(result + ".tmp", result)
time.sleep(0.3)
"""


def test_process_id_of_a_separate_process(gput, tmp_path):
    go, result = tmp_path / "go", tmp_path / "result"
    # started through a shell that exits at once: the process is not this one's child
    pid = int(subprocess.run(["sh", "-c", f'"$0" -c "$1" "$2" "$3" >/dev/null 2>&1 & echo $!', PYTHON, SEPARATE,
                              str(go), str(result)], capture_output=True, text=True, check=True).stdout)
    assert psutil.Process(pid).ppid() != os.getpid()
    try:
        with gput.Tracker(sleep_time=0.1, time_unit="seconds", process_id=pid, disable_logs=True) as t:
            go.touch()
            x = time.thread_time()
            while time.thread_time() - x < 0.3:  # the tracker's own process: not the tracked one
                pass
            wait_for(lambda: not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE,
                     30, what="the tracked process to end")
    finally:
        if psutil.pid_exists(pid):
            os.kill(pid, signal.SIGKILL)
    own, kids = map(float, result.read_text().split())
    u = t.resource_usage
    main = cpu_s(u.cpu_utilization.main.mean_sum_percent, u)
    desc = cpu_s(u.cpu_utilization.descendants.mean_sum_percent, u)
    print(f"process_id: main {main:.3f} s (its rusage {own:.3f}), descendants {desc:.3f} s (its children's "
          f"{kids:.3f})")
    assert t.jobscope_summary["mode"] == "attach"
    assert t.jobscope_summary["split"]["main_pid"] == pid
    assert main == pytest.approx(own, abs=0.05)
    assert desc == pytest.approx(kids, abs=0.05)


def test_units(gput):
    with gput.Tracker(sleep_time=0.1, ram_unit="kilobytes", gpu_ram_unit="terabytes", time_unit="minutes",
                      disable_logs=True) as t:
        time.sleep(0.3)
    u, s = t.resource_usage, t.jobscope_summary
    assert (u.max_ram.unit, u.max_gpu_ram.unit, u.compute_time.unit) == ("kilobytes", "terabytes", "minutes")
    assert u.max_ram.system_capacity == pytest.approx(s["split"]["memory"]["system_total_bytes"] / 1e3)
    assert u.compute_time.time == pytest.approx(s["split"]["wall_s"] / 60)
    assert 0.3 / 60 <= u.compute_time.time < 30 / 60
    assert u.max_ram.main.total_rss * 1e3 == pytest.approx(max(tp["main_ram"] for tp in t.timepoints))
    for kw, msg in ((dict(ram_unit="gibibytes"), 'not a valid RAM unit'),
                    (dict(gpu_ram_unit="MB"), "not a valid GPU RAM unit"),
                    (dict(time_unit="fortnights"), "not a valid time unit"),
                    (dict(sleep_time=0.001), "Sleep time of 0.001 is invalid"),
                    (dict(gpu_brand="intel"), 'is not a valid GPU brand. Supported values are "nvidia" and "amd"'),
                    (dict(gpu_uuids=set()), "the set is empty"),
                    (dict(tracking_file="x.json"), "Valid file extensions are"),
                    (dict(n_join_attempts=0), "n_join_attempts"),
                    (dict(join_timeout=-1), "join_timeout")):
        with pytest.raises(ValueError, match=msg):
            gput.Tracker(**kw)


def test_state_errors(gput):
    t = gput.Tracker(sleep_time=0.1, disable_logs=True)
    assert t.state is gput.Tracker.State.NEW and repr(t) == "State: NEW"
    with pytest.raises(RuntimeError, match="has not started yet"):
        t.stop()
    with pytest.raises(RuntimeError, match="before tracking completes"):
        t.to_json()
    t.start()
    assert t.state is gput.Tracker.State.STARTED
    with pytest.raises(RuntimeError, match="has already started"):
        t.start()
    t.stop()
    assert t.state is gput.Tracker.State.STOPPED
    with pytest.raises(RuntimeError, match="has already stopped"):
        t.start()
    with pytest.raises(RuntimeError, match="has already stopped"):
        t.stop()
    assert [s.value for s in gput.Tracker.State] == [0, 1, 2]
    # the figures: a dataclass tree, asdict, to_json and gpu_tracker's text
    import dataclasses
    assert dataclasses.asdict(t.resource_usage) == t.to_json()
    text = str(t)
    for line in ("Max RAM:", "   Unit: gigabytes", "   Main:", "      Private RSS: ", "Max GPU RAM:",
                 "CPU utilization:", "   Number of expected cores: ", "   Main number of threads: ",
                 "GPU utilization:", "   Number of expected GPUs: ", "   GPU percentages:", "Compute time:",
                 "   Unit: hours", "   Time: "):
        assert line in text.split("\n") or any(x.startswith(line) for x in text.split("\n")), line
    # a nonexistent process
    with pytest.raises(ProcessLookupError):
        gput.Tracker(process_id=2**22 + 12345, disable_logs=True).start()


def test_threads_exclude_the_monitor(gput):
    stop = threading.Event()
    extra = [threading.Thread(target=stop.wait) for _ in range(3)]
    for x in extra:
        x.start()
    try:
        with gput.Tracker(sleep_time=0.1, disable_logs=True) as t:
            time.sleep(0.3)
            seen = psutil.Process().num_threads()  # psutil: every thread, the monitor's included
            time.sleep(0.2)
    finally:
        stop.set()
        for x in extra:
            x.join()
    c = t.resource_usage.cpu_utilization
    print(f"main threads {c.main_n_threads}, psutil {seen} (the monitor's included)")
    assert c.main_n_threads == seen - 1  # not the monitor's, nor stop()'s at the closing sample
    assert c.main_n_threads >= 4  # this thread and the three others (native libraries may add theirs)
    assert c.combined_n_threads == c.main_n_threads and c.descendants_n_threads == 0


def test_backup_pickle(gput, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    t = gput.Tracker(sleep_time=0.1, disable_logs=True)
    t.start()
    names = os.listdir(tmp_path)
    pkl = [n for n in names if n.startswith(".gpu-tracker_") and n.endswith(".pkl")]
    assert len(pkl) == 1, names
    assert pkl[0][:-4] + ".jobscope.db" in names
    t.stop()
    assert os.listdir(tmp_path) == []  # removed on success
    # interrupted: the interpreter exits while tracking
    code = ("import jobscope.gpu_tracker as g, time\n"
            "t = g.Tracker(sleep_time=0.1, resource_usage_file='backup.pkl', disable_logs=True)\n"
            "t.start()\nb = bytearray(50 * 1000 * 1000)\nb[::4096] = b'x' * len(b[::4096])\ntime.sleep(0.4)\n")
    p = subprocess.run([PYTHON, "-c", code], cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    with open(tmp_path / "backup.pkl", "rb") as f:
        usage = pickle.load(f)
    assert isinstance(usage, gput.tracker.ResourceUsage)
    assert usage.max_ram.main.private_rss > 0.05  # gigabytes: the 50 MB
    assert usage.compute_time.time > 0.3 / 3600
    assert (tmp_path / "backup.jobscope.db").exists()  # the recording stays beside it


def test_join_timeout_bounds_stop(gput, tmp_path, caplog):
    """n_join_attempts x join_timeout bound stop(): past it, the figures recorded so far (the backup kept)."""
    t = gput.Tracker(sleep_time=0.1, n_join_attempts=2, join_timeout=1e-6, disable_logs=True,
                     resource_usage_file=tmp_path / "j.pkl")
    t.start()
    time.sleep(0.4)
    with caplog.at_level("WARNING"):
        t.stop()  # the closing sample takes milliseconds: longer than 2 x 1 us
    assert "still alive after 2 attempts to join" in caplog.text
    assert t.state is gput.Tracker.State.STOPPED
    assert t.resource_usage.compute_time.time > 0.3 / 3600
    assert (tmp_path / "j.pkl").exists()
    time.sleep(0.5)  # the monitor finishes its stop on its own: the next tracker starts
    with gput.Tracker(sleep_time=0.1, disable_logs=True) as t2:
        pass
    assert t2.resource_usage is not None


def _example(tmp_path, import_line):
    """gpu_tracker's tutorial usage: a context manager with units, a child process, SubTracker blocks and a
    decorated function, a tracking file, the analysis, the text and JSON outputs."""
    return f"""{import_line}
import json, os, subprocess, sys, time

@gput.sub_track(code_block_name='my-function', sub_tracking_file='sub-tracking.csv', overwrite=True)
def my_function():
    t = time.thread_time()
    while time.thread_time() - t < 0.2:
        pass

with gput.Tracker(sleep_time=0.1, ram_unit='megabytes', gpu_ram_unit='megabytes', time_unit='seconds',
                  n_expected_cores=2, tracking_file='tracking.csv', overwrite=True) as tracker:
    for _ in range(2):
        with gput.SubTracker(code_block_name='my-code-block', sub_tracking_file='sub-tracking.csv', overwrite=True):
            subprocess.run([sys.executable, '-c', 'import time; b = bytearray(60 * 10**6); b[::4096] = bytes(len(b[::4096])); time.sleep(0.4)'])
        my_function()
print(tracker)
print(json.dumps(tracker.to_json(), indent=1))
print(tracker.resource_usage.max_ram.combined.total_rss)
results = gput.SubTrackingAnalyzer(tracking_file='tracking.csv', sub_tracking_file='sub-tracking.csv').sub_tracking_results()
[block, function] = results.code_block_results
print('BLOCKS', block.name, block.num_calls, function.name, function.num_calls)
print(results)
"""


@pytest.mark.parametrize("how", ["shim", "import-line"])
def test_example_script_runs(gput, tmp_path, how):
    if how == "shim":
        script = tmp_path / "example.py"
        script.write_text(_example(tmp_path, "import gpu_tracker as gput"))
        cmd = [PYTHON, "-m", "jobscope.compat", str(script)]
    else:
        script = tmp_path / "example.py"
        script.write_text(_example(tmp_path, "import jobscope.gpu_tracker as gput"))
        cmd = [PYTHON, str(script)]
    p = subprocess.run(cmd, cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert out.startswith("Max RAM:\n   Unit: megabytes\n")
    assert "BLOCKS my-code-block 2 my-function 2" in out
    assert "Code Block Results:" in out and "Num Calls:           2" in out
    combined = float(out.split("\n")[out.split("\n").index("}") + 1])  # the line after the JSON
    assert combined >= 60  # the child's 60 MB
    tr = (tmp_path / "tracking.csv").read_text().splitlines()
    assert tr[0].startswith("ram_unit,gpu_ram_unit,time_unit,ram_system_capacity")
    assert tr[2].startswith("main_ram,descendants_ram,combined_ram,system_ram")
    assert len(tr) > 5


def test_sub_tracking_two_blocks(gput, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    @gput.sub_track(sub_tracking_file="sub.sqlite", overwrite=True)
    def burn_b():
        x = time.thread_time()
        while time.thread_time() - x < 0.3:
            pass

    with gput.Tracker(sleep_time=0.05, time_unit="seconds", tracking_file="tr.sqlite", overwrite=True,
                      disable_logs=True) as t:
        a0 = time.thread_time()
        with gput.SubTracker(code_block_name="A", sub_tracking_file="sub.sqlite", overwrite=True):
            x = time.thread_time()
            while time.thread_time() - x < 0.4:
                pass
        a = time.thread_time() - a0
        b0 = time.thread_time()
        burn_b()
        b = time.thread_time() - b0
        time.sleep(0.1)
    # the SQLite files, as gpu_tracker's: tables static_data and data; sub-tracking rows
    con = sqlite3.connect("tr.sqlite")
    cols = [r[1] for r in con.execute("PRAGMA table_info(data)")]
    assert cols[:4] == ["main_ram", "descendants_ram", "combined_ram", "system_ram"] and cols[-1] == "timestamp"
    assert con.execute("SELECT ram_unit, time_unit FROM static_data").fetchall() == [("gigabytes", "seconds")]
    con.close()
    con = sqlite3.connect("sub.sqlite")
    rows = con.execute("SELECT process_id, code_block_name, position FROM data").fetchall()
    con.close()
    b_name = f"{os.path.abspath(__file__)}:burn_b"
    assert rows == [(os.getpid(), "A", 0), (os.getpid(), "A", 1), (os.getpid(), b_name, 0), (os.getpid(), b_name, 1)]
    an = gput.SubTrackingAnalyzer("tr.sqlite", "sub.sqlite")
    assert an.load_code_block_names() == sorted(["A", b_name])
    res = an.sub_tracking_results()
    by = {r.name: r for r in res.code_block_results}
    assert by["A"].num_calls == 1 and by["A"].num_non_empty_calls == 1 and by["A"].num_timepoints >= 3
    assert by["A"].compute_time["total"] >= 0.4  # wall time of the block
    assert set(res.overall.columns) == {"min", "max", "mean", "std"}
    js = res.to_json()
    assert js["code_block_results"][0]["resource_usage"]["main_ram"]["max"] >= 0
    # the blocks are jobscope phases with exact CPU totals
    ph = t.phases
    print(f"phase A CPU {ph['A']['cpu_time']:.3f} s (thread time {a:.3f}); phase B {ph[b_name]['cpu_time']:.3f} s "
          f"(thread time {b:.3f})")
    assert ph["A"]["cpu_time"] == pytest.approx(a, abs=0.05)
    assert ph[b_name]["cpu_time"] == pytest.approx(b, abs=0.05)
    # comparison of two sessions' pickled results
    with open("a.pkl", "wb") as f:
        pickle.dump(res, f)
    with open("b.pkl", "wb") as f:
        pickle.dump(res, f)
    cmp = gput.TrackingComparison({"A": "a.pkl", "B": "b.pkl"}).compare("max")
    assert list(cmp.code_block_compute_time) == sorted(["A", b_name])
    assert "Overall Resource Usage:" in str(cmp)
    with pytest.raises(ValueError, match="Invalid summary statistic"):
        gput.TrackingComparison({"A": "a.pkl"}).compare("median")


def test_sub_tracking_files_per_process_combined(gput, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = ("import jobscope.gpu_tracker as g, time\n"
            "with g.SubTracker(code_block_name='X'):\n    time.sleep(0.05)\n")
    pids = []
    for _ in range(2):
        p = subprocess.Popen([PYTHON, "-c", code], cwd=tmp_path, env=env())
        pids.append(p.pid)
        assert p.wait(timeout=60) == 0
    files = sorted(str(tmp_path / f"{pid}.csv") for pid in pids)
    assert all(Path(f).read_text().startswith("process_id,code_block_name,position,timestamp\n") for f in files)
    an = gput.SubTrackingAnalyzer(None, "all.csv")
    an.combine_sub_tracking_files(files)
    assert len(Path("all.csv").read_text().splitlines()) == 5
    with pytest.raises(ValueError, match="already exists"):
        an.combine_sub_tracking_files(files)
    with pytest.raises(FileExistsError):
        gput.SubTracker(code_block_name="Y", sub_tracking_file="all.csv").__enter__()
    Path("bad.csv").write_text("process_id,code_block_name,position,timestamp\n1,X,1,5.0\n1,X,0,6.0\n1,X,1,7.0\n")
    with pytest.raises(ValueError, match="start time greater than the stop time"):
        gput.SubTrackingAnalyzer(None, "bad.csv").load_timestamp_pairs("X")


# ---- the command line ----------------------------------------------------------------------------------------

def cli(*args, cwd=None, timeout=120):
    return subprocess.run([PYTHON, "-m", "jobscope.gpu_tracker", *args], cwd=cwd, env=env(), capture_output=True,
                          text=True, timeout=timeout)


def test_cli_quoting_status_and_formats(gput, tmp_path):
    # gpu_tracker's quoted form with a quoted argument inside (its split() broke this), options after it
    p = cli("-e", f'{PYTHON} -c "import sys; print(1 + 2); sys.exit(3)"', "--tu=seconds", "--st=0.1",
            "--disable-logs", "-f", "json")
    assert p.returncode == 3, p.stderr
    first, rest = p.stdout.split("\n", 2)[:2], p.stdout.split("\n", 2)[2]
    assert first == ["3", "Resource tracking complete. Process completed with status code: 3"]
    d = json.loads(rest)
    assert d["compute_time"]["unit"] == "seconds"
    # separate words, verbatim; the words of the command are never split again
    p = cli("--disable-logs", "--st", "0.1", "--execute", PYTHON, "-c", "import sys; print(sys.argv[1:])", "a b",
            "'c'")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == "['a b', \"'c'\"]"
    assert "Max RAM:" in p.stdout
    # one word followed only by gpu-tracker options: gpu_tracker's form
    p = cli("-e", "true", "--tu=seconds", "--disable-logs", "-o", str(tmp_path / "o.txt"))
    assert p.returncode == 0, p.stderr
    assert "   Unit: seconds" in (tmp_path / "o.txt").read_text()
    p = cli("--disable-logs", "-e", "no-such-command-xyz")
    assert p.returncode == 1 and p.stderr.strip().endswith('Command not found: "no-such-command-xyz"')
    p = cli("--bogus")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    p = cli("-e", "true", "--ru=gibibytes", "--disable-logs")
    assert p.returncode == 1 and "not a valid RAM unit" in p.stderr
    p = cli("-e", "true", "--tu=seconds", "--disable-logs", "-f", "pickle", "-o", str(tmp_path / "t.pkl"))
    assert p.returncode == 0, p.stderr
    with open(tmp_path / "t.pkl", "rb") as f:
        assert pickle.load(f).resource_usage.compute_time.unit == "seconds"


def test_cli_against_gnu_time(gput, tmp_path):
    out = tmp_path / "time.txt"
    p = cli("--st=0.1", "--ru=megabytes", "--tu=seconds", "--disable-logs", "-f", "json", "-o",
            str(tmp_path / "r.json"), "--tf", str(tmp_path / "tr.csv"), "--execute", GNU_TIME, "-f", "%U %S %M", "-o",
            str(out), PYTHON, "-c", BURN_HOLD, "150", "0.6", "0.2")
    assert p.returncode == 0, p.stderr
    d = json.loads((tmp_path / "r.json").read_text())
    tu, ts, max_kb = out.read_text().split()
    gnu = float(tu) + float(ts)
    comb = d["cpu_utilization"]["combined"]["mean_sum_percent"] / 100 * d["compute_time"]["time"]
    print(f"CLI: combined CPU {comb:.3f} s vs GNU time {gnu:.3f} s; descendants private "
          f"{d['max_ram']['descendants']['private_rss']:.1f} MB vs GNU time max RSS {int(max_kb) / 1000:.1f} MB")
    assert comb == pytest.approx(gnu, abs=0.06)  # + GNU time's own few ms
    assert d["max_ram"]["descendants"]["private_rss"] >= 150
    assert d["max_ram"]["main"]["total_rss"] < 10  # /usr/bin/time is the main process
    assert (tmp_path / "tr.csv").read_text().startswith("ram_unit,")


def test_cli_sub_track(gput, tmp_path):
    code = ("import jobscope.gpu_tracker as g, time\n"
            "for _ in range(2):\n"
            "    with g.SubTracker(code_block_name='blk', sub_tracking_file='s.csv'):\n"
            "        time.sleep(0.3)\n")
    (tmp_path / "w.py").write_text(code)
    p = cli("--st=0.05", "--disable-logs", "--tf=t.csv", "-e", f"{PYTHON} w.py", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    p = cli("sub-track", "analyze", "--tf=t.csv", "--stf=s.csv", "-f", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["code_block_results"][0]["name"] == "blk" and d["code_block_results"][0]["num_calls"] == 2
    p = cli("sub-track", "analyze", "--tf=t.csv", "--stf=s.csv", "-f", "pickle", "-o", "a.pkl", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    p = cli("sub-track", "compare", "-m", "A=a.pkl", "-m", "B=a.pkl", "--stat=max", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "Code Block Compute Time:" in p.stdout
    (tmp_path / "parts").mkdir()
    (tmp_path / "s.csv").rename(tmp_path / "parts" / "s.csv")
    p = cli("sub-track", "combine", "--stf=all.csv", "-p", "parts", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert len((tmp_path / "all.csv").read_text().splitlines()) == 5


# ---- GPUs (fake NVML) -----------------------------------------------------------------------------------------

SCENARIO = """
device 0
uuid GPU-11111111-2222-3333-4444-555555555555
memory_total 80GiB
value gpu_util_pct 90
value mem_util_pct 40
value mem_used_bytes 30GiB
value power_mw 250000
proc compute file:{main} used 20GiB
proc compute file:{child} used 4GiB
device 1
uuid GPU-66666666-7777-8888-9999-000000000000
memory_total 80GiB
value gpu_util_pct 10
value mem_used_bytes 50GiB
proc compute 4712 used 50GiB
"""

GPU_JOB = r"""
import json, os, subprocess, sys, time
import jobscope.gpu_tracker as g
d = sys.argv[1]
open(os.path.join(d, "main.pid"), "w").write(str(os.getpid()))
kw = json.loads(sys.argv[2])
if "gpu_uuids" in kw:
    kw["gpu_uuids"] = set(kw["gpu_uuids"])
with g.Tracker(sleep_time=0.1, gpu_ram_unit="gigabytes", time_unit="seconds", **kw) as t:
    c = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.0)"])
    open(os.path.join(d, "child.pid"), "w").write(str(c.pid))
    c.wait()
print(json.dumps(t.to_json()))
"""


@pytest.mark.skipif(not FAKE_NVML.exists(), reason="fake NVML not built")
@pytest.mark.parametrize("kw,check", [
    ({}, "all"), ({"gpu_uuids": ["GPU-66666666-7777-8888-9999-000000000000"]}, "one"), ({"gpu_brand": "amd"}, "none"),
    ({"gpu_uuids": ["GPU-nope"]}, "invalid")])
def test_gpu_figures_fake_nvml(gput, tmp_path, kw, check):
    (tmp_path / "nvml.scn").write_text(SCENARIO.format(main=tmp_path / "main.pid", child=tmp_path / "child.pid"))
    e = env()
    e.update(JOBSCOPE_NVML_LIBRARY=str(FAKE_NVML), FAKE_NVML_SCENARIO=str(tmp_path / "nvml.scn"))
    p = subprocess.run([PYTHON, "-c", GPU_JOB, str(tmp_path), json.dumps(kw)], env=e, capture_output=True, text=True,
                       timeout=60)
    if check == "invalid":
        assert p.returncode != 0 and "GPU UUID of GPU-nope is not valid. Available UUIDs are: GPU-1111" in p.stderr
        return
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout.splitlines()[-1])
    G = 2**30 / 1e9
    g, u = d["max_gpu_ram"], d["gpu_utilization"]
    if check == "none":  # amd asked for: no AMD GPU, zeros as gpu_tracker reports them
        assert g["system_capacity"] == 0 and u["system_gpu_count"] == 0 and "No AMD GPU" in p.stderr
        return
    assert g["system_capacity"] == pytest.approx(160 * G)
    assert g["system"] == pytest.approx(80 * G)
    assert g["main"] == pytest.approx(20 * G) and g["descendants"] == pytest.approx(4 * G)
    assert g["combined"] == pytest.approx(24 * G)
    assert u["system_gpu_count"] == 2
    if check == "all":
        assert u["n_expected_gpus"] == 2
        assert u["gpu_percentages"]["max_sum_percent"] == pytest.approx(100)
        assert u["gpu_percentages"]["mean_hardware_percent"] == pytest.approx(50)
    else:
        assert u["n_expected_gpus"] == 1
        assert u["gpu_percentages"]["max_sum_percent"] == pytest.approx(10)
        assert u["gpu_percentages"]["max_hardware_percent"] == pytest.approx(10)
