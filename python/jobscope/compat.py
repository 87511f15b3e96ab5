# SPDX-License-Identifier: MIT
"""Opt-in shim: unchanged gpu_tracker and pytyche code runs on jobscope.

    import jobscope.compat
    jobscope.compat.install()          # from now on in this interpreter:
    import gpu_tracker                 # -> jobscope.gpu_tracker
    from gpu_tracker.tracker import Tracker
    from pytyche.diagnostics.run_monitor import HWMonitor   # -> jobscope.run_monitor

or, for a script that must not be edited at all:

    python3 -m jobscope.compat SCRIPT.py [ARGS...]      # runs it as __main__ with the shim installed
    python3 -m jobscope.compat -m MODULE [ARGS...]      # e.g. -m gpu_tracker --execute ...

install() puts a finder first on sys.meta_path. It answers for `gpu_tracker` and its modules (`tracker`,
`sub_tracker`, `__main__`), which become jobscope's (the same module objects: `gpu_tracker.Tracker is
jobscope.gpu_tracker.Tracker`), and for `pytyche.diagnostics.run_monitor`. The packages `pytyche` and
`pytyche.diagnostics` stay the real ones when pytyche is installed (only run_monitor is replaced); without it
they are empty stand-ins. A module already imported before install() is left as it is. uninstall() removes
the finder (modules already imported stay).
"""
import importlib
import importlib.abc
import importlib.machinery
import os
import runpy
import sys

ALIASES = {
    "gpu_tracker": "jobscope.gpu_tracker",
    "gpu_tracker.tracker": "jobscope.gpu_tracker.tracker",
    "gpu_tracker.sub_tracker": "jobscope.gpu_tracker.sub_tracker",
    "gpu_tracker.__main__": "jobscope.gpu_tracker.__main__",
    "pytyche.diagnostics.run_monitor": "jobscope.run_monitor",
}
STAND_INS = ("pytyche", "pytyche.diagnostics")  # packages replaced only when not installed


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)  # the jobscope module itself, not a copy

    def exec_module(self, module):
        pass


class _StandInLoader(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__doc__ = "stand-in package made by jobscope.compat (the real one is not installed)"


class Finder(importlib.abc.MetaPathFinder):
    """The shim's finder (see the module's doc)."""

    def find_spec(self, name, path=None, target=None):
        if name in ALIASES:
            target_name = ALIASES[name]
            spec = importlib.machinery.ModuleSpec(name, _AliasLoader(target_name),
                                                  is_package=name == "gpu_tracker")
            if name == "gpu_tracker":
                spec.submodule_search_locations = []
            return spec
        if name in STAND_INS:
            for finder in sys.meta_path:  # the real package, if any other finder has it
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                real = finder.find_spec(name, path, target)
                if real is not None:
                    return real
            return importlib.machinery.ModuleSpec(name, _StandInLoader(), is_package=True)
        return None


_finder = None


def install():
    """Make gpu_tracker and pytyche.diagnostics.run_monitor resolve to jobscope's (idempotent)."""
    global _finder
    if _finder is None:
        _finder = Finder()
        sys.meta_path.insert(0, _finder)
    return _finder


def uninstall():
    """Remove the finder."""
    global _finder
    if _finder is not None and _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    _finder = None


def installed():
    return _finder is not None and _finder in sys.meta_path


USAGE = "usage: python3 -m jobscope.compat SCRIPT [ARGS...] | -m MODULE [ARGS...]"


def main(argv=None):
    """python3 -m jobscope.compat SCRIPT [ARGS] | -m MODULE [ARGS]: run it with the shim installed."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(f"jobscope.compat: -m needs a module\n{USAGE}", file=sys.stderr)
            return 2
        name = argv[1]
        sys.argv = [name] + argv[2:]
        # gpu_tracker (a package) runs jobscope.gpu_tracker's __main__
        runpy.run_module(ALIASES.get(name, name), run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0

if __name__ == "__main__":
    sys.exit(main())
