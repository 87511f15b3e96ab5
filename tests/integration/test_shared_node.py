# SPDX-License-Identifier: MIT
"""Safe on a shared node: what another local user can do to a run, tried as that user (a user made for the
test, with a name holding this process's PID, removed at the end; the attacks are workloads/neighbour.py).
docs/RELIABILITY.md "Shared node" lists each guarantee with its test and figures.

- mark socket, flood (1): another user cannot even connect to a run's mark socket (it is in a directory
  only the run's user can enter), so a connect() flood of theirs costs the run no sample and no mark;
- mark socket, hijack (2): once the monitor is gone (kill -9, or its normal end while the job goes on),
  another user can neither take its socket's name (the directory left by kill -9 is closed to them) nor get
  a mark by making the path again (the client checks the listener's credentials); the mark exits 1 with one
  line, and not a byte reaches the other user;
- HTTP slow clients (3): 130 connections of another user from 127.0.0.2 and 127.0.0.3, each sending its
  request a byte a second, keep no scrape out and are all closed at the headers' deadline;
- other users' processes (4): `serve --listen-processes` gives per-process series of other users (their
  /proc/PID/io, fd counts) only to an authenticated scraper; without authentication a root daemon exposes
  no process and a user's daemon only that user's own; an empty basic-auth password is refused;
- small ones (12): an empty mark packet does not cost the connection its later marks; dropped_by_senders
  counts every mark the job dropped, also after its last delivered one and from a process that left by
  _exit; a symbolic link or file another user made in advance at the textfile's temporary name does not
  stop the textfile (nor is it written through); a --listen port in use does not stop the job.
"""
import json
import os
import socket
import urllib.request
import pwd
import shutil
import signal
import sqlite3
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conftest import PYTHON, WORKLOADS, kill_quietly, wait_for

NEIGHBOUR = WORKLOADS / "neighbour.py"


class User:
    def __init__(self, name):
        pw = pwd.getpwnam(name)
        self.name, self.uid, self.gid = name, pw.pw_uid, pw.pw_gid

    def argv(self, *args):
        """argv running ARGS as this user (no groups, no privilege)."""
        return ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups", *map(str, args)]


@pytest.fixture(scope="module")
def other_user():
    """A second local user, made for these tests and removed after (its name holds this process's PID)."""
    if os.geteuid() != 0:
        pytest.skip("making a second local user needs root")
    if not shutil.which("useradd"):
        pytest.skip("useradd not installed")
    name = f"jsnb{os.getpid()}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", name],
                   check=True, capture_output=True)
    try:
        yield User(name)
    finally:
        subprocess.run(["userdel", name], capture_output=True)


def neighbour(user, *args):
    """Start workloads/neighbour.py ARGS as `user`."""
    return subprocess.Popen(user.argv(PYTHON, NEIGHBOUR, *args), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def finish(p, timeout=60):
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_quietly(p.pid)
        p.communicate()
        pytest.fail("the neighbour did not finish")
    assert p.returncode == 0, err.decode(errors="replace")


def run_env():
    """The environment of a run whose mark socket goes to /tmp (where other users may create names too)."""
    env = dict(os.environ)
    env.pop("XDG_RUNTIME_DIR", None)
    env.pop("JOBSCOPE_SOCKET", None)
    return env


def summary(js, rec):
    return js.summary_json(rec)


def test_mark_flood_from_another_user(js, other_user, shared_dir):
    """Item 1: another user floods connect() at the run's mark socket (its address is public in
    /proc/net/unix) while the job marks 200 times: the neighbour never gets a connection, every mark is
    recorded."""
    d = shared_dir
    job = d / "job.sh"
    job.write_text(f"""#!/bin/sh
echo "$JOBSCOPE_SOCKET" > {d}/addr
while [ ! -e {d}/go ]; do sleep 0.02; done
i=0
while [ $i -lt 200 ]; do {js.binary} mark event e$i || echo "mark $i: $?" >> {d}/fail; i=$((i+1)); done
while [ ! -e {d}/done ]; do sleep 0.05; done
""")
    job.chmod(0o755)
    rec = js.path("flood.db")
    p = js.popen("run", "-q", "-i", "0.1", "-o", rec, "--", job, env=run_env())
    try:
        addr = wait_for(lambda: (d / "addr").exists() and (d / "addr").read_text().strip(), 30, what="address")
        out = str(d / "flood.json")
        vis = str(d / "visible.json")
        finish(neighbour(other_user, "visible", addr, vis))
        assert json.loads(Path(vis).read_text())["visible"], "the address is public: the attack is fair"
        attacker = neighbour(other_user, "flood", addr, 6, out)
        time.sleep(0.5)
        (d / "go").write_text("")
        finish(attacker)
        (d / "done").write_text("")
        p.communicate(timeout=120)
    finally:
        kill_quietly(p.pid)
    assert p.returncode == 0
    flood = json.loads(Path(out).read_text())
    assert flood["connected"] == 0, flood
    assert set(flood["errors"]) == {"EACCES"}, flood
    assert not (d / "fail").exists(), (d / "fail").read_text()
    s = summary(js, rec)
    assert s["phases"]["marks"] == 200
    assert s["phases"]["rejected_by_monitor"] == 0
    print(f"flood: {sum(flood['errors'].values())} connect() refused; samples taken {s['samples']['taken']}, "
          f"missed {s['samples']['missed']}; marks {s['phases']['marks']}")


@pytest.mark.parametrize("how", ["kill9", "exit"])
def test_mark_hijack_after_monitor_gone(js, other_user, shared_dir, how):
    """Item 2: the monitor is killed (kill -9), or ends while the job goes on (--until-main-exits); another
    user then tries to take the socket's address and listen there. The job's next mark, with a secret in its
    data, must fail with one line and exit 1, and nothing may reach the other user."""
    d = shared_dir
    job = d / "job.sh"
    job.write_text(f"""#!/bin/sh
echo "$JOBSCOPE_SOCKET" > {d}/addr
while [ ! -e {d}/go ]; do sleep 0.02; done
{js.binary} mark event secret --data '{{"db_password": "hunter2"}}' 2> {d}/err
echo $? > {d}/rc
""")
    job.chmod(0o755)
    rec = js.path("hijack.db")
    # (the job outlives the monitor: its output goes to no pipe the test would wait on)
    quiet = {"env": run_env(), "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    if how == "kill9":
        p = js.popen("run", "-q", "-i", "0.2", "-o", rec, "--", job, **quiet)
    else:  # the command starts the job in the background and exits: the monitor ends with it
        p = js.popen("run", "-q", "-i", "0.2", "-o", rec, "--until-main-exits", "--", "sh", "-c",
                     f"{job} & while [ ! -s {d}/addr ]; do sleep 0.02; done", **quiet)
    squat_dir = None
    try:
        addr = wait_for(lambda: (d / "addr").exists() and (d / "addr").read_text().strip(), 30, what="address")
        if how == "kill9":
            p.kill()
        p.wait(timeout=60)
        if not addr.startswith("@"):
            squat_dir = Path(addr).parent
        out = str(d / "squat.json")
        attacker = neighbour(other_user, "squat", addr, 4, out)
        wait_for(lambda: Path(out + ".ready").exists(), 30, what="the neighbour's try")
        (d / "go").write_text("")
        wait_for(lambda: (d / "rc").exists() and (d / "rc").read_text().strip(), 30, what="the mark")
        finish(attacker)
    finally:
        kill_quietly(p.pid)
    squat = json.loads(Path(out).read_text())
    rc = int((d / "rc").read_text())
    err = (d / "err").read_text()
    try:
        assert squat["bytes"] == 0 and "hunter2" not in squat["data"], squat
        assert rc == 1, (rc, err)
        assert len(err.strip().splitlines()) == 1 and addr in err, err
        if how == "kill9":
            # the killed monitor's directory stays, closed to the other user: they could not take the name
            assert not squat["bound"] and squat["bind_error"] == "EACCES", squat
            st = squat_dir.lstat()
            assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()
            assert "Connection refused" in err, err
        else:
            # removed at the monitor's end: the other user made the path again, and got a connection that
            # carried nothing (the client saw the listener was not its user's)
            assert squat["bound"], squat
            assert "another user's" in err, err
    finally:
        if squat_dir is not None and squat_dir.exists():
            shutil.rmtree(squat_dir)


def test_empty_packet_keeps_the_connection(js, shared_dir):
    """Item 12: a zero-length packet is rejected and counted; the connection's later marks still arrive
    (it used to be taken for the end of the connection)."""
    script = shared_dir / "empty.py"
    script.write_text('''import os, socket, struct, time


def mark_packet(name, t_mono_ns):
    """One event mark (src/core/markwire.h): the 40-byte header, then the name."""
    raw = name.encode()
    return struct.pack("=2sBBiqqIIHHB3x", b"JS", 1, 2, -1, t_mono_ns, time.time_ns(), os.getpid(), 0, len(raw), 0,
                       0) + raw


s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
addr = os.environ["JOBSCOPE_SOCKET"]
s.connect("\\0" + addr[1:] if addr.startswith("@") else addr)  # (abstract names: older monitors)
s.send(mark_packet("before", time.monotonic_ns()))
s.send(b"")
s.send(mark_packet("after", time.monotonic_ns()))
time.sleep(0.5)
''')
    r = js.run([PYTHON, script], interval="0.1s")
    assert r.returncode == 0, r.proc.stderr
    con = sqlite3.connect(f"file:{r.recording}?mode=ro", uri=True)
    names = [n for (n,) in con.execute("SELECT name FROM marks ORDER BY t_mono_ns")]
    con.close()
    assert names == ["before", "after"]
    assert r.summary["phases"]["rejected_by_monitor"] == 1


def test_dropped_by_senders_counts_every_drop(js, shared_dir, jobscope_bin):
    """Item 12: the job's monitor is stopped (SIGSTOP) while the job marks: its queue fills, marks are
    dropped, and the job leaves by _exit right after the monitor resumes, so no later mark carries the
    count. dropped_by_senders is still exactly what the job counted (it used to be what its last delivered
    mark carried: 0 here)."""
    lib = Path(jobscope_bin).parent / "lib" / "libjobscope.so.0"
    if not lib.exists():
        pytest.skip(f"{lib} not built")
    script = shared_dir / "drops.py"
    out = shared_dir / "dropped"
    script.write_text(f"""import ctypes, os, signal
lib = ctypes.CDLL({str(lib)!r})
lib.js_marks_dropped.restype = ctypes.c_uint64
assert lib.js_event(b"warm", None) == 0
os.kill(os.getppid(), signal.SIGSTOP)
try:
    full = False
    for i in range(1000000):
        if lib.js_event(b"fill", None) == -11:
            full = True
            break
    for i in range(100):
        lib.js_event(b"dropped", None)
    d = lib.js_marks_dropped()
finally:
    os.kill(os.getppid(), signal.SIGCONT)
with open({str(out)!r}, "w") as f:
    f.write(f"{{int(full)}} {{d}}\\n")
os._exit(0)
""")
    r = js.run([PYTHON, script], interval="0.1s")
    assert r.returncode == 0, r.proc.stderr
    full, dropped = map(int, out.read_text().split())
    assert full and dropped >= 101
    assert r.summary["phases"]["dropped_by_senders"] == dropped
    assert js.summary_json(r.recording)["phases"]["dropped_by_senders"] == dropped


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(url, timeout=5):
    """The status of one GET of url (None when it failed or took longer than timeout)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            r.read()
            return r.status
    except OSError:
        return None


def test_http_slow_clients_from_another_user(js, other_user, shared_dir):
    """Item 3: another user opens 130 connections to a run's /metrics from 127.0.0.2 and 127.0.0.3 (every
    local user owns all of 127/8), each sending its request a byte a second, for 20 s. Every scrape meanwhile
    is answered, and the server closes each slow connection at the headers' deadline (5 s; 15 s allowed on a
    busy machine): none is left open."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    run = js.popen("run", "-q", "-i", "0.5", "-o", js.path("slow.db"), "--listen", f"127.0.0.1:{port}", "--",
                   "sleep", "40", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: scrape(url) == 200, 20, 0.1, "the endpoint")
        out = str(shared_dir / "slow.json")
        attacker = neighbour(other_user, "slow", f"127.0.0.1:{port}", 130, 20, out)
        time.sleep(2)  # the connections are open
        answers = []
        for _ in range(6):
            answers.append(scrape(url))
            time.sleep(2)
        finish(attacker)
    finally:
        kill_quietly(run.pid, signal.SIGTERM)
        run.wait(timeout=60)
    slow = json.loads(Path(out).read_text())
    print(f"slow clients: opened {slow['opened']}, closed by the server after {slow['closed_at'][:1]}.."
          f"{slow['closed_at'][-1:]} s, still open {slow['still_open']}; scrapes {answers}")
    assert answers == [200] * 6, answers
    assert slow["opened"] >= 120, slow
    assert slow["still_open"] == 0, slow
    assert max(slow["closed_at"]) <= 15, slow


def series_pids(body):
    """The pids of the jobscope_process_* series in an exposition."""
    import re

    return {int(m) for m in re.findall(r'^jobscope_process_[a-z_]+\{[^}]*pid="(\d+)"', body, re.M)}


def test_listen_processes_of_other_users(js, other_user, shared_dir):
    """Item 4: a process of another user (and root's own) is in `serve --listen-processes`'s per-process
    series only for an authenticated scraper."""
    import base64

    victim = subprocess.Popen(other_user.argv("sleep", "120"), start_new_session=True)
    creds = shared_dir / "users"
    creds.write_text("prom:s3cret\n")
    creds.chmod(0o600)
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    auth = {"Authorization": "Basic " + base64.b64encode(b"prom:s3cret").decode()}
    procs = []

    def serve(user=None, *extra):
        argv = [js.binary, "serve", "-i", "0.3", "--listen", f"127.0.0.1:{port}", "--listen-processes", "1000",
                *extra]
        p = subprocess.Popen(user.argv(*argv) if user else argv, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        procs.append(p)
        return p

    def body(headers=None):
        def get():
            try:
                with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=5) as r:
                    text = r.read().decode()
                    return text if "jobscope_samples_total" in text and r.status == 200 else None
            except OSError:
                return None
        return wait_for(get, 30, 0.1, "a scrape")

    def stop(p):
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        return err.decode()

    try:
        # root's daemon, no authentication: no process at all (root's are other users' processes too)
        p = serve()
        time.sleep(1)
        pids = series_pids(body())
        err = stop(p)
        assert pids == set(), sorted(pids)[:10]
        assert sum("--listen-processes: no per-process series" in line for line in err.splitlines()) == 1, err
        # with basic auth: everything, for the authenticated scraper only
        p = serve(None, "--listen-basic-auth", creds)
        time.sleep(1)
        pids = series_pids(body(auth))
        stop(p)
        assert victim.pid in pids and 1 in pids, (len(pids), sorted(pids), victim.pid)
        # the other user's own daemon, no authentication: its own processes, not root's
        own = subprocess.Popen(other_user.argv("sleep", "120"), start_new_session=True)
        procs.append(own)
        p = serve(other_user)
        time.sleep(1)
        pids = series_pids(body())
        stop(p)
        assert own.pid in pids and victim.pid in pids, pids
        assert 1 not in pids and os.getpid() not in pids
        # an empty password is refused, before anything is served
        bad = shared_dir / "bad"
        bad.write_text("prom:\n")
        r = subprocess.run([js.binary, "serve", "--listen", f"127.0.0.1:{port}", "--listen-basic-auth", bad],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and "empty password" in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    finally:
        for p in procs + [victim]:
            kill_quietly(p.pid)
            p.wait()


def test_textfile_temporary_name_taken(js, other_user, shared_dir):
    """Item 12: in a folder others can write in, another user makes in advance a symbolic link (to a file of
    theirs) and a writable file at NAME.prom.tmp.PID, the temporary name jobscope used to write: the textfile
    is written all the same, and neither of theirs is written through or replaced."""
    d = shared_dir
    d.chmod(0o1777)
    prom = d / "job.prom"
    target = d / "theirs"
    subprocess.run(other_user.argv("sh", "-c", f"echo mine > {target}; chmod 666 {target}"), check=True)
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the monitor-to-be: its PID is known before it runs, as a neighbour could guess it
        os.close(wfd)
        os.read(rfd, 1)
        try:
            os.execv(js.binary, [js.binary, "run", "-q", "-i", "0.1", "-o", str(js.path("tf.db")), "--textfile",
                                 str(prom), "--", "sleep", "2"])
        finally:
            os._exit(127)
    os.close(rfd)
    link, planted = Path(f"{prom}.tmp.{pid}"), Path(f"{prom}.tmp.{pid}.0")
    subprocess.run(other_user.argv("ln", "-s", target, link), check=True)
    subprocess.run(other_user.argv("sh", "-c", f"echo planted > {planted}; chmod 666 {planted}"), check=True)
    os.write(wfd, b"g")
    os.close(wfd)
    seen = []
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if prom.exists():
            try:
                seen.append(prom.read_text())
            except FileNotFoundError:
                pass
        if done or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if not done:
        kill_quietly(pid)
        os.waitpid(pid, 0)
        pytest.fail("the run did not end")
    assert os.waitstatus_to_exitcode(status) == 0
    assert any("jobscope_samples_total" in text for text in seen), "the textfile was never written"
    assert target.read_text() == "mine\n" and planted.read_text() == "planted\n"
    assert link.is_symlink() and os.lstat(link).st_uid == other_user.uid
    assert not prom.exists()  # removed at the end, as ever
    assert not [p for p in d.iterdir() if p.name.startswith("job.prom.tmp.") and p not in (link, planted)]


def test_listen_port_taken_by_another_user(js, other_user, shared_dir):
    """Item 12: another user holds the port `run --listen` asks for: the job runs all the same, monitored and
    recorded without the endpoint; one line on stderr and the recording (meta listen_error) say why."""
    port = free_port()
    holder = subprocess.Popen(other_user.argv(PYTHON, "-c", "import socket, sys, time\n"
                                              "s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1])))\n"
                                              "s.listen(1); print('ok', flush=True); time.sleep(60)", port),
                              stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert holder.stdout.readline().strip() == b"ok"
        marker = shared_dir / "ran"
        rec = js.path("taken.db")
        r = js("run", "-q", "-o", rec, "--listen", f"127.0.0.1:{port}", "--", "touch", marker)
    finally:
        kill_quietly(holder.pid)
        holder.wait()
    assert r.returncode == 0, r.stderr
    assert marker.exists()
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "Address already in use" in lines[0] and "without the endpoint" in lines[0], lines
    con = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
    why = con.execute("SELECT value FROM meta WHERE key = 'listen_error'").fetchone()
    con.close()
    assert why and "Address already in use" in why[0]


def test_embedded_monitor_directory_removed_at_exit(jobscope_bin, shared_dir):
    """Item 2 (cleanup): a Python process that exits with its Tracker still running (never stopped) leaves no
    mark socket directory behind; a stopped one neither."""
    lib = Path(jobscope_bin).parent / "lib" / "libjobscope.so.0"
    if not lib.exists():
        pytest.skip(f"{lib} not built")
    env = run_env()
    env["JOBSCOPE_LIBRARY"] = str(lib)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "python")
    for stop in ("", "t.stop()"):
        out = shared_dir / "addr"
        r = subprocess.run([PYTHON, "-c", "import os, jobscope\n"
                            "t = jobscope.Tracker(set_environment=True); t.start()\n"
                            f"open({str(out)!r}, 'w').write(os.environ['JOBSCOPE_SOCKET'])\n" + stop],
                           env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        addr = Path(out.read_text())
        assert addr.name == "marks" and addr.parent.name.startswith("jobscope-"), addr
        assert not addr.parent.exists(), f"{addr.parent} left behind ({stop or 'not stopped'})"
