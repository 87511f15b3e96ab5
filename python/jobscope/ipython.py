# SPDX-License-Identifier: MIT
"""The IPython / Jupyter extension: `%load_ext jobscope`, then

    %jobscope start [INTERVAL] [--level process|system] [--output FILE] [--cell-report]
    %jobscope stop
    %jobscope report [--cell N] [--level process|system]
    %jobscope plot [METRIC ...] [--cell N] [--level process|system]
    %jobscope export FILE          (.db: the recording; .csv: a row per sample with its cell; .json: summary)
    %jobscope load FILE            (a saved recording, for offline analysis: report and plot then read it)
    %jobscope status

A monitor runs on a thread of the kernel (jobscope.Tracker) over the kernel and every process it starts;
every cell is a phase named "cell N" (a mark from IPython's pre_run_cell and post_run_cell events), so every
sample is attributed to the cell that was running, and each cell's CPU, memory, I/O and energy come from
jobscope's exact totals (a sample is taken when a cell ends, so its figures are complete at once).

Levels (JUmPER's): `process` is the kernel's process tree (the monitor's scope); `system` is the node (the
host's CPU utilisation, memory, network and disks, which every recording holds); `user` is every process of
the kernel's user and `slurm` the SLURM job the kernel runs in (its cgroup, or its slurmstepd's tasks), both
read by the same monitor as levels of its own (the recording's `levels` and `level_phases` views), started
with `--level user` or `--level slurm` (the user level is always read beside a slurm one).

JUmPER's own magics (%perfmonitor_start, ...) are registered too: see jobscope.jumper.
"""
import argparse
import io
import json
import os
import shlex
import shutil
import sqlite3
import tempfile

from . import marks
from .recording import Recording
from .tracker import Tracker

try:
    from IPython.core.magic import Magics, line_magic, magics_class
    from IPython.core.error import UsageError
except ImportError:  # pragma: no cover - only imported by IPython
    Magics = object

    def magics_class(c):
        return c

    def line_magic(f):
        return f

    class UsageError(Exception):
        pass


LEVELS = ("process", "system", "user", "slurm")
DEFAULT_METRICS = {"process": ["cpu_cores", "memory_bytes", "read_bytes_per_s", "write_bytes_per_s"],
                   "system": ["cpu_util_fraction", "mem_used_bytes"]}


def _fmt_bytes(b):
    if b is None or b != b:
        return "n/a"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(b) < 1024 or unit == "TiB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.2f} {unit}"
        b /= 1024


def _parser(prog):
    p = argparse.ArgumentParser(prog=f"%jobscope {prog}", add_help=False)
    p.exit = lambda status=0, message=None: (_ for _ in ()).throw(UsageError(message or prog))
    p.error = lambda message: (_ for _ in ()).throw(UsageError(f"%jobscope {prog}: {message}"))
    return p


@magics_class
class JobscopeMagics(Magics):
    def __init__(self, shell):
        super().__init__(shell)
        self.tracker = None
        self.output = None
        self.tmpdir = None
        self.recording_path = None  # what report and plot read once stopped, or after load
        self.level = "process"
        self.cell = None
        self.cell_report = False
        self.cells = {}  # cell number -> its phase figures, as of the sample after it ended

    # ---- cells --------------------------------------------------------------------------------------

    def _pre(self, info=None):
        if not self.tracker:
            return
        self.cell = self.shell.execution_count
        marks.begin(f"cell {self.cell}")

    def _post(self, result=None):
        if not self.tracker or self.cell is None:
            return
        n = self.cell
        self.cell = None
        marks.end(f"cell {n}")
        try:
            s = self.tracker.jobscope_summary  # takes a sample: the cell's figures are complete
        except Exception:  # never break the user's cell for monitoring
            return
        for p in (s.get("phases") or {}).get("phases", []):
            if p["name"] == f"cell {n}":
                self.cells[n] = p
        if self.cell_report and n in self.cells:
            p = self.cells[n]
            print(f"[jobscope] cell {n}: {p['wall_s']:.2f} s wall, {p['cpu_s']:.2f} s CPU "
                  f"({p['mean_cores'] or 0:.2f} cores), peak {_fmt_bytes(p.get('peak_bytes'))}, "
                  f"read {_fmt_bytes(p.get('read_bytes'))}, written {_fmt_bytes(p.get('write_bytes'))}")

    # ---- the magic ----------------------------------------------------------------------------------

    @line_magic
    def jobscope(self, line):
        """%jobscope start|stop|report|plot|export|load|status ... (see jobscope.ipython's doc)"""
        args = shlex.split(line)
        cmd, rest = (args[0], args[1:]) if args else ("status", [])
        fn = getattr(self, f"_cmd_{cmd}", None)
        if fn is None:
            raise UsageError(f"%jobscope: unknown command {cmd!r} (start, stop, report, plot, export, load, "
                             "status)")
        return fn(rest)

    def _level(self, level, starting=False):
        if level not in LEVELS:
            raise UsageError(f"%jobscope: level {level!r} is not one of {', '.join(LEVELS)}")
        if level == "slurm" and starting and not os.environ.get("SLURM_JOB_ID"):
            raise UsageError("%jobscope: level 'slurm': this kernel is not inside a SLURM job (no SLURM_JOB_ID)")
        if level in ("user", "slurm") and not starting and self.recording_path:
            lv = Recording(self.recording_path).view("levels")
            if lv.empty or not (lv["level"] == ("job" if level == "slurm" else "user")).any():
                raise UsageError(f"%jobscope: level {level!r} was not monitored (%jobscope start --level {level})")
        return level

    def _cmd_start(self, argv):
        p = _parser("start")
        p.add_argument("interval", nargs="?", type=float, default=1.0)
        p.add_argument("--level", default="process")
        p.add_argument("--output")
        p.add_argument("--cell-report", action="store_true")
        a = p.parse_args(argv)
        self.level = self._level(a.level, starting=True)
        if self.tracker:
            raise UsageError("%jobscope: already started (%jobscope stop first)")
        levels = ["user"] + (["job"] if self.level == "slurm" else []) if self.level in ("user", "slurm") else []
        if a.output:
            self.output = a.output
        else:
            self.tmpdir = tempfile.mkdtemp(prefix="jobscope-nb-")
            self.output = os.path.join(self.tmpdir, "session.db")
        self.tracker = Tracker(interval=a.interval, output=self.output, overwrite=bool(a.output),
                               levels=levels).start()
        self.recording_path = self.output
        self.cells = {}
        self.cell_report = a.cell_report
        self.shell.events.register("pre_run_cell", self._pre)
        self.shell.events.register("post_run_cell", self._post)
        print(f"[jobscope] monitoring this kernel (pid {os.getpid()}) and its children every {a.interval:g} s; "
              f"recording {self.output}")

    def _cmd_stop(self, argv):
        if not self.tracker:
            raise UsageError("%jobscope: not started")
        if self.cell is not None:  # the cell running %jobscope stop ends here
            marks.end(f"cell {self.cell}")
            self.cell = None
        for ev, fn in (("pre_run_cell", self._pre), ("post_run_cell", self._post)):
            try:
                self.shell.events.unregister(ev, fn)
            except ValueError:
                pass
        self.tracker.stop()
        s = self.tracker.jobscope_summary
        for p in (s.get("phases") or {}).get("phases", []):
            if p["name"].startswith("cell "):
                self.cells[int(p["name"][5:])] = p
        self.tracker = None
        print(f"[jobscope] stopped: {s['wall_time_s']:.2f} s, CPU {s['cpu']['total_s']:.2f} s, "
              f"peak memory {_fmt_bytes(s['memory']['peak_bytes'])}; recording {self.recording_path}")

    def _cmd_status(self, argv):
        if self.tracker:
            print(f"[jobscope] running; recording {self.output}; {len(self.cells)} cells measured")
        elif self.recording_path:
            print(f"[jobscope] stopped; recording {self.recording_path}")
        else:
            print("[jobscope] not started (%jobscope start [INTERVAL])")

    def _recording(self):
        if not self.recording_path:
            raise UsageError("%jobscope: nothing recorded yet (%jobscope start, or %jobscope load FILE)")
        if self.tracker:
            self.tracker.sample()
        return Recording(self.recording_path)

    def _cell_table(self, rec, level):
        import pandas as pd

        cells = rec.cells
        if cells.empty:
            return pd.DataFrame()
        if level == "process":
            cols = {"wall_s": "wall_s", "cpu_s": "cpu_s", "peak_bytes": "peak_bytes",
                    "read_bytes": "read_bytes", "write_bytes": "write_bytes", "energy_j": "energy_j"}
            t = cells[[c for c in cols if c in cells.columns]].copy()
            t.insert(2, "mean_cores", t["cpu_s"] / t["wall_s"].where(t["wall_s"] > 0))
            return t
        if level in ("user", "slurm"):  # the level's own phases: every cell is one
            ph = rec.view("level_phases")
            ph = ph[ph["level"] == ("job" if level == "slurm" else "user")] if not ph.empty else ph
            if ph.empty:
                return pd.DataFrame()
            last = ph[ph["sample"] == ph["sample"].max()]
            last = last[last["phase"].astype(str).str.match(r"^cell \d+$")].copy()
            last["cell"] = last["phase"].str.slice(5).astype(int)
            t = last.set_index("cell").sort_index()
            cols = [c for c in ("wall_s", "cpu_s", "peak_rss_bytes", "read_bytes", "write_bytes") if c in t.columns]
            t = t[cols].copy()
            t.insert(2, "mean_cores", t["cpu_s"] / t["wall_s"].where(t["wall_s"] > 0))
            return t
        # system: the host's figures over each cell's time
        sysv, mk = rec.system, rec.marks
        rows = []
        for n in cells.index:
            name = f"cell {n}"
            b = mk[(mk["name"] == name) & (mk["kind"] == "begin")]["unix_s"]
            e = mk[(mk["name"] == name) & (mk["kind"] == "end")]["unix_s"]
            t0 = b.min() if len(b) else None
            t1 = e.max() if len(e) else None
            sel = sysv[(sysv["unix_s"] >= (t0 or 0)) & (sysv["unix_s"] <= (t1 + rec.summary["samples"]["interval_s"]
                                                                         if t1 else float("inf")))]
            rows.append({"cell": n, "wall_s": cells.loc[n, "wall_s"],
                         "cpu_util_mean": sel["cpu_util_fraction"].mean() if len(sel) else None,
                         "mem_used_max_bytes": sel["mem_used_bytes"].max() if len(sel) else None})
        return pd.DataFrame(rows).set_index("cell")

    def _cmd_report(self, argv):
        p = _parser("report")
        p.add_argument("--cell", type=int)
        p.add_argument("--level", default=None)
        a = p.parse_args(argv)
        level = self._level(a.level or self.level)
        rec = self._recording()
        table = self._cell_table(rec, level)
        if a.cell is not None:
            if a.cell not in getattr(table, "index", []):
                raise UsageError(f"%jobscope report: no figures for cell {a.cell}")
            table = table.loc[[a.cell]]
        from IPython.display import display

        s = rec.summary
        print(f"[jobscope] {s.get('state')} run: {s['wall_time_s']:.2f} s wall, CPU {s['cpu']['total_s']:.2f} s "
              f"(mean {s['cpu']['mean_cores'] or 0:.2f} cores), peak memory {_fmt_bytes(s['memory']['peak_bytes'])}"
              f"; level {level}")
        display(table)
        return None

    def _cmd_plot(self, argv):
        p = _parser("plot")
        p.add_argument("metrics", nargs="*")
        p.add_argument("--cell", type=int)
        p.add_argument("--level", default=None)
        p.add_argument("--format", choices=("png", "svg"), default="png")
        a = p.parse_args(argv)
        level = self._level(a.level or self.level)
        rec = self._recording()
        data = rec.tree if level == "process" else rec.system
        metrics = a.metrics or DEFAULT_METRICS[level]
        missing = [m for m in metrics if m not in data.columns]
        if missing:
            raise UsageError(f"%jobscope plot: no metric {', '.join(missing)}; "
                             f"{level} has {', '.join(c for c in data.columns if c not in ('time', 'sample'))}")
        from matplotlib.figure import Figure  # no pyplot: the user's backend is left as it is

        t0 = float(rec.meta.get("start_unix_ns", 0) or 0) / 1e9 or float(data["unix_s"].min())
        x = data["unix_s"] - t0
        fig = Figure(figsize=(9, 2.2 * len(metrics)), dpi=90)
        axes = fig.subplots(len(metrics), 1, sharex=True, squeeze=False)[:, 0]
        spans = self._cell_spans(rec, t0)
        if a.cell is not None:
            spans = [s for s in spans if s[0] == a.cell]
            if not spans:
                raise UsageError(f"%jobscope plot: no cell {a.cell} in this recording")
        for ax, m in zip(axes, metrics):
            ax.plot(x, data[m], lw=1.2)
            ax.set_ylabel(m, fontsize=8)
            for i, (n, b, e) in enumerate(spans):
                ax.axvspan(b, e, color=("C1" if i % 2 else "C2"), alpha=0.15)
                if ax is axes[0]:
                    ax.text((b + e) / 2, 1.0, f"[{n}]", transform=ax.get_xaxis_transform(), ha="center",
                            va="bottom", fontsize=7)
        if a.cell is not None and spans:
            _, b, e = spans[0]
            axes[0].set_xlim(b - 0.05 * (e - b + 1e-9), e + 0.05 * (e - b + 1e-9))
        axes[-1].set_xlabel("seconds since the start")
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format=a.format)
        from IPython.display import SVG, Image, display

        display(Image(data=buf.getvalue(), format="png") if a.format == "png" else SVG(data=buf.getvalue()))
        return None

    def _cell_spans(self, rec, t0):
        """(cell, begin, end) in seconds since t0 (unix seconds), from the marks."""
        mk = rec.marks
        if mk.empty:
            return []
        spans = []
        cells = mk[mk["name"].astype(str).str.match(r"^cell \d+$")]
        for name, g in cells.groupby("name"):
            b = g[g["kind"] == "begin"]["mark_unix_s"].min()
            e = g[g["kind"] == "end"]["mark_unix_s"].max()
            if b == b and e == e:
                spans.append((int(name[5:]), b - t0, e - t0))
        return sorted(spans)

    def _cmd_export(self, argv):
        p = _parser("export")
        p.add_argument("file")
        a = p.parse_args(argv)
        rec = self._recording()
        ext = os.path.splitext(a.file)[1].lower()
        if ext in (".db", ".sqlite", ".sqlite3"):
            src = sqlite3.connect(f"file:{rec.path}?mode=ro", uri=True)
            dst = sqlite3.connect(a.file)
            with dst:
                src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")
            src.close()
            dst.close()
        elif ext == ".csv":
            # a row per sample with the cell it ends the interval of (the cell running, or the last one that
            # ran in it)
            tree = rec.tree.copy()
            tree["cell"] = None
            prev = None
            spans = self._cell_spans(rec, 0.0)
            for i, t in enumerate(tree["unix_s"]):
                lo = prev if prev is not None else t - 1e-9
                inside = [n for n, b, e in spans if b <= t and e > lo]
                tree.at[i, "cell"] = inside[-1] if inside else None
                prev = t
            tree.to_csv(a.file, index=False)
        elif ext == ".json":
            with open(a.file, "w") as f:
                json.dump(rec.summary, f, indent=2)
        else:
            raise UsageError("%jobscope export: FILE must end in .db, .csv or .json")
        print(f"[jobscope] exported {a.file}")

    def _cmd_load(self, argv):
        p = _parser("load")
        p.add_argument("file")
        a = p.parse_args(argv)
        if self.tracker:
            raise UsageError("%jobscope load: stop monitoring first")
        rec = Recording(a.file)  # validates it
        self.recording_path = a.file
        self.cells = {}
        print(f"[jobscope] loaded {a.file}: {rec.summary.get('mode')} run of "
              f"{rec.summary.get('wall_time_s', 0):.2f} s, {len(rec.cells)} cells")

    def cleanup(self):
        if self.tracker:
            try:
                self.tracker.stop()
            except Exception:
                pass
            self.tracker = None
        if self.tmpdir and self.recording_path and not self.recording_path.startswith(self.tmpdir):
            shutil.rmtree(self.tmpdir, ignore_errors=True)


_magics = None


def load_ipython_extension(ip):
    """%load_ext jobscope: %jobscope, and JUmPER's magics (jobscope.jumper)."""
    global _magics
    from . import jumper

    _magics = JobscopeMagics(ip)
    ip.register_magics(_magics)
    jumper.load_ipython_extension(ip)


def unload_ipython_extension(ip):
    global _magics
    from . import jumper

    jumper.unload_ipython_extension(ip)
    if _magics is not None:
        _magics.cleanup()
        _magics = None
