#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Hostile edits of a real recording, read by jobscope under AddressSanitizer and UndefinedBehaviorSanitizer.

libFuzzer's fuzz_recording flips bytes; this sweep edits values the way a person with sqlite3 would: every
numeric column of every table that has rows set to an extreme (INT64_MAX, INT64_MIN, -1, 2^62, 1e308), in
every row or in one row among normal ones, every metadata key set to an extreme or to text, then runs
`summary --json` (checked to be valid JSON), `summary`, `report` and (with --exports) `export` of every view.
It prints each distinct sanitizer report, crash, timeout or invalid JSON with the edit that caused it, and
exits 1 when there is any (docs/RELIABILITY.md, "shared node", 10).

usage: fuzz/hostile_recordings.py JOBSCOPE RECORDING [--one-row] [--per-column] [--exports] [--only TEXT...]
  JOBSCOPE   a sanitizer build's binary (build-asan/jobscope)
  RECORDING  the recording to edit (fuzz/seeds/recording.db; bench/synth_recording makes one with RAPL,
             network and disk data; tests/fakes' NVML one with GPU data)
"""
import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

EXTREMES = ["9223372036854775807", "-9223372036854775808", "-1", "4611686018427387904"]
VIEWS = ["tree", "process", "system", "phases", "marks", "cgroup", "split", "energy", "network", "node", "gpu"]


def edits(seed, per_column, one_row):
    con = sqlite3.connect(f"file:{seed}?mode=ro", uri=True)
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    cols = {t: [(r[1], r[2]) for r in con.execute(f"PRAGMA table_info({t})")] for t in tables}
    rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    keys = [r[0] for r in con.execute("SELECT key FROM meta")]
    con.close()
    out = []
    where = lambda t: f" WHERE rowid = (SELECT max(rowid) / 2 + 1 FROM {t})" if one_row else ""  # noqa: E731
    for t in tables:
        if t in ("meta", "columns") or rows[t] == 0:
            continue
        num = [c for c, ty in cols[t] if ty in ("INTEGER", "REAL") and not (t == "samples" and c == "sample")]
        if per_column:
            for c in num:
                for e in EXTREMES[:2]:
                    out.append((f"{t}.{c}={e}", f"UPDATE {t} SET {c} = {e}{where(t)}"))
        elif num:
            for e in EXTREMES + ["1e308"]:
                out.append((f"{t}.*={e}", f"UPDATE {t} SET " + ", ".join(f"{c} = {e}" for c in num) + where(t)))
    if not per_column and not one_row:
        for k in keys:
            for e in EXTREMES + ["0", "1e308", "x"]:
                out.append((f"meta.{k}={e}", f"UPDATE meta SET value = '{e}' WHERE key = '{k}'"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jobscope")
    ap.add_argument("recording")
    ap.add_argument("--one-row", action="store_true", help="edit one row among normal ones")
    ap.add_argument("--per-column", action="store_true", help="one edit per column (else per table)")
    ap.add_argument("--exports", action="store_true", help="also export every view")
    ap.add_argument("--only", nargs="*", default=[], help="only the edits whose name holds one of these")
    a = ap.parse_args()
    env = dict(os.environ, UBSAN_OPTIONS="print_stacktrace=0:halt_on_error=0", ASAN_OPTIONS="detect_leaks=0")
    work = tempfile.mkdtemp(prefix="jobscope-hostile-")
    found = {}
    todo = [e for e in edits(a.recording, a.per_column, a.one_row) if not a.only or any(o in e[0] for o in a.only)]
    try:
        for i, (name, sql) in enumerate(todo):
            db = os.path.join(work, "h.db")
            shutil.copy(a.recording, db)
            con = sqlite3.connect(db)
            con.executescript(sql)
            con.commit()
            con.close()
            cmds = [["summary", "--json", db], ["summary", db],
                    ["report", "--force", "-o", os.path.join(work, "h.html"), db]]
            if a.exports:
                cmds += [["export", "--format", "csv", "--scope", v, db] for v in VIEWS]
            for cmd in cmds:
                what = f"{name} [{' '.join(cmd[:2]) if cmd[0] != 'report' else 'report'}]"
                try:
                    p = subprocess.run([a.jobscope, *cmd], capture_output=True, text=True, env=env, timeout=60)
                except subprocess.TimeoutExpired:
                    found.setdefault(f"timeout: {cmd[0]}", what)
                    continue
                if p.returncode < 0:
                    found.setdefault(f"signal {-p.returncode}: {cmd[0]}", what)
                for m in re.finditer(r"(\S+:\d+:\d+): runtime error: ([^\n]*)", p.stderr):
                    found.setdefault(f"{m.group(1)}: {m.group(2)[:90]}", what)
                if "ERROR: AddressSanitizer" in p.stderr:
                    found.setdefault("ASan: " + p.stderr.split("ERROR: AddressSanitizer")[1][:90], what)
                if cmd[:2] == ["summary", "--json"] and p.returncode == 0:
                    try:
                        json.loads(p.stdout)
                    except ValueError:
                        found.setdefault("invalid JSON from summary --json", what)
            print(f"\r{i + 1}/{len(todo)} edits, {len(found)} findings", end="", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(file=sys.stderr)
    for k, v in sorted(found.items()):
        print(f"{k}  <-  {v}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
