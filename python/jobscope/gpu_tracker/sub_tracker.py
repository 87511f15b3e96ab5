# SPDX-License-Identifier: MIT
"""gpu_tracker's ``sub_tracker`` module on jobscope: code blocks as phases, and their analysis.

    with gput.Tracker(sleep_time=0.5, tracking_file="tracking.csv"):
        with gput.SubTracker(code_block_name="load", sub_tracking_file="sub-tracking.csv"):
            load()
        train()                                   # @gput.sub_track(code_block_name="train", ...)
    results = gput.SubTrackingAnalyzer("tracking.csv", "sub-tracking.csv").sub_tracking_results()

A SubTracker does what gpu_tracker's does (a row at the block's start and one at its stop in the sub-tracking
file: process_id, code_block_name, position 0/1, timestamp), and marks the block as a jobscope phase with the
same name (js_phase_begin / js_phase_end), so the monitor of the run (the Tracker's, or `jobscope run`'s)
totals CPU, memory and I/O for it exactly: Tracker.phases, `jobscope summary`, the report. Outside a monitored
run the marks do nothing.

SubTrackingAnalyzer, TrackingComparison and their results follow gpu_tracker 5.0.1: statistics (min, max,
mean, std with ddof 0) of the tracking file's timepoints overall and within each block's start/stop pairs, the
blocks' compute times, and the comparison of several sessions' pickled results. They need pandas.
"""
from __future__ import annotations

import dataclasses as dclass
import functools
import inspect
import logging
import os
import pickle
import time

from .. import marks
from . import _data

log = logging.getLogger("jobscope.gpu_tracker")

SUMMARY_STATS = ["min", "max", "mean", "std"]
START, STOP = 0, 1


def _pandas():
    try:
        import pandas
    except ImportError as e:  # pragma: no cover
        raise ImportError("the sub-tracking analysis needs pandas (Debian: python3-pandas)") from e
    return pandas


def _summary_stats(data):
    stats = data.describe().loc[SUMMARY_STATS]
    stats.loc["std"] = data.std(ddof=0)
    return stats


def _mark_name(name):
    """A phase name within the mark limit (256 bytes): long names keep their end (the file:line part)."""
    raw = name.encode("utf-8", "replace")
    if 0 < len(raw) <= 256 and b"\0" not in raw:
        return name
    tail = raw.replace(b"\0", b"?")[-250:].decode("utf-8", "ignore")
    return "..." + tail if tail else "(unnamed)"


class SubTracker:
    """Context manager marking a code block: a start row and a stop row in the sub-tracking file, and a jobscope
    phase of the same name.

    :param code_block_name: the block's name; default: the caller's file (relative path), a colon and
        ``code_block_attribute``.
    :param code_block_attribute: used when ``code_block_name`` is None; default: the caller's line number.
    :param sub_tracking_file: where the rows go (".csv" or ".sqlite"); default ``<this process ID>.csv`` (one
        file per process: combine them with SubTrackingAnalyzer.combine_sub_tracking_files).
    :param overwrite: replace an existing file at this process's first row (else FileExistsError then).
    :ivar code_block_name: the block's name.
    :ivar sub_tracking_file: the file's path.
    """

    def __init__(self, code_block_name: str | None = None, code_block_attribute: str | None = None,
                 sub_tracking_file: str | None = None, overwrite: bool = False):
        if code_block_name is not None:
            self.code_block_name = code_block_name
        else:
            caller = inspect.stack()[1]
            attribute = caller.lineno if code_block_attribute is None else code_block_attribute
            self.code_block_name = f"{os.path.relpath(caller.filename)}:{attribute}"
        self.process_id = os.getpid()
        if sub_tracking_file is None:
            sub_tracking_file = f"{self.process_id}.csv"
        self.sub_tracking_file = os.fspath(sub_tracking_file)
        self._data = _data.create(self.sub_tracking_file, overwrite)

    def _log(self, position):
        self._data.append({"process_id": os.getpid(), "code_block_name": self.code_block_name, "position": position,
                           "timestamp": time.time()}, _data.SUB_TRACKING_FIELDS)

    def __enter__(self):
        self._log(START)
        marks.begin(_mark_name(self.code_block_name))
        return self

    def __exit__(self, *_):
        marks.end(_mark_name(self.code_block_name))
        self._log(STOP)


def sub_track(code_block_name: str | None = None, code_block_attribute: str | None = None,
              sub_tracking_file: str | None = None, overwrite: bool = False):
    """Decorator: every call of the function is a SubTracker block. The default name is the absolute path of
    the file defining the function, a colon and ``code_block_attribute`` (default: the function's name)."""

    def decorator(func):
        name, attribute = code_block_name, code_block_attribute
        if name is None:
            caller = inspect.stack()[1]
            attribute = func.__name__ if attribute is None else attribute
            name = f"{os.path.abspath(caller.filename)}:{attribute}"

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with SubTracker(code_block_name=name, code_block_attribute=attribute,
                            sub_tracking_file=sub_tracking_file, overwrite=overwrite):
                return func(*args, **kwargs)

        return wrapper

    return decorator


class SubTrackingAnalyzer:
    """Statistics of the resource usage within each sub-tracked code block, from a Tracker's tracking file and
    a sub-tracking file."""

    def __init__(self, tracking_file: str | None, sub_tracking_file: str):
        self._tracking = _data.create(tracking_file)
        self._sub = _data.create(sub_tracking_file)

    def read_static_data(self):
        """The tracking file's static data (units, capacities, counts) as a pandas Series."""
        return self._tracking.static(_pandas()).squeeze()

    def load_code_block_names(self) -> list:
        """The names of the code blocks in the sub-tracking file, sorted."""
        return sorted(self._sub.records(_pandas()).code_block_name.unique())

    def combine_sub_tracking_files(self, files: list):
        """Combine several sub-tracking files (one per process, same extension) into the sub-tracking file."""
        self._sub.combine(files)

    def load_timestamp_pairs(self, code_block_name: str) -> list:
        """The (start, stop) timestamps of each call of the block; a block still open at the end of a process's
        rows is left out. ValueError when the rows do not pair up."""
        t = self._sub.records(_pandas())
        t = t.loc[t.code_block_name == code_block_name, ["process_id", "position", "timestamp"]]
        t = t.sort_values(by=["process_id", "timestamp", "position"])
        drop = []
        for pid in t.process_id.unique():
            rows = t.loc[t.process_id == pid]
            if rows.position.iloc[-1] == START:
                drop.append(rows.index[-1])
        t = t.drop(drop)
        pairs = []
        for i in range(0, len(t), 2):
            a, b = t.iloc[i], t.iloc[i + 1] if i + 1 < len(t) else None
            if b is None:
                what = "start" if a.position == START else "stop"
                raise ValueError(f"Sub-tracking file is invalid. Detected a {what} at {float(a.timestamp)} of process "
                                 f"ID {int(a.process_id)} without its pair.")
            start, stop = float(a.timestamp), float(b.timestamp)
            prefix = f"Sub-tracking file is invalid. Detected timestamp pair ({start}, {stop})"
            if int(a.process_id) != int(b.process_id):
                raise ValueError(f"{prefix} with differing process IDs: {int(a.process_id)} and {int(b.process_id)}.")
            if a.position > b.position:
                raise ValueError(f"{prefix} of process ID {int(a.process_id)} with a start time greater than the stop "
                                 "time.")
            if a.position == b.position:
                both = "starts" if a.position == START else "stops"
                raise ValueError(f"{prefix} of process ID {int(a.process_id)} that are both {both} (a code block "
                                 "nested in itself?).")
            pairs.append((start, stop))
        return pairs

    def load_timepoints(self, timestamp_pairs: list):
        """The tracking file's timepoints within any of the (start, stop) pairs (inclusive)."""
        tp = self._tracking.timepoints(_pandas())
        selected = None
        for start, stop in timestamp_pairs:
            between = (tp.timestamp >= start) & (tp.timestamp <= stop)
            selected = between if selected is None else selected | between
        if selected is None:
            return tp.iloc[0:0]
        return tp[selected]

    def overall_timepoint_results(self):
        """min, max, mean, std of every measurement over all the timepoints (a DataFrame, one row each)."""
        tp = self._tracking.timepoints(_pandas())
        fields = [f for f in _data.TIMEPOINT_FIELDS if f != "timestamp" and f in tp.columns]
        return _summary_stats(tp[fields].astype(float)).T

    def sub_tracking_results(self) -> "SubTrackingResults":
        """The overall statistics, the static data and, per code block, its calls, compute times and the
        statistics of the timepoints within its calls."""
        pd = _pandas()
        overall = self.overall_timepoint_results()
        static = self.read_static_data()
        blocks = []
        for name in self.load_code_block_names():
            pairs = self.load_timestamp_pairs(name)
            diffs = pd.Series([stop - start for start, stop in pairs], dtype=float)
            compute_time = _summary_stats(diffs)
            compute_time["total"] = float(diffs.sum())
            tp = self.load_timepoints(pairs)
            non_empty = sum(bool(((tp.timestamp >= a) & (tp.timestamp <= b)).any()) for a, b in pairs)
            usage = _summary_stats(tp.drop(columns="timestamp").astype(float)).T
            blocks.append(CodeBlockResults(name=name, num_timepoints=len(tp), num_calls=len(pairs),
                                           num_non_empty_calls=int(non_empty), compute_time=compute_time,
                                           resource_usage=usage))
        return SubTrackingResults(overall, static, blocks)


def _line_number(name):
    if ":" in name:
        tail = name.split(":")[-1]
        if tail.isdigit():
            return tail
    return None


def _sort_key(name, width):
    n = _line_number(name)
    if n is not None:
        name = ":".join(name.split(":")[:-1] + [n.zfill(width)])
    return name


def _sorted_blocks(results):
    width = max([len(_line_number(r.name) or "") for r in results.code_block_results] + [0])
    return sorted(results.code_block_results, key=lambda r: _sort_key(r.name, width))


class TrackingComparison:
    """Compares tracking sessions from their pickled SubTrackingResults: {session name: pickle path}. Code
    blocks are matched by name, in order; names that differ only by line number match (with a warning).

    :ivar results_map: session name -> SubTrackingResults.
    :raises ValueError: the sessions' code blocks do not match.
    """

    def __init__(self, file_path_map: dict):
        self._first = sorted(file_path_map)[0]
        self.results_map = {}
        for name, path in file_path_map.items():
            with open(path, "rb") as f:
                self.results_map[name] = pickle.load(f)
        first = self.results_map[self._first]
        blocks1 = _sorted_blocks(first)
        first.code_block_results = blocks1
        for name, results in self.results_map.items():
            if name == self._first:
                continue
            blocks2 = _sorted_blocks(results)
            if len(blocks1) != len(blocks2):
                raise ValueError(f"All sub-tracking results must have the same number of code blocks. The first has "
                                 f'{len(blocks1)} code blocks but tracking session "{name}" has {len(blocks2)} code '
                                 "blocks.")
            for b1, b2 in zip(blocks1, blocks2):
                if b1.name == b2.name:
                    continue
                same_file = _line_number(b1.name) is not None and _line_number(b2.name) is not None and \
                    b1.name.split(":")[:-1] == b2.name.split(":")[:-1]
                if not same_file:
                    raise ValueError(f'Code block name "{b1.name}" of tracking session "{self._first}" does not match '
                                     f'code block name "{b2.name}" of tracking session "{name}"')
                log.warning(f'Code block name "{b1.name}" of tracking session "{self._first}" matched with code block '
                            f'name "{b2.name}" of tracking session "{name}" but they differ by line number. If these '
                            "code blocks were not meant to match, their comparison will not be valid and their names "
                            "must be disambiguated.")
            results.code_block_results = blocks2

    def compare(self, statistic: str = "mean") -> "ComparisonResults":
        """Each measurement's `statistic` ('min', 'max', 'mean' or 'std') per session, overall and per code
        block, and the blocks' compute times, each sorted ascending."""
        pd = _pandas()
        if statistic not in SUMMARY_STATS:
            raise ValueError(f"Invalid summary statistic '{statistic}'. Valid values are {' '.join(SUMMARY_STATS)}.")
        first = self.results_map[self._first]
        overall, blocks = {}, {}

        def per_block(get):
            out = {}
            for matched in zip(*[[(n, b) for b in r.code_block_results] for n, r in self.results_map.items()]):
                label = " -> ".join(sorted({b.name for _, b in matched}))
                out[label] = pd.Series({n: get(b) for n, b in matched}).sort_values(ascending=True)
            return out

        for m in first.overall.index:
            overall[m] = pd.Series({n: float(r.overall[statistic][m]) for n, r in self.results_map.items()}) \
                .sort_values(ascending=True)
            if first.code_block_results:
                blocks[m] = per_block(lambda b, m=m: float(b.resource_usage[statistic][m]))
        times = per_block(lambda b: float(b.compute_time[statistic])) if first.code_block_results else {}
        return ComparisonResults(overall_resource_usage=overall, code_block_resource_usage=blocks,
                                 code_block_compute_time=times)


@dclass.dataclass
class CodeBlockResults:
    """One code block: its name, the timepoints within its calls, its calls (and those with at least one
    timepoint), its compute times (min, max, mean, std, total) and the statistics of its timepoints."""
    name: str
    num_timepoints: int
    num_calls: int
    num_non_empty_calls: int
    compute_time: object
    resource_usage: object


@dclass.dataclass
class SubTrackingResults:
    """A session's results: overall statistics, static data, and each code block's results."""
    overall: object
    static_data: object
    code_block_results: list

    def to_json(self) -> dict:
        """The results as JSON-able dicts."""
        r = dclass.asdict(self)
        r["overall"] = _frame_json(r["overall"])
        r["static_data"] = r["static_data"].to_dict()
        for b in r["code_block_results"]:
            b["compute_time"] = b["compute_time"].to_dict()
            b["resource_usage"] = _frame_json(b["resource_usage"])
        return r

    def __str__(self) -> str:
        return _dict_to_str("", dclass.asdict(self), 0)


@dclass.dataclass
class ComparisonResults:
    """TrackingComparison.compare's result: per measurement (and code block) a Series over the sessions."""
    overall_resource_usage: dict
    code_block_resource_usage: dict
    code_block_compute_time: dict

    def to_json(self) -> dict:
        r = dclass.asdict(self)
        r["overall_resource_usage"] = {k: v.to_dict() for k, v in r["overall_resource_usage"].items()}
        for m, comparisons in r["code_block_resource_usage"].items():
            r["code_block_resource_usage"][m] = {k: v.to_dict() for k, v in comparisons.items()}
        r["code_block_compute_time"] = {k: v.to_dict() for k, v in r["code_block_compute_time"].items()}
        return r

    def __str__(self) -> str:
        return _dict_to_str("", dclass.asdict(self), 0, no_title=set(self.code_block_compute_time))


def _frame_json(df):
    return {index: row.to_dict() for index, row in df.iterrows()}


def _dict_to_str(text, d, indent, no_title=None):
    """gpu_tracker's text of results: Title Case keys indented by tabs, tables through pandas."""
    pd = _pandas()
    pad = "\t" * indent
    d = {f"{pad}{k if no_title and k in no_title else k.replace('_', ' ').title()}": v for k, v in d.items()}
    width = max(len(k) for k in d) if d else 0
    for key, value in d.items():
        if isinstance(value, pd.Series):
            value = value.to_frame().T
            value = value.rename({value.index[0]: ""})
        if isinstance(value, dict):
            text += f"{key}:\n"
            text = _dict_to_str(text, value, indent + 1, no_title)
        elif isinstance(value, pd.DataFrame):
            text += f"{key}:\n"
            with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 5000,
                                   "display.float_format", lambda x: f'{float(f"{x:.8f}")}'):
                table = str(value)
            text += "\n".join(pad + "\t" + line for line in table.splitlines()) + "\n"
        elif isinstance(value, list):
            text += f"{key}:\n"
            for item in value:
                text = _dict_to_str(text, item, indent + 1, no_title) + "\n"
        else:
            value = f"{value:.8f}" if isinstance(value, float) else value
            text += f"{key}:{' ' * (width - len(key))} {value}\n"
    return text
