# SPDX-License-Identifier: MIT
"""A recording's views as plain rows (no pandas): what the drop-ins (gpu_tracker, run_monitor) shape.

The views are libjobscope's model, exported exactly as `jobscope export --scope VIEW --format csv` writes them
(js_recording_export); this module only parses the CSV: numbers become floats, empty cells None (missing,
never 0), text stays text. A recording still being written is read up to its last committed sample.
"""
import csv
import errno
import os
import sqlite3
import tempfile
from pathlib import Path

from . import _lib

TEXT_COLUMNS = {"time", "comm", "state", "vendor", "phase", "kind", "name", "data", "mark"}


def _cell(key, value):
    if value is None or value == "":
        return None
    if key in TEXT_COLUMNS:
        return value
    try:
        return float(value)
    except ValueError:
        return value


def rows(path, view, columns=None):
    """The rows of `view` of the recording at `path`: a list of dicts (column -> float, str or None); [] when
    this build has no such view. `columns`: only these (and `sample`) are kept. Raises OSError when the
    recording cannot be read."""
    lib = _lib.lib()
    with tempfile.TemporaryDirectory(prefix="jobscope-view-") as d:
        out = os.path.join(d, "view.csv")
        rc = lib.js_recording_export(os.fsencode(path), view.encode(), b"csv", out.encode())
        if rc == -errno.ENOENT and os.path.exists(path):
            return []
        _lib.check(rc, f"{path}: view {view}")
        with open(out, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, [])
            keep = [(i, k) for i, k in enumerate(header) if columns is None or k in columns or k == "sample"]
            return [{k: _cell(k, r[i] if i < len(r) else None) for i, k in keep} for r in reader]


def by_sample(view_rows):
    """{sample number: [rows of that sample]} in sample order."""
    out = {}
    for r in view_rows:
        s = r.get("sample")
        if s is not None:
            out.setdefault(int(s), []).append(r)
    return dict(sorted(out.items()))


def query(path, sql, args=()):
    """Rows of an SQL query on the recording's raw tables (docs/FORMAT.md), read-only; [] when a table is
    missing."""
    uri = Path(os.path.abspath(path)).as_uri() + "?mode=ro"
    con = sqlite3.connect(uri, uri=True)
    try:
        return con.execute(sql, args).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()


def meta(path):
    """The recording's metadata (dict of text)."""
    return dict(query(path, "SELECT key, value FROM meta"))
