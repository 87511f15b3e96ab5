# SPDX-License-Identifier: MIT
"""RunLog: the run monitor's append-only JSONL log of phases and events, with jobscope marks.

The lines are the run monitor's own, key for key and byte for byte (json.dumps of
{"ts", "type": "phase", "name", "seconds" (3 decimals), **extra} and {"ts", "type": "event", "event",
["data"]}, ts in UTC ISO 8601 with milliseconds), so existing `jq` filters and `tail -f` habits keep working.
Inside a monitored run (jobscope run, or a Tracker) each entry is also sent as a mark: log_event as an
event, log_phase (a phase that has already ended) as an event named after the phase with its seconds and
extra fields as data. RunLog.phase(name) is the live form: begin and end marks around the block (so the
monitor totals CPU, memory and I/O for it), then the same JSONL line as log_phase.
"""
import contextlib
import json
import time
from datetime import datetime, timezone

from . import marks


def _now_iso():
    """Current UTC timestamp in ISO 8601 format (the run monitor's)."""
    return datetime.now(tz=timezone.utc).isoformat(timespec="milliseconds")


class RunLog:
    """Accumulates timestamped JSONL entries for a single run; `path` (optional) also appends each entry to
    that file as it is logged (for tail -f)."""

    def __init__(self, path=None, send_marks=True):
        self._entries = []
        self._path = path
        self._send = send_marks

    @property
    def entries(self):
        return list(self._entries)

    def _add(self, entry):
        self._entries.append(entry)
        if self._path is not None:
            with open(self._path, "a") as f:
                f.write(json.dumps(entry, default=str) + "\n")

    def log_phase(self, name, seconds, **extra):
        """Record a completed phase with its wall-clock duration."""
        entry = {"ts": _now_iso(), "type": "phase", "name": name, "seconds": round(seconds, 3)}
        entry.update(extra)
        self._add(entry)
        if self._send:
            marks.event(name, {"type": "phase", "seconds": round(seconds, 3), **extra})

    def log_event(self, event_type, data=None):
        """Record a point-in-time event (start, error, etc.)."""
        entry = {"ts": _now_iso(), "type": "event", "event": event_type}
        if data:
            entry["data"] = data
        self._add(entry)
        if self._send:
            marks.event(event_type, data if data else None)

    @contextlib.contextmanager
    def phase(self, name, **extra):
        """with log.phase("fit"): ...  marks around the block, then log_phase's line for it."""
        t0 = time.perf_counter()
        if self._send:
            marks.begin(name)
        try:
            yield
        finally:
            if self._send:
                marks.end(name)
            entry = {"ts": _now_iso(), "type": "phase", "name": name,
                     "seconds": round(time.perf_counter() - t0, 3)}
            entry.update(extra)
            self._add(entry)

    def write(self, path):
        """Write all entries as newline-delimited JSON."""
        with open(path, "w") as f:
            for entry in self._entries:
                f.write(json.dumps(entry, default=str) + "\n")
