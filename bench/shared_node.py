#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""bench/shared_node.py: the figures of docs/RELIABILITY.md's "Shared node" section, for one jobscope binary
(run it on the binary before and after a change to compare). As root: it makes a second local user
(jsfig<PID>, removed at the end) who attacks runs as tests/integration/test_shared_node.py does, at the
issue's sizes, and prints one line per attack.

    sudo bench/shared_node.py [--bin build/jobscope]
"""
import argparse
import base64
import json
import os
import pwd
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NEIGHBOUR = REPO / "tests" / "integration" / "workloads" / "neighbour.py"
PY = "/usr/bin/python3"


def as_user(u, *args):
    return ["setpriv", f"--reuid={u.pw_uid}", f"--regid={u.pw_gid}", "--clear-groups", *map(str, args)]


def wait(cond, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.02)
    raise TimeoutError


def env():
    e = dict(os.environ)
    e.pop("XDG_RUNTIME_DIR", None)
    e.pop("JOBSCOPE_SOCKET", None)
    return e


def summary(binary, rec):
    return json.loads(subprocess.run([binary, "summary", "--json", rec], capture_output=True, text=True).stdout)


def flood(binary, u, d, who="another user"):
    """Item 1: 200 marks (jobscope mark) at -i 0.1 while the neighbour floods connect() for 15 s (4 processes)."""
    job = d / "flood.sh"
    job.write_text(f"""#!/bin/sh
echo "$JOBSCOPE_SOCKET" > {d}/addr
while [ ! -e {d}/go ]; do sleep 0.02; done
i=0
while [ $i -lt 200 ]; do {binary} mark event e$i; i=$((i+1)); done
while [ ! -e {d}/done ]; do sleep 0.05; done
""")
    job.chmod(0o755)
    rec = d / ("flood-own.db" if u is None else "flood.db")
    p = subprocess.Popen([binary, "run", "-q", "-i", "0.1", "-o", rec, "--", job], env=env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    addr = wait(lambda: (d / "addr").exists() and (d / "addr").read_text().strip(), 30)
    outs = [d / f"flood{i}{'own' if u is None else ''}.json" for i in range(4)]
    att = [subprocess.Popen(as_user(u, PY, NEIGHBOUR, "flood", addr, 15, out) if u else
                            [PY, NEIGHBOUR, "flood", addr, "15", out]) for out in outs]
    time.sleep(0.5)
    (d / "go").write_text("")
    for a in att:
        a.wait()
    (d / "done").write_text("")
    p.wait()
    f = {"connected": 0, "errors": {}}
    for out in outs:
        x = json.loads(out.read_text())
        f["connected"] += x["connected"]
        for k, v in x["errors"].items():
            f["errors"][k] = f["errors"].get(k, 0) + v
    s = summary(binary, rec)
    for name in ("addr", "go", "done"):
        (d / name).unlink(missing_ok=True)
    return (f"flood ({who}): connected {f['connected']:,} times (refused: {f['errors']}); marks recorded "
            f"{s['phases']['marks'] if 'phases' in s else 0} of 200; samples taken {s['samples']['taken']}, "
            f"missed {s['samples']['missed']}")


def hijack(binary, u, d, how):
    """Item 2: the monitor killed (kill9) or ended (exit); the neighbour takes the address; the job marks."""
    for f in ("addr", "go", "rc", "err", "done"):
        (d / f).unlink(missing_ok=True)
    job = d / "hijack.sh"
    job.write_text(f"""#!/bin/sh
echo "$JOBSCOPE_SOCKET" > {d}/addr
while [ ! -e {d}/go ]; do sleep 0.02; done
{binary} mark event secret --data '{{"db_password": "hunter2"}}' 2> {d}/err
echo $? > {d}/rc
""")
    job.chmod(0o755)
    rec = d / f"hijack-{how}.db"
    q = {"env": env(), "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    if how == "kill9":
        p = subprocess.Popen([binary, "run", "-q", "-i", "0.2", "-o", rec, "--", job], **q)
    else:
        p = subprocess.Popen([binary, "run", "-q", "-i", "0.2", "-o", rec, "--until-main-exits", "--", "sh", "-c",
                              f"{job} & while [ ! -s {d}/addr ]; do sleep 0.02; done"], **q)
    addr = wait(lambda: (d / "addr").exists() and (d / "addr").read_text().strip(), 30)
    if how == "kill9":
        p.kill()
    p.wait()
    out = d / f"squat-{how}.json"
    a = subprocess.Popen(as_user(u, PY, NEIGHBOUR, "squat", addr, 4, out))
    wait(lambda: Path(str(out) + ".ready").exists(), 30)
    (d / "go").write_text("")
    wait(lambda: (d / "rc").exists() and (d / "rc").read_text().strip(), 30)
    a.wait()
    sq = json.loads(out.read_text())
    if not addr.startswith("@"):
        shutil.rmtree(Path(addr).parent, ignore_errors=True)
    return (f"hijack ({how}): neighbour bound the address: {sq['bound']} ({sq['bind_error']}), received "
            f"{sq['bytes']} bytes{' with the secret' if 'hunter2' in sq['data'] else ''}; jobscope mark exit "
            f"{(d / 'rc').read_text().strip()}, stderr {(d / 'err').read_text().strip()!r}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, headers=None, timeout=5):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=timeout) as r:
            return r.status, r.read().decode()
    except OSError:
        return None, ""


def slow(binary, u, d):
    """Item 3: 130 byte-a-second connections from 127.0.0.2/3 for 60 s; 6 scrapes 10 s apart meanwhile."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    p = subprocess.Popen([binary, "run", "-q", "-i", "0.5", "-o", d / "slow.db", "--listen", f"127.0.0.1:{port}",
                          "--", "sleep", "90"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait(lambda: get(url)[0] == 200, 20)
    out = d / "slow.json"
    a = subprocess.Popen(as_user(u, PY, NEIGHBOUR, "slow", f"127.0.0.1:{port}", 130, 60, out))
    time.sleep(2)
    ok = 0
    for _ in range(6):
        ok += get(url)[0] == 200
        time.sleep(10)
    a.wait()
    p.send_signal(signal.SIGTERM)
    p.wait()
    s = json.loads(out.read_text())
    c = s["closed_at"]
    return (f"slow clients: scrapes answered {ok} of 6; slow connections opened {s['opened']}, closed by the "
            f"server {len(c)} (last after {max(c) if c else 0:.1f} s), still open after {s['seconds']:.0f} s: "
            f"{s['still_open']}")


def listen_processes(binary, u, d):
    """Item 4: root's serve --listen-processes 1000, unauthenticated: another user's processes exposed?"""
    victim = subprocess.Popen(as_user(u, "sleep", "60"))
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    p = subprocess.Popen([binary, "serve", "-i", "0.3", "--listen", f"127.0.0.1:{port}", "--listen-processes",
                          "1000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    body = wait(lambda: (lambda r: r[1] if r[0] == 200 and "jobscope_samples_total" in r[1] else None)(get(url)),
                20)
    time.sleep(1)
    body = get(url)[1]
    p.send_signal(signal.SIGTERM)
    p.wait()
    victim.kill()
    victim.wait()
    pids = {int(m) for m in re.findall(r'^jobscope_process_[a-z_]+\{[^}]*pid="(\d+)"', body, re.M)}
    io = len(re.findall(rf'^jobscope_process_read_bytes_total\{{[^}}]*pid="{victim.pid}"', body, re.M))
    creds = d / "empty"
    creds.write_text("prom:\n")
    try:
        r = subprocess.run([binary, "serve", "--listen", f"127.0.0.1:{free_port()}", "--listen-basic-auth", creds],
                           capture_output=True, text=True, timeout=5)
        empty = f"refused, exit {r.returncode}"
    except subprocess.TimeoutExpired:
        empty = "accepted (served)"
    return (f"listen-processes: an unauthenticated scrape of root's serve shows {len(pids)} processes (the "
            f"neighbour's: {victim.pid in pids}, its I/O series: {io}); empty basic-auth password: {empty}")


def drops(binary, d):
    """Item 12: 4 processes x 4 threads x 5,000 events back to back; what they dropped vs dropped_by_senders."""
    src = d / "flood.c"
    src.write_text(r"""#include "jobscope.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static long per;
static void *th(void *a) { (void)a; for (long i = 0; i < per; i++) js_event("e", NULL); return NULL; }
int main(int argc, char **argv) {
    int procs = atoi(argv[1]), threads = atoi(argv[2]); per = atol(argv[3]);
    int pfd[2]; if (pipe(pfd)) return 1;
    for (int p = 0; p < procs; p++) if (fork() == 0) {
        pthread_t t[64];
        for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, th, NULL);
        for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
        unsigned long long dd = js_marks_dropped();
        if (write(pfd[1], &dd, sizeof dd) != sizeof dd) _exit(1);
        _exit(0);
    }
    unsigned long long tot = 0, x;
    for (int p = 0; p < procs; p++) { if (read(pfd[0], &x, sizeof x) != sizeof x) return 1; tot += x; }
    while (wait(NULL) > 0);
    printf("%llu\n", tot);
    return 0;
}
""")
    lib = Path(binary).resolve().parent / "lib"
    exe = d / "flood"
    subprocess.run(["cc", "-O2", f"-I{REPO / 'include'}", src, "-o", exe, f"-L{lib}", "-ljobscope", "-lpthread",
                    f"-Wl,-rpath,{lib}"], check=True)
    rows = []
    for cfg in (("4", "4", "5000"), ("8", "1", "10000")):
        rec = d / f"drops-{'-'.join(cfg)}.db"
        out = subprocess.run([binary, "run", "-q", "-i", "0.5", "-o", rec, "--", exe, *cfg], capture_output=True,
                             text=True, env=env()).stdout
        s = summary(binary, rec)
        rows.append(f"{cfg[0]}x{cfg[1]}x{cfg[2]}: dropped {int(out):,}, dropped_by_senders "
                    f"{s['phases']['dropped_by_senders']:,}")
    return "dropped_by_senders: " + "; ".join(rows)


def empty_packet(binary, d):
    script = d / "empty.py"
    script.write_text('''import os, socket, struct, time
def pkt(name):
    raw = name.encode()
    return struct.pack("=2sBBiqqIIHHB3x", b"JS", 1, 2, -1, time.monotonic_ns(), time.time_ns(), os.getpid(), 0,
                       len(raw), 0, 0) + raw
a = os.environ["JOBSCOPE_SOCKET"]
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect("\\0" + a[1:] if a.startswith("@") else a)
s.send(pkt("before")); s.send(b""); s.send(pkt("after"))
time.sleep(0.5)
''')
    rec = d / "empty.db"
    subprocess.run([binary, "run", "-q", "-i", "0.1", "-o", rec, "--", PY, script], env=env())
    names = [n for (n,) in sqlite3.connect(rec).execute("SELECT name FROM marks ORDER BY t_mono_ns")]
    return f"empty packet: marks recorded {names} (sent: before, empty, after)"


def textfile(binary, u, d):
    t = Path(tempfile.mkdtemp(prefix="jsfig-tf-"))
    t.chmod(0o1777)
    prom = t / "job.prom"
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(wfd)
        os.read(rfd, 1)
        os.execv(binary, [binary, "run", "-q", "-i", "0.1", "-o", str(d / "tf.db"), "--textfile", str(prom), "--",
                          "sleep", "2"])
    os.close(rfd)
    subprocess.run(as_user(u, "ln", "-s", t / "theirs", f"{prom}.tmp.{pid}"), check=True)
    os.write(wfd, b"g")
    seen = 0
    while True:
        done, st = os.waitpid(pid, os.WNOHANG)
        seen += prom.exists()
        if done:
            break
        time.sleep(0.05)
    shutil.rmtree(t)
    return f"textfile with a neighbour's symlink at NAME.prom.tmp.PID: run exit {os.waitstatus_to_exitcode(st)}, " \
           f"textfile seen in {seen} polls"


def port_taken(binary, u, d):
    port = free_port()
    h = subprocess.Popen(as_user(u, PY, "-c", "import socket, sys, time\ns = socket.socket()\n"
                                 "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(1); print('ok', flush=True)\n"
                                 "time.sleep(30)", port), stdout=subprocess.PIPE)
    h.stdout.readline()
    marker = d / "ran"
    r = subprocess.run([binary, "run", "-q", "-o", d / "taken.db", "--listen", f"127.0.0.1:{port}", "--", "touch",
                        marker], capture_output=True, text=True)
    h.kill()
    h.wait()
    return f"--listen port in use: exit {r.returncode}, job ran: {marker.exists()}, stderr {r.stderr.strip()!r}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(REPO / "build" / "jobscope"))
    a = ap.parse_args()
    binary = str(Path(a.bin).resolve())
    name = f"jsfig{os.getpid()}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", name],
                   check=True)
    d = Path(tempfile.mkdtemp(prefix="jsfig-"))
    d.chmod(0o777)
    try:
        u = pwd.getpwnam(name)
        for f in (lambda: flood(binary, u, d), lambda: flood(binary, None, d, "the run's own user"),
                  lambda: hijack(binary, u, d, "kill9"),
                  lambda: hijack(binary, u, d, "exit"), lambda: slow(binary, u, d),
                  lambda: listen_processes(binary, u, d), lambda: empty_packet(binary, d),
                  lambda: drops(binary, d), lambda: textfile(binary, u, d), lambda: port_taken(binary, u, d)):
            try:
                print(f(), flush=True)
            except Exception as e:  # a figure that could not be taken says why, the others go on
                print(f"(failed: {e!r})", flush=True)
    finally:
        shutil.rmtree(d, ignore_errors=True)
        subprocess.run(["userdel", name])


if __name__ == "__main__":
    main()
