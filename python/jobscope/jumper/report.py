# SPDX-License-Identifier: MIT
"""JUmPER's performance report and its analyzer, and beside them what jobscope knows.

The analyzer is JUmPER's (jumper_extension.adapters.analyzer): the mean of cpu_util_avg over the rows of the
cells (÷ 100), the mean memory over the level's memory limit, the GPU means over 100 % and the GPU memory, each
a ratio clipped to [0, 1]; every ratio at or above its threshold (memory_ratio 0.8, cpu_ratio 0.7,
gpu_util_ratio 0.8, gpu_memory_ratio 0.8) gives a tag (CPU-BOUND, MEMORY-BOUND, GPU-UTIL-BOUND,
GPU-MEMORY-BOUND), ranked by ratio; GPU-ALLOCATED-BUT-NOT-USED comes first when the GPU held more than
gpu_alloc_min_mem_gb while its utilisation stayed at or below gpu_util_idle_threshold for at least
gpu_alloc_min_fraction of the rows; none of them: NORMAL (no tag shown).

jobscope's lines follow JUmPER's table: the cells' CPU time from kernel accounting (the level's cumulative CPU
at the samples taken when the first cell began and the last one ended, so short cells and children that ended
between samples are counted), the mean cores over the cells' wall time and JUmPER's CPU figure recomputed from
it, the peak memory (PSS; RSS where PSS was not read), the storage I/O, and jobscope's own verdict with the same
thresholds applied to those figures.
"""
import math

DEFAULT_THRESHOLDS = {"memory_ratio": 0.8, "cpu_ratio": 0.7, "gpu_util_ratio": 0.8, "gpu_memory_ratio": 0.8,
                      "gpu_alloc_min_mem_gb": 0.1, "gpu_util_idle_threshold": 0.05, "gpu_alloc_min_fraction": 0.5}
TAGS = {"cpu": "CPU-BOUND", "memory": "MEMORY-BOUND", "gpu_util": "GPU-UTIL-BOUND", "gpu_memory": "GPU-MEMORY-BOUND"}


def _ratio(v, mx):
    try:
        if mx is None or mx <= 0 or v is None or math.isnan(v):
            return 0.0
        return min(1.0, max(0.0, v / mx))
    except (TypeError, ZeroDivisionError):
        return 0.0


class PerformanceAnalyzer:
    """JUmPER's analyzer: tags with scores for a cell range's rows."""

    def __init__(self, thresholds=None):
        self.thresholds = {**DEFAULT_THRESHOLDS, **(thresholds or {})}

    def tags_from_ratios(self, ratios):
        tags = [(TAGS[k], r) for k, r in sorted(ratios.items(), key=lambda kv: kv[1], reverse=True)
                if r >= self.thresholds.get(f"{k}_ratio", 0.0) and k in TAGS]
        return tags

    def analyze(self, perf, memory_limit, gpu_memory_limit=None):
        """[(TAG, score)], most important first; [("NORMAL", 0.0)] when nothing stands out."""
        mean = lambda c: float(perf[c].mean()) if c in perf.columns and len(perf) else 0.0  # noqa: E731
        ratios = {"memory": _ratio(mean("memory"), memory_limit), "cpu": _ratio(mean("cpu_util_avg"), 100.0),
                  "gpu_util": _ratio(mean("gpu_util_avg"), 100.0),
                  "gpu_memory": _ratio(mean("gpu_mem_avg"), gpu_memory_limit) if gpu_memory_limit else 0.0}
        tags = self.tags_from_ratios(ratios)
        idle = self._gpu_idle(perf, gpu_memory_limit)
        if idle is not None:
            tags = [("GPU-ALLOCATED-BUT-NOT-USED", idle)] + tags
        return tags or [("NORMAL", 0.0)]

    def _gpu_idle(self, perf, gpu_memory_limit):
        if gpu_memory_limit is None or perf.empty or not {"gpu_mem_avg", "gpu_util_avg"} <= set(perf.columns):
            return None
        alloc = perf["gpu_mem_avg"] > max(float(self.thresholds["gpu_alloc_min_mem_gb"]), 0.0)
        if not alloc.sum():
            return None
        idle = perf["gpu_util_avg"] <= float(self.thresholds["gpu_util_idle_threshold"]) * 100.0
        frac = float((alloc & idle).mean())
        return frac if frac >= float(self.thresholds["gpu_alloc_min_fraction"]) else None


def select_rows(perf, cells):
    """JUmPER's rows of a cell range: those whose time lies between the first cell's start and the last's end."""
    if cells is None or cells.empty or perf is None or perf.empty:
        return perf.iloc[0:0] if perf is not None else perf
    t0, t1 = float(cells.iloc[0]["start_time"]), float(cells.iloc[-1]["end_time"])
    return perf[(perf["time"] >= t0) & (perf["time"] <= t1)]


def _cum_at(perf, col, t):
    """the cumulative column's value at the last row at or before t (NaN before the first)"""
    rows = perf[perf["time"] <= t]
    return float(rows[col].iloc[-1]) if len(rows) and col in rows.columns else float("nan")


def exact_figures(perf, cells, num_cpus, memory_limit):
    """jobscope's figures for the cells: CPU seconds, mean cores, mean CPU %, peak memory GiB, I/O bytes."""
    if cells is None or cells.empty or perf is None or perf.empty or "js_cpu_s" not in perf.columns:
        return None
    t0, t1 = float(cells.iloc[0]["start_time"]), float(cells.iloc[-1]["end_time"])
    wall = t1 - t0
    c0 = _cum_at(perf, "js_cpu_s", t0)
    c1 = _cum_at(perf, "js_cpu_s", t1)
    if math.isnan(c0):
        c0 = 0.0
    cpu = c1 - c0
    inside = select_rows(perf, cells)
    rd = _cum_at(perf, "js_read_bytes", t1) - _cum_at(perf, "js_read_bytes", t0)
    wr = _cum_at(perf, "js_write_bytes", t1) - _cum_at(perf, "js_write_bytes", t0)
    cores = cpu / wall if wall > 0 else float("nan")
    return {"cpu_s": cpu, "wall_s": wall, "mean_cores": cores,
            "cpu_util_pct": cores * 100.0 / num_cpus if num_cpus else float("nan"),
            "peak_memory_gb": float(inside["memory"].max()) if len(inside) else float("nan"),
            "read_bytes": rd, "write_bytes": wr, "memory_limit": memory_limit}


def build(monitor, cells, cell_range, level, analyzer):
    """The report's content for a cell range (None: the last cell at least one interval long), or None with
    JUmPER's warning printed."""
    if not len(cells.data):
        print("[JUmPER]: No performance data available or recorded cells are too short")
        return None
    if cell_range is None:
        ok = cells.data[cells.data["duration"].astype(float) >= float(monitor.interval or 0)]
        if ok.empty:
            print("[JUmPER]: No performance data available or recorded cells are too short")
            return None
        i = int(ok.iloc[-1]["cell_index"])
        cell_range = (i, i)
    sel = cells.view(cell_range[0], cell_range[1] + 1)
    perf_all = monitor.data.view(level=level)
    perf = select_rows(perf_all, sel)
    if perf is None or perf.empty:
        print("[JUmPER]: No performance data available or recorded cells are too short")
        return None
    limit = (monitor.memory_limits or {}).get(level)
    gpu_limit = monitor.gpu_memory if monitor.num_gpus else None
    tags = analyzer.analyze(perf, limit, gpu_limit)
    ex = exact_figures(perf_all, sel, monitor.num_cpus if level != "system" else monitor.num_system_cpus, limit)
    js_tags = None
    if ex:
        js_tags = analyzer.tags_from_ratios({"cpu": _ratio(ex["cpu_util_pct"], 100.0),
                                             "memory": _ratio(ex["peak_memory_gb"], limit)}) or [("NORMAL", 0.0)]
    return {"cell_range": cell_range, "cells": sel, "perf": perf, "tags": tags, "duration": float(sel["duration"].sum()),
            "level": level, "limit": limit, "exact": ex, "js_tags": js_tags}


def _metrics(monitor, level):
    n = monitor.num_system_cpus if level == "system" else monitor.num_cpus
    lim = (monitor.memory_limits or {}).get(level)
    return [(f"CPU Util (Across {n} CPUs)", "cpu_util_avg", "-"),
            ("Memory (GB)", "memory", f"{lim:.2f}" if lim is not None else "-"),
            (f"GPU Util (Across {monitor.num_gpus} GPUs)", "gpu_util_avg", "-"),
            ("GPU Memory (GB)", "gpu_mem_avg", f"{monitor.gpu_memory:.2f}")]


def _tag_names(tags):
    return [] if len(tags) == 1 and tags[0][0] == "NORMAL" else [t for t, _ in tags]


def text(monitor, r):
    """JUmPER's text report, then jobscope's lines."""
    n = len(r["cells"])
    lines = ["-" * 40, "JUmPER Performance Report", "-" * 40,
             f"Duration: {r['duration']:.2f}s ({n} cell{'s' if n != 1 else ''})", "-" * 40]
    names = _tag_names(r["tags"])
    if names:
        lines += ["Signature(s):", " | ".join(names), "-" * 40]
    lines.append(f"{'Metric':<25} {'AVG':<8} {'MIN':<8} {'MAX':<8} {'TOTAL':<8}")
    lines.append("-" * 65)
    perf = r["perf"]
    for name, col, total in _metrics(monitor, r["level"]):
        if col in perf.columns and perf[col].notna().any():
            lines.append(f"{name:<25} {perf[col].mean():<8.2f} {perf[col].min():<8.2f} {perf[col].max():<8.2f} "
                         f"{total:<8}")
    ex = r["exact"]
    if ex:
        lines.append("-" * 65)
        lines.append(f"jobscope ({r['level']} level, kernel accounting over the cells' {ex['wall_s']:.2f} s):")
        lines.append(f"  CPU time {ex['cpu_s']:.2f} s = {ex['mean_cores']:.2f} cores = {ex['cpu_util_pct']:.1f} % "
                     f"of {monitor.num_system_cpus if r['level'] == 'system' else monitor.num_cpus} CPUs "
                     f"(JUmPER's mean of rows: {perf['cpu_util_avg'].mean():.1f} %)")
        lines.append(f"  peak memory {ex['peak_memory_gb']:.2f} GB "
                     f"({'host: total - available' if r['level'] == 'system' else 'PSS: shared pages counted once'})")
        if not math.isnan(ex["read_bytes"]):
            lines.append(f"  storage read {ex['read_bytes'] / 1e6:.1f} MB, written {ex['write_bytes'] / 1e6:.1f} MB")
        lines.append(f"  verdict: {' | '.join(_tag_names(r['js_tags'])) or 'NORMAL'} "
                     f"(JUmPER's thresholds on jobscope's figures)")
    return "\n".join(lines)


def html(monitor, r):
    """The same as an HTML table (JUmPER renders a Jinja template; the content is the same)."""
    import html as h

    rows = []
    perf = r["perf"]
    for name, col, total in _metrics(monitor, r["level"]):
        if col in perf.columns and perf[col].notna().any():
            rows.append(f"<tr><td>{h.escape(name)}</td><td>{perf[col].mean():.2f}</td><td>{perf[col].min():.2f}</td>"
                        f"<td>{perf[col].max():.2f}</td><td>{h.escape(total)}</td></tr>")
    tags = "".join(f'<span class="jumper-tag {t.lower()}">{t}</span> ' for t in _tag_names(r["tags"]))
    ex = r["exact"]
    js = ""
    if ex:
        js = (f"<p><b>jobscope</b> ({r['level']} level, kernel accounting): CPU time {ex['cpu_s']:.2f} s = "
              f"{ex['mean_cores']:.2f} cores = {ex['cpu_util_pct']:.1f} %; peak memory {ex['peak_memory_gb']:.2f} GB; "
              f"verdict: {' | '.join(_tag_names(r['js_tags'])) or 'NORMAL'}</p>")
    return (f"<div class='jumper-report'><h4>JUmPER Performance Report</h4><p>Duration: {r['duration']:.2f}s "
            f"({len(r['cells'])} cells)</p><p>{tags}</p><table><tr><th>Metric</th><th>AVG</th><th>MIN</th>"
            f"<th>MAX</th><th>TOTAL</th></tr>{''.join(rows)}</table>{js}</div>")
