# SPDX-License-Identifier: MIT
"""Marks from Python: phases and events sent to the monitor of the run (jobscope run, or a Tracker).

Outside a monitored run every call is a no-op. A mark never blocks: when the monitor's queue is full it is
dropped and counted (dropped()). Without libjobscope the calls do nothing either (available() says so).
"""
import contextlib
import json
import os
import warnings

from . import _lib

_warned = False


def _send(fn, *args):
    global _warned
    try:
        lib = _lib.lib()
    except _lib.LibraryNotFound as e:
        if os.environ.get("JOBSCOPE_SOCKET") and not _warned:  # a monitor expects marks: say why none come
            _warned = True
            warnings.warn(f"jobscope marks are not sent: {e}", RuntimeWarning, stacklevel=3)
        return 0
    return getattr(lib, fn)(*args)


def _check_name(name):
    raw = _lib.b(name)
    if not raw or len(raw) > 256 or b"\0" in raw:
        raise ValueError("a mark's name is 1 to 256 bytes without NUL")
    return raw


def begin(name):
    """Phase `name` begins now. Returns 0 when sent (or no monitor), a negative errno when dropped."""
    return _send("js_phase_begin", _check_name(name))


def end(name):
    """Phase `name` ends now."""
    return _send("js_phase_end", _check_name(name))


def event(name, data=None, **fields):
    """A point event `name` now, with `data` (anything json.dumps takes) or keyword fields."""
    if data is None and fields:
        data = fields
    elif fields:
        data = {**data, **fields} if isinstance(data, dict) else {"data": data, **fields}
    text = None if data is None else json.dumps(data, default=str)
    if text is not None and len(text.encode()) > 4096:
        raise ValueError("an event's data is at most 4096 bytes of JSON")
    return _send("js_event", _check_name(name), None if text is None else text.encode())


@contextlib.contextmanager
def phase(name):
    """with jobscope.phase("train"): ...  (begin and end marks around the block, even on an exception)"""
    begin(name)
    try:
        yield
    finally:
        end(name)


def active():
    """Whether marks reach a monitor."""
    return bool(_send("js_marks_active"))


def dropped():
    """Marks this process dropped so far."""
    return int(_send("js_marks_dropped"))
