# SPDX-License-Identifier: MIT
"""ctypes binding of libjobscope.so.0 (include/jobscope.h), loaded on first use.

The library is found, in order: the file named by $JOBSCOPE_LIBRARY (and nothing else then); the package's
own copy beside this file (a wheel from `pip install .` at the repository root carries one); a build tree next
to this package (../build/lib, for a checkout: the library of the same sources); the dynamic loader's own
search ("libjobscope.so.0": LD_LIBRARY_PATH, ld.so.cache, the system's library directories, where the
libjobscope0 package or `meson install` put it). Nothing is compiled when this package is imported.
"""
import ctypes
import errno
import os
import threading
from pathlib import Path

_lock = threading.Lock()
_lib = None


class LibraryNotFound(ImportError):
    """libjobscope.so.0 could not be loaded."""


class MonitorOpts(ctypes.Structure):
    """js_monitor_opts_t (version 2: 56 bytes on LP64; version 1 was 40)."""

    _fields_ = [
        ("size", ctypes.c_size_t),
        ("interval_s", ctypes.c_double),
        ("output", ctypes.c_char_p),
        ("overwrite", ctypes.c_int),
        ("uss_every", ctypes.c_uint),
        ("set_environment", ctypes.c_int),
        # version 2
        ("pid", ctypes.c_int),
        ("levels", ctypes.c_uint),
        ("job_id", ctypes.c_char_p),
    ]


# levels of the embedded monitor (include/jobscope.h JS_LEVEL_*)
LEVEL_USER = 1
LEVEL_JOB = 2


def _candidates():
    env = os.environ.get("JOBSCOPE_LIBRARY")
    if env:
        yield env
        return
    here = Path(__file__).resolve().parent
    for path in (here / "libjobscope.so.0", here.parent.parent / "build" / "lib" / "libjobscope.so.0",
                 here.parent / "build" / "lib" / "libjobscope.so.0"):
        if path.exists():  # a missing file is no candidate: the error lists what was really tried
            yield str(path)
    yield "libjobscope.so.0"


def _bind(lib):
    sig = {
        "js_phase_begin": (ctypes.c_int, [ctypes.c_char_p]),
        "js_phase_end": (ctypes.c_int, [ctypes.c_char_p]),
        "js_event": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p]),
        "js_marks_active": (ctypes.c_int, []),
        "js_marks_dropped": (ctypes.c_uint64, []),
        "js_monitor_start": (ctypes.c_int, [ctypes.POINTER(MonitorOpts)]),
        "js_monitor_sample": (ctypes.c_int, []),
        "js_monitor_stop": (ctypes.c_int, []),
        "js_monitor_summary": (ctypes.c_void_p, []),
        "js_monitor_address": (ctypes.c_char_p, []),
        "js_recording_export": (ctypes.c_int, [ctypes.c_char_p] * 4),
        "js_recording_summary": (ctypes.c_void_p, [ctypes.c_char_p]),
        "js_free": (None, [ctypes.c_void_p]),
        "js_version": (ctypes.c_char_p, []),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib


def lib():
    """The loaded library (raises LibraryNotFound with every place tried)."""
    global _lib
    with _lock:
        if _lib is None:
            tried = []
            for cand in _candidates():
                try:
                    _lib = _bind(ctypes.CDLL(cand, use_errno=True))
                    break
                except OSError as e:
                    tried.append(f"{cand}: {e}")
            if _lib is None:
                raise LibraryNotFound(
                    "libjobscope.so.0 not found; install jobscope (`pip install .` at the repository root, the "
                    "libjobscope0 package, or meson install) or set JOBSCOPE_LIBRARY to the library's path "
                    "(docs/INSTALL.md). Tried:\n  " + "\n  ".join(tried))
        return _lib


def available():
    """Whether the library can be loaded."""
    try:
        lib()
        return True
    except LibraryNotFound:
        return False


def check(rc, what):
    """Raise OSError for a negative errno return."""
    if rc < 0:
        raise OSError(-rc, f"{what}: {os.strerror(-rc)}")
    return rc


def take_string(ptr):
    """A malloc'ed C string returned by the library, as str (freed)."""
    if not ptr:
        err = ctypes.get_errno() or errno.EIO
        raise OSError(err, os.strerror(err))
    try:
        return ctypes.string_at(ptr).decode("utf-8", errors="replace")
    finally:
        lib().js_free(ptr)


def b(s):
    return s.encode("utf-8") if isinstance(s, str) else s
