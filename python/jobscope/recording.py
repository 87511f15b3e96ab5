# SPDX-License-Identifier: MIT
"""Reading jobscope recordings into pandas, and comparing runs.

    rec = jobscope.read("run.db")
    rec.tree        # a row per sample: the scope's CPU rate, memory, I/O rates, ... (jobscope export --scope tree)
    rec.processes   # a row per sample and process
    rec.system      # a row per sample: the host
    rec.gpus        # a row per sample and GPU, when the build has a GPU view (else empty)
    rec.marks       # a row per mark: phase begins and ends, events, with the phase they leave active
    rec.phases      # per phase, cumulative figures at each sample (the last sample's rows are the totals)
    rec.summary     # the summary (dict), as `jobscope summary --json` prints it
    rec.figures     # the same summary as a table: a row per figure (its path, value, unit, exact, method)
    rec.meta        # the run's metadata (dict of text)
    jobscope.compare("a.db", "b.db")   # a table of the main figures side by side, with differences

The views are the model's, derived by libjobscope exactly as `jobscope export` derives them (reading a
recording never depends on the host it is read on). A recording still being written can be read: it is
read up to its last sample.
"""
import math
import os
import sqlite3
import tempfile
from pathlib import Path

from . import _lib

VIEWS = {"tree": "tree", "processes": "process", "system": "system", "gpus": "gpu", "marks": "marks",
         "phases": "phases", "figures": "summary"}


def _pandas():
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - pandas is a declared dependency of read()
        raise ImportError("jobscope.read needs pandas (Debian: python3-pandas)") from e
    return pandas


def view(path, name):
    """One view of the recording at `path` as a pandas DataFrame (empty when this build lacks the view)."""
    import errno

    pd = _pandas()
    lib = _lib.lib()
    with tempfile.TemporaryDirectory(prefix="jobscope-read-") as d:
        out = os.path.join(d, f"{name}.csv")
        rc = lib.js_recording_export(os.fsencode(path), name.encode(), b"csv", out.encode())
        if rc == -errno.ENOENT:
            return pd.DataFrame()
        _lib.check(rc, f"{path}: view {name}")
        df = pd.read_csv(out, keep_default_na=True, na_values=[""])
    if "time" in df.columns:
        df["time"] = pd.to_datetime(df["time"], utc=True)
    return df


def _meta(path):
    uri = Path(os.path.abspath(path)).as_uri() + "?mode=ro"
    try:
        con = sqlite3.connect(uri, uri=True)
        try:
            return dict(con.execute("SELECT key, value FROM meta").fetchall())
        finally:
            con.close()
    except sqlite3.Error:
        return {}


class Recording:
    """A recording read into pandas (see the module's doc). Views are read when first used."""

    def __init__(self, path):
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise FileNotFoundError(self.path)
        import json

        self.summary = json.loads(_lib.take_string(_lib.lib().js_recording_summary(os.fsencode(self.path))))
        self.meta = _meta(self.path)
        self._views = {}

    def view(self, name):
        """Any view by its export name (jobscope export --list)."""
        if name not in self._views:
            self._views[name] = view(self.path, name)
        return self._views[name]

    def __getattr__(self, attr):
        if attr in VIEWS:
            return self.view(VIEWS[attr])
        raise AttributeError(attr)

    @property
    def cells(self):
        """Per notebook cell (phases named "cell N" by the IPython extension): the phases rows of the last
        sample, indexed by cell number."""
        ph = self.phases
        if ph.empty:
            return ph
        last = ph[ph["sample"] == ph["sample"].max()]
        cells = last[last["phase"].astype(str).str.match(r"^cell \d+$")].copy()
        cells["cell"] = cells["phase"].str.slice(5).astype(int)
        return cells.set_index("cell").sort_index()

    def __repr__(self):
        return f"<jobscope.Recording {self.path}: {self.summary.get('mode')}, {self.summary.get('state')}>"


def read(path):
    """The recording at `path` (see Recording)."""
    return Recording(path)


def _summary_of(x):
    if isinstance(x, dict):
        return x
    if isinstance(x, Recording):
        return x.summary
    if hasattr(x, "jobscope_summary"):  # a Tracker
        return x.jobscope_summary
    return Recording(x).summary


def _dig(d, path):
    for k in path.split("."):
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


ROWS = [
    ("wall time (s)", "wall_time_s"),
    ("CPU time (s)", "cpu.total_s"),
    ("CPU user (s)", "cpu.user_s"),
    ("CPU system (s)", "cpu.system_s"),
    ("mean cores", "cpu.mean_cores"),
    ("max cores", "cpu.max_cores"),
    ("peak memory (bytes)", "memory.peak_bytes"),
    ("peak RSS sum (bytes)", "memory.peak_rss_sum_bytes"),
    ("peak RSS, one process, kernel (bytes)", "memory.peak_rss_kernel_bytes"),
    ("peak private, USS (bytes)", "memory.peak_private_bytes"),
    ("read from storage (bytes)", "io.read_bytes"),
    ("written to storage (bytes)", "io.write_bytes"),
    ("energy, scope (J)", "energy.attribution.scope_energy_j"),
    ("processes", "processes.total"),
]


def compare(a, b, labels=("a", "b")):
    """A table of the main figures of two runs (recording paths, Recordings, Trackers or summary dicts) with
    their difference and ratio (b / a), and the wall and CPU time of every phase either run has."""
    pd = _pandas()
    sa, sb = _summary_of(a), _summary_of(b)
    rows = []
    for label, key in ROWS:
        va, vb = _dig(sa, key), _dig(sb, key)
        if va is None and vb is None:
            continue
        rows.append((label, va, vb))
    pa = {p["name"]: p for p in (_dig(sa, "phases.phases") or [])}
    pb = {p["name"]: p for p in (_dig(sb, "phases.phases") or [])}
    for name in list(pa) + [n for n in pb if n not in pa]:
        for key, label in (("wall_s", "wall (s)"), ("cpu_s", "CPU (s)"), ("peak_bytes", "peak memory (bytes)")):
            rows.append((f"phase {name}: {label}", (pa.get(name) or {}).get(key), (pb.get(name) or {}).get(key)))
    df = pd.DataFrame(rows, columns=["figure", labels[0], labels[1]]).set_index("figure")
    x, y = df[labels[0]].astype(float), df[labels[1]].astype(float)
    df["difference"] = y - x
    df["ratio"] = [yy / xx if xx not in (0, None) and not math.isnan(xx) else math.nan for xx, yy in zip(x, y)]
    return df
