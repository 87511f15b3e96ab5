# SPDX-License-Identifier: MIT
"""%perfmonitor_plot on matplotlib: JUmPER's metric keys and subsets, cell ranges, JPEG and pickle, live view.

Metric keys (JUmPER's): cpu_summary (min/avg/max over the CPUs), memory, io_read, io_write (MB/s),
io_read_count, io_write_count (ops/s), gpu_util_summary, gpu_band_summary, gpu_mem_summary; per CPU/GPU
series: cpu (subset cpu_all), gpu_util, gpu_band, gpu_mem (subset gpu_all). Subsets: cpu, mem, io, gpu,
cpu_all, gpu_all (default: cpu, mem, io, and gpu, gpu_all with GPUs). Idle time between cells is cut out, as
JUmPER does by default, and each cell is a shaded band with its number.

The I/O columns are already rates (monitor.py): they are drawn as they are, where JUmPER differences its
cumulative ÷ Δt columns again.
"""
import io
import pickle
import threading
import time

SUBSETS = {
    "cpu_all": {"cpu": ("multi", "cpu_util_", "CPU Utilization (%) - Across Cores", (0, 100))},
    "gpu_all": {"gpu_util": ("multi", "gpu_util_", "GPU Utilization (%) - Across GPUs", (0, 100)),
                "gpu_band": ("multi", "gpu_band_", "GPU Bandwidth Usage (%) - Across GPUs", (0, 100)),
                "gpu_mem": ("multi", "gpu_mem_", "GPU Memory Usage (GB) - Across GPUs", None)},
    "cpu": {"cpu_summary": ("summary", "cpu_util_", "CPU Utilization (%) - {n} CPUs", (0, 100))},
    "gpu": {"gpu_util_summary": ("summary", "gpu_util_", "GPU Utilization (%) - {g} GPUs", (0, 100)),
            "gpu_band_summary": ("summary", "gpu_band_", "GPU Bandwidth Usage (%) - {g} GPUs", (0, 100)),
            "gpu_mem_summary": ("summary", "gpu_mem_", "GPU Memory Usage (GB) - {g} GPUs", None)},
    "mem": {"memory": ("single", "memory", "Memory Usage (GB)", None)},
    "io": {"io_read": ("single", "io_read", "I/O Read (MB/s)", None),
           "io_write": ("single", "io_write", "I/O Write (MB/s)", None),
           "io_read_count": ("single", "io_read_count", "I/O Read Operations (ops/s)", None),
           "io_write_count": ("single", "io_write_count", "I/O Write Operations (ops/s)", None)},
}
DEFAULT = ("cpu", "mem", "io")


def resolve_metrics(metrics, num_gpus):
    """[(metric key, spec)] for JUmPER's --metrics list (keys or subset names), or the defaults."""
    keys, bad = [], []
    for m in metrics or list(DEFAULT) + (["gpu", "gpu_all"] if num_gpus else []):
        if m in SUBSETS:
            keys += list(SUBSETS[m])
        elif any(m in s for s in SUBSETS.values()):
            keys.append(m)
        else:
            bad.append(m)
    for b in bad:
        print(f"[JUmPER]: Unknown metric subset: {b}. Supported subsets: {', '.join(SUBSETS)}")
    keys = list(dict.fromkeys(keys))
    specs = {k: v for s in SUBSETS.values() for k, v in s.items()}
    return [(k, specs[k]) for k in keys if not k.startswith("gpu") or num_gpus]


def compress(perf, cells):
    """Rows inside the cells, on a time axis with the idle time between cells cut out; and the cells' spans."""
    parts, spans, t = [], [], 0.0
    for _, c in cells.iterrows():
        s, e = float(c["start_time"]), float(c["end_time"])
        rows = perf[(perf["time"] >= s) & (perf["time"] <= e)].copy()
        if rows.empty:
            continue
        rows["time"] = t + (rows["time"] - s)
        parts.append(rows)
        spans.append((int(c["cell_index"]), t, t + (e - s)))
        t += e - s
    import pandas as pd

    return (pd.concat(parts) if parts else perf.iloc[0:0]), spans


def figure(perf, spans, keys, monitor, level, figsize=(10, 3)):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(figsize[0], figsize[1] * max(1, len(keys))), constrained_layout=True)
    axes = fig.subplots(max(1, len(keys)), 1, squeeze=False)[:, 0]
    n = monitor.num_system_cpus if level == "system" else monitor.num_cpus
    for ax, (key, (kind, col, title, ylim)) in zip(axes, keys):
        x = perf["time"]
        if kind == "single" and col in perf.columns:
            y = perf[col].astype(float)
            if col in ("io_read", "io_write"):
                y = y / 1e6
            ax.plot(x, y, color="blue", lw=2)
            if col == "memory":
                ylim = (0, (monitor.memory_limits or {}).get(level) or None)
        elif kind == "summary":
            for suffix, style, alpha, label in (("min", ":", 0.35, "Min"), ("avg", "-", 1.0, "Average"),
                                                ("max", "--", 0.35, "Max")):
                if col + suffix in perf.columns:
                    ax.plot(x, perf[col + suffix], color="blue", ls=style, alpha=alpha, lw=2, label=label)
            ax.legend(loc="upper right", fontsize=7)
        elif kind == "multi":
            for c in [c for c in perf.columns if c.startswith(col) and c[len(col):].isdigit()]:
                ax.plot(x, perf[c], lw=1, alpha=0.6, label=c)
        ax.set_title(title.format(n=n, g=monitor.num_gpus), fontsize=9)
        if ylim and ylim[1]:
            ax.set_ylim(*ylim)
        for i, (cell, b, e) in enumerate(spans):
            ax.axvspan(b, e, color=("C1" if i % 2 else "C2"), alpha=0.15)
            ax.text((b + e) / 2, 0.98, f"#{cell}", transform=ax.get_xaxis_transform(), ha="center", va="top",
                    fontsize=7)
        ax.set_xlabel("Time (seconds)", fontsize=8)
    fig.suptitle(f"level: {level}", fontsize=9)
    return fig, axes


def show(fig, display_id=None, update=False):
    from IPython.display import Image, display, update_display

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    img = Image(data=buf.getvalue(), format="png")
    if update:
        update_display(img, display_id=display_id)
    else:
        display(img, display_id=display_id) if display_id else display(img)


def plot(monitor, cells, cell_range, level, metrics, save_jpeg=None, pickle_file=None):
    keys = resolve_metrics(metrics, monitor.num_gpus)
    if not keys:
        print("No valid metrics found to plot")
        return None
    sel = cells.view(cell_range[0], cell_range[1] + 1)
    perf, spans = compress(monitor.data.view(level=level), sel)
    if perf.empty:
        print("[JUmPER]: No performance data available or recorded cells are too short")
        return None
    fig, axes = figure(perf, spans, keys, monitor, level)
    if save_jpeg:
        if not save_jpeg.endswith((".jpg", ".jpeg")):
            save_jpeg += ".jpg"
        fig.savefig(save_jpeg, format="jpeg", dpi=150, bbox_inches="tight")
        print(f"Plot saved as JPEG: {save_jpeg}")
    if pickle_file:
        if not pickle_file.endswith(".pkl"):
            pickle_file += ".pkl"
        with open(pickle_file, "wb") as f:
            pickle.dump({"figure": fig, "axes": list(axes), "metrics": [k for k, _ in keys], "processed_data": perf,
                         "cell_range": cell_range, "level": level, "show_idle": False, "metric_subsets": metrics},
                        f)
        print(f"Plot objects serialized to: {pickle_file}")
        print("\n# Python code to reload and display the plot:\nimport pickle\n"
              f"with open('{pickle_file}', 'rb') as f:\n    plot_data = pickle.load(f)\nfig = plot_data['figure']")
    show(fig)
    return fig


class LivePlot:
    """%perfmonitor_plot --live [INTERVAL [WINDOW]]: a figure of the last WINDOW seconds, redrawn every
    INTERVAL seconds on a thread until the monitor stops (or stop())."""

    def __init__(self, monitor, level, metrics, interval=2.0, window=120.0):
        self.monitor, self.level = monitor, level
        self.keys = resolve_metrics(metrics or ["cpu_summary", "memory"], monitor.num_gpus)
        self.interval, self.window = max(0.2, float(interval)), float(window)
        self.display_id = f"jobscope-live-{id(self)}"
        self.updates = 0
        self._stop = threading.Event()
        self._thread = None

    def _draw(self, update):
        self.monitor.sample()
        perf = self.monitor.data.view(level=self.level)
        now = time.perf_counter()
        perf = perf[perf["time"] >= now - self.window].copy()
        perf["time"] = perf["time"] - now
        fig, _ = figure(perf, [], self.keys, self.monitor, self.level, figsize=(8, 2.2))
        show(fig, self.display_id, update)
        self.updates += 1

    def start(self):
        self._draw(update=False)
        self._thread = threading.Thread(target=self._run, name="jobscope-live-plot", daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.wait(self.interval) and self.monitor.running:
            try:
                self._draw(update=True)
            except Exception:  # the kernel goes on without the live view
                break

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)

    @property
    def alive(self):
        return bool(self._thread and self._thread.is_alive())
