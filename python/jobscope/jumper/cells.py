# SPDX-License-Identifier: MIT
"""JUmPER's cell history and script writer (jumper_extension.adapters.cell_history, .script_writer).

CellHistory keeps one row per executed cell in JUmPER's columns: cell_index (from 0), raw_cell, start_time,
end_time (time.perf_counter()), duration, wallclock_start_time, wallclock_end_time, cell_magics. The cell
range syntax of --cell is JUmPER's: "5", "2:8", ":5", "3:" (inclusive; negative indices count from the end).

NotebookScriptWriter: %start_write_script [FILE] records the cells that follow (their code is not run while
recording) until %end_write_script, which writes a Python script that replays them through the magics'
adapter (jobscope.jumper.magics.build_magic_adapter), as JUmPER's does.
"""
import json
import os
import time
from datetime import datetime

from .monitor import load_frame

COLUMNS = ["cell_index", "raw_cell", "start_time", "end_time", "duration", "wallclock_start_time",
           "wallclock_end_time", "cell_magics"]


class CellHistory:
    def __init__(self):
        import pandas as pd

        self.data = pd.DataFrame(columns=COLUMNS)
        self.current_cell = None

    def start_cell(self, raw_cell, cell_magics):
        self.current_cell = {"cell_index": len(self.data), "raw_cell": raw_cell, "start_time": time.perf_counter(),
                             "end_time": None, "duration": None, "wallclock_start_time": time.time(),
                             "wallclock_end_time": None, "cell_magics": list(cell_magics)}

    def end_cell(self):
        import pandas as pd

        c = self.current_cell
        if not c:
            return None
        c["end_time"] = time.perf_counter()
        c["duration"] = c["end_time"] - c["start_time"]
        c["wallclock_end_time"] = time.time()
        row = pd.DataFrame([c], columns=COLUMNS)
        self.data = row if self.data.empty else pd.concat([self.data, row], ignore_index=True)
        self.current_cell = None
        return c

    def view(self, start=None, end=None):
        if start is None and end is None:
            return self.data
        return self.data.iloc[start:end]

    def __len__(self):
        return len(self.data)

    def export(self, filename="cell_history.json"):
        if self.data.empty:
            print("[JUmPER]: No cell history available")
            return None
        ext = os.path.splitext(filename)[1].lower().lstrip(".")
        if not ext:
            ext, filename = "csv", filename + ".csv"
        if ext == "json":
            with open(filename, "w") as f:
                json.dump(self.data.to_dict("records"), f, indent=2, default=str)
        elif ext == "csv":
            self.data.to_csv(filename, index=False)
        else:
            print(f"[JUmPER]: Unsupported format: {ext}. Supported formats: json, csv")
            return None
        print(f"[JUmPER]: Exported to {filename}")
        return filename

    def load(self, filename):
        return load_frame(filename, COLUMNS[:-1], "cell history")

    def show(self):
        """The history as a table (JUmPER shows an itables widget; this is an HTML table)."""
        if self.data.empty:
            print("[JUmPER]: No cell history available")
            return
        from IPython.display import HTML, display

        t = self.data.copy()
        t["duration"] = t["duration"].astype(float).map(lambda d: f"{d:.2f}")
        t["start"] = t["wallclock_start_time"].astype(float).map(lambda s: time.strftime("%H:%M:%S", time.localtime(s)))
        display(HTML(t[["cell_index", "duration", "start", "raw_cell"]].to_html(index=False)))


def parse_cell_range(cell_str, n):
    """(start, end) inclusive for JUmPER's "5", "2:8", ":5", "3:" (negative counts from the end), or None."""
    if not cell_str:
        return None
    try:
        last = n - 1
        if ":" in cell_str:
            a, b = cell_str.split(":", 1)
            start = 0 if not a else int(a)
            end = last if not b else int(b)
        else:
            start = end = int(cell_str)
        start, end = (start + n if start < 0 else start), (end + n if end < 0 else end)
        if 0 <= start <= end <= last:
            return start, end
    except ValueError:
        pass
    return None


class NotebookScriptWriter:
    CONTROL = {"start_write_script", "end_write_script"}

    def __init__(self, cells):
        self.cells = cells
        self.output_path = None
        self.recording = False
        self.start_index = None
        self.started = None
        self.restore = ""

    def is_recording_active(self):
        return self.recording

    def is_control_cell(self, cell_magics):
        return any(str(m).lstrip("%").split(maxsplit=1)[0] in self.CONTROL for m in (cell_magics or []) if str(m))

    def start(self, output_path, restore_line):
        self.output_path = output_path or f"notebook_script_{datetime.now():%Y%m%d_%H%M%S}.py"
        self.recording = True
        self.started = datetime.now()
        self.start_index = len(self.cells) + 1  # the cell running the start magic is not recorded
        self.restore = restore_line

    def stop(self):
        if not self.recording:
            print("[JUmPER]: Recording was not started")
            return None
        self.recording = False
        rows = [r for _, r in self.cells.data.iterrows()
                if int(r["cell_index"]) >= self.start_index and not self.is_control_cell(r["cell_magics"])]
        if not rows:
            print("[JUmPER]: No recorded cells to save")
            return None
        with open(self.output_path, "w", encoding="utf-8") as f:
            f.write("#!/usr/bin/env python3\n")
            f.write(f'"""Recorded from a notebook by jobscope\'s JUmPER magics, {datetime.now():%Y-%m-%d %H:%M:%S}; '
                    f'{len(rows)} cells."""\n')
            f.write("from jobscope.jumper.magics import build_magic_adapter\n")
            f.write("magic_adapter = build_magic_adapter()\n")
            if self.restore:
                f.write(self.restore + "\n")
            for r in rows:
                raw = r["raw_cell"]
                pure = all(ln.lstrip().startswith(("%", "#")) for ln in raw.splitlines() if ln.strip())
                f.write(f"\n# Cell {int(r['cell_index'])}\nraw_cell = {raw!r}\n")
                f.write(f"magic_adapter.on_pre_run_cell(raw_cell, {list(r['cell_magics'] or [])!r}, {pure!r})\n")
                for ln in raw.splitlines():
                    s = ln.lstrip()
                    if s.startswith("%"):
                        name, _, args = s[1:].partition(" ")
                        f.write(f"{ln[:len(ln) - len(s)]}magic_adapter.{name}({args.strip()!r})\n")
                    else:
                        f.write(ln + "\n")
                f.write("magic_adapter.on_post_run_cell(None)\n")
            base = os.path.splitext(self.output_path)[0]
            f.write(f"\nmagic_adapter.perfmonitor_export_perfdata('--file {base}_perfdata.csv')\n")
            f.write(f"magic_adapter.perfmonitor_export_cell_history('--file {base}_cell_history.csv')\n")
            f.write("magic_adapter.close()\n")
        print(f"[JUmPER]: Recorded {len(rows)} cells to file '{self.output_path}'")
        return self.output_path
