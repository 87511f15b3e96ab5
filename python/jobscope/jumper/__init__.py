# SPDX-License-Identifier: MIT
"""JUmPER (jumper_extension 0.3.6) on jobscope: a notebook written for JUmPER runs with `%load_ext
jumper_extension` changed to `%load_ext jobscope`.

    from jobscope.jumper import PerformanceMonitor, OfflinePerformanceMonitor
    mon = PerformanceMonitor(); mon.start(1.0); ...; mon.data.view(level="user"); mon.stop()

Modules: monitor (PerformanceMonitor, OfflinePerformanceMonitor, PerformanceData: JUmPER's data frames from a
jobscope recording), magics (the %perfmonitor_* magics), cells (cell history, script writer), report (JUmPER's
report and analyzer, with jobscope's figures beside), plot (matplotlib plots, live view), session (JUmPER's
session layout). docs/JUPYTER.md has the parity table.
"""
from .monitor import (BASE_COLUMNS, OfflinePerformanceMonitor, PerformanceData, PerformanceMonitor,
                      get_available_levels, is_slurm_available)

__all__ = ["PerformanceMonitor", "OfflinePerformanceMonitor", "PerformanceData", "BASE_COLUMNS",
           "get_available_levels", "is_slurm_available", "load_ipython_extension", "unload_ipython_extension"]

_magics = None


def load_ipython_extension(ip):
    """Register JUmPER's magics (also done by `%load_ext jobscope`)."""
    global _magics
    from .magics import JumperMagics

    if _magics is None:
        _magics = JumperMagics(ip)
        _magics.register()


def unload_ipython_extension(ip):
    global _magics
    if _magics is not None:
        _magics.unregister()
        _magics = None
