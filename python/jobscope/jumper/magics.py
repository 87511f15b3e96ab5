# SPDX-License-Identifier: MIT
"""JUmPER's magics on jobscope (`%load_ext jobscope` registers them beside %jobscope).

    %perfmonitor_start [INTERVAL]          %perfmonitor_stop          %perfmonitor_resources
    %perfmonitor_help                      %perfmonitor_fast_setup
    %perfmonitor_enable_perfreports [--level L] [--interval S] [--text]      %perfmonitor_disable_perfreports
    %perfmonitor_perfreport [--cell RANGE] [--level L] [--text]
    %perfmonitor_plot [--metrics a,b] [--cell RANGE] [--level L] [--save-jpeg F] [--pickle F]
                      [--live [INTERVAL [WINDOW]]]
    %perfmonitor_export_perfdata [--file F] [--name VAR] [--level L]
    %perfmonitor_export_cell_history [--file F] [--name VAR]
    %perfmonitor_load_perfdata FILE        %perfmonitor_load_cell_history FILE
    %export_session [DIR|FILE.zip]         %import_session DIR|FILE.zip
    %show_cell_history (also %cell_history)
    %start_write_script [FILE]             %end_write_script

Arguments and behaviour are JUmPER 0.3.6's (jumper_extension/ipython/magics.py, core/parsers.py,
core/service.py); levels: process, user, system, slurm (inside a SLURM job); RANGE: 5, 2:8, :5, 3:, -3:-1.
What differs, because jobscope knows more or JUmPER is wrong, is in docs/JUPYTER.md; in short: every cell gets
samples at its start and end (no "No performance data" for short cells; a report after each cell is about that
cell), reports and plots also work on a stopped or imported session, and each report has jobscope's exact
figures under JUmPER's table. The monitor is PerformanceMonitor (monitor.py): one jobscope monitor with the
user and job levels; every cell is also a phase "jumper cell N" in its recording.
"""
import argparse
import shlex
import tempfile

from .. import marks
from . import plot as plots
from . import report as reports
from .cells import CellHistory, NotebookScriptWriter, parse_cell_range
from .monitor import PerformanceMonitor
from .session import SessionError, export_session, import_session

try:
    from IPython.core.magic import Magics, line_magic, magics_class
except ImportError:  # pragma: no cover - only used inside IPython
    Magics = object

    def magics_class(c):
        return c

    def line_magic(f):
        return f

PREFIX = "[JUmPER]:"
HELP = [
    "perfmonitor_fast_setup -- quick setup: enable ipympl plots, start monitor, enable reports",
    "perfmonitor_help -- show this comprehensive help",
    "perfmonitor_resources -- show available hardware resources",
    "show_cell_history -- show interactive table of cell execution history (also: cell_history)",
    "perfmonitor_start [interval] -- start monitoring (default: 1 second)",
    "perfmonitor_stop -- stop monitoring",
    "perfmonitor_perfreport [--cell RANGE] [--level LEVEL] [--text] -- show report",
    "perfmonitor_plot [--metrics LIST] [--cell RANGE] [--level LEVEL] [--save-jpeg FILE] [--pickle FILE] "
    "[--live [INTERVAL [WINDOW]]] -- plot",
    "perfmonitor_enable_perfreports [--level LEVEL] [--interval INTERVAL] [--text] -- enable auto-reports",
    "perfmonitor_disable_perfreports -- disable auto-reports",
    "perfmonitor_export_perfdata [--file FILE] [--level LEVEL] [--name NAME] -- export CSV/JSON; without --file "
    "pushes DataFrame (default 'perfdata_df')",
    "perfmonitor_export_cell_history [--file FILE] [--name NAME] -- export history to JSON/CSV; without --file "
    "pushes DataFrame (default 'cell_history_df')",
    "perfmonitor_load_perfdata FILE -- load performance data (as 'loaded_perfdata_df')",
    "perfmonitor_load_cell_history FILE -- load cell history (as 'loaded_cell_history_df')",
    "export_session [target|target.zip] -- export full session (JUmPER's layout + the jobscope recording)",
    "import_session <dir-or-zip> -- import full session for offline analysis",
    "start_write_script [output_path] -- record subsequent cells to a Python script",
    "end_write_script -- stop recording and save the script",
]


class ArgError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ArgError(message)

    def exit(self, status=0, message=None):
        raise ArgError(message or "")


def _parser(*specs):
    p = _Parser(add_help=False)
    for args, kw in specs:
        p.add_argument(*args, **kw)
    return p


CELL = (("--cell",), {"type": str})
LEVEL = (("--level",), {"default": None})
TEXT = (("--text",), {"action": "store_true"})
PARSERS = {
    "perfreport": _parser(CELL, LEVEL, TEXT),
    "enable": _parser(CELL, LEVEL, TEXT, (("--interval",), {"type": float, "default": 1.0})),
    "plot": _parser((("--metrics",), {"type": str}), CELL, LEVEL, (("--save-jpeg",), {"dest": "save_jpeg"}),
                    (("--pickle",), {"dest": "pickle_file"}),
                    (("--backend",), {"choices": ["matplotlib", "plotly"]}),
                    (("--live",), {"nargs": "*", "type": float, "metavar": "INTERVAL_WINDOW"})),
    "export_perfdata": _parser((("--file",), {}), (("--name",), {}), LEVEL),
    "export_cells": _parser((("--file",), {}), (("--name",), {})),
    "load": _parser((("file",), {})),
    "export_session": _parser((("path",), {"nargs": "?", "default": None})),
    "import_session": _parser((("path",), {})),
}


def called_line_magics(raw_cell, known):
    """The line magics a cell calls ("perfmonitor_start 1.0", ...), as JUmPER lists them."""
    out = []
    for line in raw_cell.splitlines():
        s = line.strip()
        if s.startswith("%") and s[1:].split(None, 1)[0] if len(s) > 1 else False:
            if s[1:].split(None, 1)[0] in known:
                out.append(s[1:])
    return out


def is_pure_magic_cell(raw_cell, known):
    """Only known line magics, comments and blank lines: no report after it (JUmPER's rule)."""
    for line in raw_cell.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if not (s.startswith("%") and len(s) > 1 and s[1:].split(None, 1)[0] in known):
            return False
    return True


class JumperAdapter:
    """The magics as methods taking JUmPER's argument strings (usable without IPython: generated scripts)."""

    def __init__(self, push=None, known_magics=None, display_html=True):
        self.push = push or (lambda d: None)
        self.known = set(known_magics or [])
        self.display_html = display_html
        self.monitor = PerformanceMonitor()
        self.cells = CellHistory()
        self.analyzer = reports.PerformanceAnalyzer()
        self.writer = NotebookScriptWriter(self.cells)
        self.reports_on, self.report_level, self.report_text = False, "process", False
        self.user_interval = None
        self.skip_report = False
        self.live = []
        self._cell_mark = None
        self._tmp = tempfile.mkdtemp(prefix="jobscope-jumper-sessions-")

    # ---- cells

    def on_pre_run_cell(self, raw_cell, cell_magics=None, should_skip_report=None):
        if cell_magics is None:
            cell_magics = called_line_magics(raw_cell, self.known)
        if should_skip_report is None:
            should_skip_report = is_pure_magic_cell(raw_cell, self.known)
        self.monitor.sample()  # the sample that closes the time before this cell
        self.cells.start_cell(raw_cell, cell_magics)
        self.skip_report = should_skip_report
        if self.monitor.running:
            self._cell_mark = f"jumper cell {len(self.cells)}"
            marks.begin(self._cell_mark)

    def on_post_run_cell(self, result=None):
        if self._cell_mark:
            marks.end(self._cell_mark)
            self._cell_mark = None
        self.monitor.sample()  # the cell's last interval ends here: its figures are complete
        self.cells.end_cell()
        if not self.skip_report and self.monitor.running and self.reports_on:
            last = len(self.cells) - 1
            self._report((last, last), self.report_level, self.report_text)

    # ---- helpers

    def _args(self, name, line):
        try:
            argv = shlex.split(line or "")
            # a negative range ("--cell -3:-1") is the option's value, not an option of its own
            argv = [f"--cell={argv[i + 1]}" if a == "--cell" and i + 1 < len(argv) and argv[i + 1][:1] == "-"
                    else a for i, a in enumerate(argv)
                    if not (i and argv[i - 1] == "--cell" and a[:1] == "-")]
            return PARSERS[name].parse_args(argv)
        except (ArgError, ValueError) as e:
            print(f"{PREFIX} {str(e).strip() or 'invalid arguments'}")
            return None

    def _have_data(self):
        if self.monitor.running or self.monitor.is_imported or getattr(self.monitor, "recording", None):
            return True
        print(f"{PREFIX} No active performance monitoring session")
        return False

    def _level(self, level):
        level = level or self.report_level or "process"
        if level not in self.monitor.levels:
            print(f"{PREFIX} Invalid level: {level}. Available levels: {self.monitor.levels}")
            return None
        return level

    def _range(self, text):
        r = parse_cell_range(text, len(self.cells))
        if r is None:
            print(f"{PREFIX} Invalid cell range format: {text}")
        return r

    def _report(self, cell_range, level, text):
        r = reports.build(self.monitor, self.cells, cell_range, level, self.analyzer)
        if r is None:
            return
        if text or not self.display_html:
            print(reports.text(self.monitor, r))
        else:
            from IPython.display import HTML, display

            display(HTML(reports.html(self.monitor, r)))

    def _default_range(self):
        """the last cell that is not only magics (JUmPER: the last cell at least one interval long)"""
        d = self.cells.data
        for i in range(len(d) - 1, -1, -1):
            if not is_pure_magic_cell(str(d.iloc[i]["raw_cell"]), self.known | {"jobscope"}):
                return (int(d.iloc[i]["cell_index"]),) * 2
        return None

    # ---- the magics

    def perfmonitor_start(self, line=""):
        interval = None
        if line and line.strip():
            try:
                interval = float(line)
            except ValueError:
                print(f"{PREFIX} Invalid interval value: {line}")
                return
        self._start(interval)

    def _start(self, interval):
        if self.monitor.is_imported:
            self.monitor = PerformanceMonitor()
        if self.monitor.running:
            print(f"{PREFIX} Performance monitoring already running")
            return
        if interval is not None:
            self.user_interval = interval
        if not (0.01 <= (interval or 1.0) <= 3600):
            print(f"{PREFIX} Invalid interval value: {interval}")
            return
        try:
            self.monitor.start(interval or 1.0)
        except (RuntimeError, OSError) as e:
            print(f"{PREFIX} cannot start monitoring: {e}")

    def perfmonitor_stop(self, line=""):
        for lp in self.live:
            lp.stop()
        self.live = []
        if not self.monitor.running:
            print(f"{PREFIX} No active performance monitoring session")
            return
        self.monitor.stop()

    def perfmonitor_resources(self, line=""):
        m = self.monitor
        if not m.running and not m.is_imported:
            print(f"{PREFIX} No active performance monitoring session")
            return
        if m.is_imported:
            print(f"{PREFIX} Showing resources from imported session: {m.session_source}")
        print("[JUmPER]:")
        print(f"  CPUs: {m.num_cpus}\n    CPU affinity: {m.cpu_handles}")
        print(f"  Memory: {m.memory_limits.get('system')} GB\n  GPUs: {m.num_gpus}")
        if m.num_gpus:
            print(f"    {m.gpu_name}, {m.gpu_memory} GB")
        limits = ", ".join(f"{k} {v} GB" for k, v in sorted(m.memory_limits.items()))
        print(f"[jobscope]: memory limit per level: {limits}; system CPUs: {m.num_system_cpus}")

    def perfmonitor_help(self, line=""):
        print("Available commands:")
        for c in HELP:
            print(f"  {c}")
        print("\nMonitoring Levels:")
        print("  process -- current Python process only (default, most focused)")
        print("  user    -- all processes belonging to current user")
        print("  system  -- system-wide metrics across all processes")
        if "slurm" in self.monitor.levels:
            print("  slurm   -- processes within current SLURM job (HPC environments)")
        print("\nCell Range Formats:")
        print("  5       -- single cell (cell #5)\n  2:8     -- range of cells (cells #2 through #8)")
        print("  :5      -- from start to cell #5\n  3:      -- from cell #3 to end")
        print("\nMetric Categories:")
        print("  cpu, gpu, mem, io (default: all available)")
        print("  cpu_all, gpu_all for detailed per-core/per-GPU metrics")

    def perfmonitor_fast_setup(self, line=""):
        self._start(1.0)
        self.perfmonitor_enable_perfreports("--level process --interval 1.0")
        print(f"{PREFIX} Fast setup complete! Ready for interactive analysis.")

    def perfmonitor_enable_perfreports(self, line=""):
        a = self._args("enable", line)
        if a is None:
            return
        level = a.level or "process"
        if level not in self.monitor.levels and not self.monitor.is_imported:
            print(f"{PREFIX} Invalid level: {level}. Available levels: {self.monitor.levels}")
            return
        self.reports_on, self.report_level, self.report_text = True, level, a.text
        if not self.monitor.running:
            self._start(a.interval)
        print(f"{PREFIX} Performance reports enabled for each cell (level: {level}, interval: {a.interval}, "
              f"format: {'text' if a.text else 'html'})")

    def perfmonitor_disable_perfreports(self, line=""):
        self.reports_on = False
        print(f"{PREFIX} Performance reports for each cell disabled")

    def perfmonitor_perfreport(self, line=""):
        a = self._args("perfreport", line)
        if a is None or not self._have_data():
            return
        level = self._level(a.level or "process")
        if level is None:
            return
        rng = self._range(a.cell) if a.cell else self._default_range()
        if a.cell and rng is None:
            return
        self._report(rng, level, a.text)

    def perfmonitor_plot(self, line=""):
        a = self._args("plot", line)
        if a is None or not self._have_data():
            return
        metrics = [m.strip() for m in a.metrics.split(",") if m.strip()] if a.metrics else None
        level = self._level(a.level)
        if level is None:
            return
        if a.live is not None:
            if not self.monitor.running:
                print(f"{PREFIX} Live plotting needs a running monitor (not an imported or stopped session)")
                return
            iv = a.live[0] if len(a.live) >= 1 else 2.0
            win = a.live[1] if len(a.live) >= 2 else 120.0
            self.live.append(plots.LivePlot(self.monitor, level, metrics, iv, win).start())
            return
        if not len(self.cells):
            print(f"{PREFIX} No cell history available")
            return
        if a.cell:
            rng = self._range(a.cell)
            if rng is None:
                return
        else:
            rng = (0, len(self.cells) - 1)
        if self.monitor.is_imported:
            print(f"{PREFIX} Using imported session data for plotting: {self.monitor.session_source}")
        plots.plot(self.monitor, self.cells, rng, level, metrics, a.save_jpeg, a.pickle_file)

    def perfmonitor_export_perfdata(self, line=""):
        a = self._args("export_perfdata", line)
        if a is None or not self._have_data():
            return {}
        level = self._level(a.level or "process")
        if level is None:
            return {}
        if a.file:
            self.monitor.data.export(a.file, level=level, cell_history=self.cells)
            return {}
        name = a.name or "perfdata_df"
        df = self.monitor.data.view(level=level, cell_history=self.cells)
        print(f"{PREFIX} Performance data DataFrame available as '{name}'")
        self.push({name: df})
        return {name: df}

    def perfmonitor_export_cell_history(self, line=""):
        a = self._args("export_cells", line)
        if a is None:
            return {}
        if a.file:
            self.cells.export(a.file)
            return {}
        name = a.name or "cell_history_df"
        print(f"{PREFIX} Cell history data available as '{name}'")
        self.push({name: self.cells.view()})
        return {name: self.cells.view()}

    def perfmonitor_load_perfdata(self, line=""):
        a = self._args("load", line)
        if a is None:
            return {}
        df = self.monitor.data.load(a.file)
        if df is not None:
            print(f"{PREFIX} Performance data DataFrame available as 'loaded_perfdata_df'")
        self.push({"loaded_perfdata_df": df})
        return {"loaded_perfdata_df": df}

    def perfmonitor_load_cell_history(self, line=""):
        a = self._args("load", line)
        if a is None:
            return {}
        df = self.cells.load(a.file)
        if df is not None:
            print(f"{PREFIX} Cell history data available as 'loaded_cell_history_df'")
        self.push({"loaded_cell_history_df": df})
        return {"loaded_cell_history_df": df}

    def export_session(self, line=""):
        a = self._args("export_session", line)
        if a is None:
            return None
        if not self._have_data():
            return None
        try:
            return export_session(a.path, self.monitor, self.cells, self.analyzer, self.report_level)
        except OSError as e:
            print(f"{PREFIX} cannot export the session: {e}")
            return None

    def import_session(self, line=""):
        a = self._args("import_session", line)
        if a is None:
            return
        try:
            mon, cells, manifest = import_session(a.path, self._tmp)
        except SessionError as e:
            print(f"{PREFIX} cannot import the session: {e}")
            return
        except (OSError, ValueError) as e:
            print(f"{PREFIX} cannot import the session: {a.path}: {e}")
            return
        if self.monitor.running:
            self.perfmonitor_stop()
        self.monitor = mon
        if cells is not None:
            self.cells.data = cells
        self.analyzer = reports.PerformanceAnalyzer((manifest.get("reporter") or {}).get("thresholds"))
        rec = " with its jobscope recording" if mon.recording else ""
        print(f"{PREFIX} Session imported successfully: {a.path}{rec}")

    def show_cell_history(self, line=""):
        self.cells.show()

    cell_history = show_cell_history

    def start_write_script(self, line=""):
        restore = ""
        if self.monitor.running:
            iv = self.user_interval or self.monitor.interval
            if self.reports_on:
                args = f"--level {self.report_level} --interval {iv}" + (" --text" if self.report_text else "")
                restore = f"magic_adapter.perfmonitor_enable_perfreports({args!r})"
            else:
                restore = f"magic_adapter.perfmonitor_start({str(iv)!r})"
        self.writer.start(line.strip() or None, restore)
        print(f"{PREFIX} Started script recording to '{self.writer.output_path}'")

    def end_write_script(self, line=""):
        return self.writer.stop()

    def close(self):
        for lp in self.live:
            lp.stop()
        if self.monitor.running:
            self.monitor.stop()


def build_magic_adapter():
    """An adapter for scripts (what %end_write_script's scripts call): text reports, no display."""
    return JumperAdapter(display_html=False)


MAGICS = ["perfmonitor_start", "perfmonitor_stop", "perfmonitor_resources", "perfmonitor_help",
          "perfmonitor_fast_setup", "perfmonitor_enable_perfreports", "perfmonitor_disable_perfreports",
          "perfmonitor_perfreport", "perfmonitor_plot", "perfmonitor_export_perfdata",
          "perfmonitor_export_cell_history", "perfmonitor_load_perfdata", "perfmonitor_load_cell_history",
          "export_session", "import_session", "show_cell_history", "cell_history", "start_write_script",
          "end_write_script"]


class DropWhileRecording:
    """While a script is recorded, a cell runs as a print (JUmPER: recorded cells are not executed), except
    the cells that start or end the recording."""

    def __init__(self, adapter):
        self.adapter = adapter

    def __call__(self, lines):
        if not self.adapter.writer.is_recording_active():
            return lines
        cell = "".join(lines)
        if self.adapter.writer.is_control_cell(called_line_magics(cell, self.adapter.known)):
            return lines
        return ["print('[JUmPER]: Cell execution skipped during script recording')\n"]


@magics_class
class JumperMagics(Magics):
    """The IPython side: registers every name in MAGICS, and the pre/post-run hooks."""

    def __init__(self, shell):
        super().__init__(shell)
        self.adapter = JumperAdapter(push=shell.push, known_magics=[])
        self.adapter.perfmonitor_fast_setup = self._fast_setup
        self._drop = DropWhileRecording(self.adapter)

    def _fast_setup(self, line=""):
        try:
            self.shell.run_line_magic("matplotlib", "ipympl")
            print("[JUmPER]: Enabled ipympl interactive plots")
        except Exception as e:  # ipympl is optional: JUmPER warns the same way
            print(f"[JUmPER]: Failed to enable ipympl interactive plots: {e}")
        JumperAdapter.perfmonitor_fast_setup(self.adapter, line)

    def pre_run_cell(self, info):
        self.adapter.known = set(self.shell.magics_manager.lsmagic().get("line", []))
        try:
            self.adapter.on_pre_run_cell(info.raw_cell)
        except Exception as e:  # never break the user's cell for monitoring
            print(f"[JUmPER]: {e}")

    def post_run_cell(self, result):
        try:
            self.adapter.on_post_run_cell(result)
        except Exception as e:
            print(f"[JUmPER]: {e}")

    def register(self):
        ip = self.shell
        for name in MAGICS:
            fn = getattr(self.adapter, name)
            ip.register_magic_function(lambda line, _fn=fn: (_fn(line), None)[1], magic_kind="line", magic_name=name)
        ip.events.register("pre_run_cell", self.pre_run_cell)
        ip.events.register("post_run_cell", self.post_run_cell)
        ip.input_transformer_manager.cleanup_transforms.append(self._drop)

    def unregister(self):
        ip = self.shell
        for ev, fn in (("pre_run_cell", self.pre_run_cell), ("post_run_cell", self.post_run_cell)):
            try:
                ip.events.unregister(ev, fn)
            except ValueError:
                pass
        tm = ip.input_transformer_manager.cleanup_transforms
        if self._drop in tm:
            tm.remove(self._drop)
        self.adapter.close()
