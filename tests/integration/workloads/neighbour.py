# SPDX-License-Identifier: MIT
"""A neighbour on a shared node: what another local user tries against a run (tests/integration/
test_shared_node.py runs it as a user made for the test). Each mode writes one JSON object to OUT.

  neighbour.py flood ADDR SECONDS OUT      connect() to a run's mark socket as fast as possible (the address as
                                           /proc/net/unix shows it: "@name" abstract, or a path)
  neighbour.py squat ADDR SECONDS OUT      take the address a run used once its monitor is gone (bind it; for a
                                           path, make its directory first if it is missing), listen, and keep
                                           every byte that arrives; READY is written beside OUT once tried
  neighbour.py slow HOST:PORT N SECONDS OUT  N connections to an HTTP endpoint, alternately from 127.0.0.2 and
                                           127.0.0.3, each sending its request one byte a second; when the
                                           server closed each one, and how many were still open at the end
  neighbour.py visible ADDR OUT            whether ADDR appears in /proc/net/unix (anyone may read it)
"""
import errno
import json
import os
import select
import socket
import sys
import time


def write(out, obj):
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, out)


def sockaddr(addr):
    return "\0" + addr[1:] if addr.startswith("@") else addr


def flood(addr, seconds, out):
    end = time.monotonic() + seconds
    connected, errors, held = 0, {}, []
    while time.monotonic() < end:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.setblocking(False)
        try:
            s.connect(sockaddr(addr))
            connected += 1
            held.append(s)  # keep some open (the monitor holds each until it sees the end)
            if len(held) > 256:
                held.pop(0).close()
        except OSError as e:
            errors[errno.errorcode.get(e.errno, str(e.errno))] = errors.get(
                errno.errorcode.get(e.errno, str(e.errno)), 0) + 1
            s.close()
    for s in held:
        s.close()
    write(out, {"connected": connected, "errors": errors})


def squat(addr, seconds, out):
    res = {"bound": False, "bind_error": None, "mkdir_error": None, "connections": 0, "bytes": 0, "data": ""}
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    if not addr.startswith("@"):
        d = os.path.dirname(addr)
        try:
            os.mkdir(d, 0o755)
        except OSError as e:
            res["mkdir_error"] = errno.errorcode.get(e.errno, str(e.errno))
    try:
        s.bind(sockaddr(addr))
        s.listen(16)
        res["bound"] = True
    except OSError as e:
        res["bind_error"] = errno.errorcode.get(e.errno, str(e.errno))
    with open(out + ".ready", "w") as f:
        f.write("1\n")
    end = time.monotonic() + seconds
    conns = []
    while res["bound"] and time.monotonic() < end:
        r, _, _ = select.select([s] + conns, [], [], 0.1)
        for x in r:
            if x is s:
                c, _ = s.accept()
                conns.append(c)
                res["connections"] += 1
            else:
                try:
                    data = x.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    conns.remove(x)
                    x.close()
                    continue
                res["bytes"] += len(data)
                res["data"] += data.decode("latin-1")
    write(out, res)


def slow(target, n, seconds, out):
    host, port = target.rsplit(":", 1)
    start = time.monotonic()
    request = f"GET /metrics HTTP/1.1\r\nHost: {host}\r\nUser-Agent: slowloris\r\n".encode() + b"X-Pad: " + b"a" * 4000
    conns = []
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((f"127.0.0.{2 + i % 2}", 0))
        try:
            s.connect((host, int(port)))
        except OSError:
            s.close()
            continue
        s.setblocking(False)
        conns.append({"s": s, "sent": 0, "closed_at": None})
    opened = len(conns)
    end = start + seconds
    while time.monotonic() < end and any(c["closed_at"] is None for c in conns):
        for c in conns:
            if c["closed_at"] is not None:
                continue
            try:
                if c["s"].recv(4096, socket.MSG_PEEK) == b"":
                    raise ConnectionResetError
            except BlockingIOError:
                pass
            except OSError:
                c["closed_at"] = time.monotonic() - start
                c["s"].close()
                continue
            try:
                c["s"].send(request[c["sent"]:c["sent"] + 1])
                c["sent"] += 1
            except BlockingIOError:
                pass
            except OSError:
                c["closed_at"] = time.monotonic() - start
                c["s"].close()
        time.sleep(1.0)
    still = [c for c in conns if c["closed_at"] is None]
    for c in still:
        c["s"].close()
    write(out, {"opened": opened, "closed_at": sorted(c["closed_at"] for c in conns if c["closed_at"] is not None),
                "still_open": len(still), "seconds": time.monotonic() - start})


def visible(addr, out):
    with open("/proc/net/unix") as f:
        table = f.read()
    write(out, {"visible": addr in table})


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "flood":
        flood(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    elif mode == "squat":
        squat(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    elif mode == "slow":
        slow(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
    elif mode == "visible":
        visible(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"unknown mode {mode}")
