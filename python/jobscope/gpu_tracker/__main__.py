# SPDX-License-Identifier: MIT
"""gpu_tracker's command line on jobscope: track a command's resource usage; sub-tracking files.

Usage:
    python3 -m jobscope.gpu_tracker -h | --help
    python3 -m jobscope.gpu_tracker -v | --version
    python3 -m jobscope.gpu_tracker [OPTIONS] --execute COMMAND [ARGS...]
    python3 -m jobscope.gpu_tracker [OPTIONS] --execute "COMMAND ARGS..." [OPTIONS]
    python3 -m jobscope.gpu_tracker [OPTIONS] --execute -- COMMAND [ARGS...]
    python3 -m jobscope.gpu_tracker sub-track combine --stf=<sub-track-file> -p <file-path>...
    python3 -m jobscope.gpu_tracker sub-track analyze --tf=<tracking-file> --stf=<sub-track-file> [--output=<output>] [--format=<format>]
    python3 -m jobscope.gpu_tracker sub-track compare [--output=<output>] [--format=<format>] [--cconfig=<config-file>] [-m <name>=<file-path>...] [--stat=<statistic>]

The command:
    -e --execute COMMAND [ARGS...]   The command to run with its arguments, as separate words (the shell's
                                     quoting applies: -e python3 -c 'print(1 + 2)'); everything after it is the
                                     command's, unless it is one word followed only by gpu-tracker's own
                                     options (gpu_tracker's `-e ./run.sh --st=0.5`).
    -e --execute "COMMAND ARGS..."   gpu_tracker's form, one word holding the whole command: split as a POSIX
                                     shell would (quotes inside it group words: -e 'python3 -c "print(1 + 2)"');
                                     options may follow it. Also --execute="..." and -e"...".
    -e --execute -- COMMAND [ARGS...]  Everything after -- is the command, verbatim.

Options (gpu_tracker's):
    -o --output=<output>    File for the measurements (tracking) or the analysis report (sub-tracking);
                            default: the screen.
    -f --format=<format>    'text' (default), 'json' or 'pickle'.
    --tconfig=<config-file> JSON file of Tracker keyword arguments; command-line options override it.
    --st=<sleep-time>       Seconds between samples (default 1.0; from 0.01).
    --ru=<ram-unit>         bytes, kilobytes, megabytes, gigabytes (default) or terabytes.
    --gru=<gpu-ram-unit>    bytes, kilobytes, megabytes, gigabytes (default) or terabytes.
    --tu=<time-unit>        seconds, minutes, hours (default) or days.
    --nec=<num-cores>       The number of cores expected to be used (default: all the system's).
    --guuids=<gpu-uuids>    Comma-separated UUIDs of the GPUs whose utilisation is tracked (default: all).
    --disable-logs          Suppress warnings.
    --gb=<gpu-brand>        nvidia or amd (default: NVIDIA's GPUs if any, else AMD's).
    --tf=<tracking-file>    Also store every sample's measurements: .csv or .sqlite.
    --overwrite             Replace an existing tracking file.
    --stf=<sub-track-file>  A sub-tracking file (columns process_id, code_block_name, position, timestamp).
    -p <file-path>          Sub-tracking files to combine (one path: a directory, all its files).
    -m <name>=<file-path>   A tracking session's pickled analysis (sub-track analyze -f pickle), for compare.
    --cconfig=<config-file> JSON file with "file_path_map" and "statistic" for compare.
    --stat=<statistic>      min, max, mean (default) or std, for compare.

After the command, "Resource tracking complete. Process completed with status code: N" and the measurements;
the exit status is the command's (gpu_tracker exits 0 whatever the command did). The command runs as a child of
this process, held before it executes until tracking has started, so its whole run is measured.
"""
import json
import logging
import os
import pickle
import shlex
import signal
import sys
import time

USAGE = __doc__[__doc__.index("Usage:"):]
PROG = "gpu-tracker"

TRACKER_OPTIONS = {"--st": "sleep_time", "--ru": "ram_unit", "--gru": "gpu_ram_unit", "--tu": "time_unit",
                   "--nec": "n_expected_cores", "--guuids": "gpu_uuids", "--gb": "gpu_brand", "--tf": "tracking_file"}
FLAGS = {"--disable-logs": "disable_logs", "--overwrite": "overwrite"}
VALUED = set(TRACKER_OPTIONS) | {"-o", "--output", "-f", "--format", "--tconfig", "--stf", "--cconfig", "--stat"}
LISTS = {"-p", "-m"}


class UsageError(Exception):
    pass


def _error(msg, code=1):
    print(f"{PROG}: {msg}", file=sys.stderr)
    return code


def parse(argv, allow_command=True):
    """Options as {name: value} (lists for -p and -m, True for flags), the command (list or None) and the
    positional words (sub-track ...). UsageError on a bad option."""
    opts, words, command = {}, [], None
    i = 0
    while i < len(argv):
        a = argv[i]
        name, value = a.split("=", 1) if a.startswith("--") and "=" in a else (a, None)
        if allow_command and (name in ("-e", "--execute") or (a.startswith("-e") and len(a) > 2)):
            if command is not None:
                raise UsageError("--execute given twice")
            if name not in ("-e", "--execute"):
                value = a[2:]  # -e"COMMAND ARGS"
            if value is not None:  # one string: split as a POSIX shell would
                command = shlex.split(value)
                i += 1
                continue
            rest = argv[i + 1:]
            if rest and rest[0] == "--":  # --execute -- COMMAND ARGS: verbatim, whatever the words are
                command = rest[1:]
                break
            if not rest:
                raise UsageError("--execute needs a command")
            if len(rest[0].split()) > 1 or _only_options(rest[1:]):
                # gpu_tracker's form: one word (quoted), then gpu-tracker's own options if any
                command = shlex.split(rest[0])
                i += 2
                continue
            command = list(rest)  # the command and its arguments, verbatim
            break
        if name in ("-h", "--help", "-v", "--version") or name in FLAGS:
            opts[name] = True
        elif name in VALUED or name in LISTS:
            if value is None:
                if i + 1 >= len(argv):
                    raise UsageError(f"{name} needs a value")
                i += 1
                value = argv[i]
            if name in LISTS:
                opts.setdefault(name, []).append(value)
                while i + 1 < len(argv) and not argv[i + 1].startswith("-"):  # -p A B C
                    i += 1
                    opts[name].append(argv[i])
            else:
                opts[name] = value
        elif a.startswith("-") and a != "-":
            raise UsageError(f"unknown option {a}")
        else:
            words.append(a)
        i += 1
    for short, long_ in (("-o", "--output"), ("-f", "--format")):
        if short in opts:
            opts[long_] = opts.pop(short)
    return opts, command, words


def _only_options(words):
    """Whether `words` are all gpu-tracker options (with their values)."""
    try:
        _, command, positional = parse(words, allow_command=False)
    except UsageError:
        return False
    return command is None and not positional


def _output(fmt, obj, path):
    if fmt == "json":
        text = json.dumps(obj.to_json(), indent=1)
    elif fmt == "text":
        text = str(obj)
    elif fmt == "pickle":
        text = pickle.dumps(obj)
    else:
        raise UsageError(f'"{fmt}" is not a valid format. Valid values are "json", "text" or "pickle".')
    if path is None:
        if isinstance(text, bytes):
            sys.stdout.buffer.write(text)
            sys.stdout.flush()
        else:
            print(text)
    else:
        with open(path, "wb" if fmt == "pickle" else "w") as f:
            f.write(text)


def _spawn_held(command):
    """Fork the command, held before exec until release() is called: (pid, release). Raises OSError with
    the exec error (command not found, ...) from release()."""
    go_r, go_w = os.pipe()
    err_r, err_w = os.pipe2(os.O_CLOEXEC) if hasattr(os, "pipe2") else os.pipe()
    pid = os.fork()
    if pid == 0:  # child: wait for the go, then exec; report an exec failure through err_w
        try:
            os.close(go_w)
            os.close(err_r)
            os.read(go_r, 1)
            os.close(go_r)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.execvp(command[0], command)
        except OSError as e:
            os.write(err_w, str(e.errno).encode())
        finally:
            os._exit(127)
    os.close(go_r)
    os.close(err_w)

    def release():
        os.write(go_w, b"x")
        os.close(go_w)
        data = b""
        while True:
            chunk = os.read(err_r, 64)
            if not chunk:
                break
            data += chunk
        os.close(err_r)
        if data:
            e = int(data)
            raise OSError(e, os.strerror(e))

    return pid, release


def track(opts, command):
    from . import Tracker

    kwargs = {}
    if "--tconfig" in opts:
        with open(opts["--tconfig"]) as f:
            kwargs = json.load(f)
    for o, k in TRACKER_OPTIONS.items():
        if o in opts:
            kwargs[k] = opts[o]
    for o, k in FLAGS.items():
        if opts.get(o):
            kwargs[k] = True
    try:
        if "sleep_time" in kwargs:
            kwargs["sleep_time"] = float(kwargs["sleep_time"])
        if "n_expected_cores" in kwargs:
            kwargs["n_expected_cores"] = int(kwargs["n_expected_cores"])
    except ValueError as e:
        raise UsageError(str(e))
    if isinstance(kwargs.get("gpu_uuids"), str):
        kwargs["gpu_uuids"] = set(kwargs["gpu_uuids"].split(","))
    if not command:
        return _error("Empty command provided.")
    fmt = opts.get("--format", "text")
    if fmt not in ("text", "json", "pickle"):
        raise UsageError(f'"{fmt}" is not a valid format. Valid values are "json", "text" or "pickle".')
    pid, release = _spawn_held(command)
    try:
        tracker = Tracker(process_id=pid, **kwargs)
        tracker.start()
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    old_int = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the command; we wait for it
    try:
        try:
            tracker._from_time = time.time()  # the first sample saw the fork, not the command: not counted
            release()
        except OSError as e:
            os.waitpid(pid, 0)
            tracker.stop()
            if e.errno == 2:
                return _error(f'Command not found: "{command[0]}"')
            return _error(f'The following error occurred when starting the command "{command[0]}": {e.strerror}')
        while True:  # exited, not reaped yet: the closing sample reads its times
            try:
                os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
                break
            except InterruptedError:
                continue
        tracker.stop()
        _, status = os.waitpid(pid, 0)
    finally:
        signal.signal(signal.SIGINT, old_int)
    code = os.waitstatus_to_exitcode(status)
    print(f"Resource tracking complete. Process completed with status code: {code}")
    _output(fmt, tracker, opts.get("--output"))
    return code if code >= 0 else 128 - code


def sub_track(opts, words):
    from .sub_tracker import SubTrackingAnalyzer, TrackingComparison

    if not words:
        raise UsageError("sub-track needs combine, analyze or compare")
    what = words[0]
    fmt = opts.get("--format", "text")
    if what == "analyze":
        if "--tf" not in opts or "--stf" not in opts:
            raise UsageError("sub-track analyze needs --tf and --stf")
        results = SubTrackingAnalyzer(opts["--tf"], opts["--stf"]).sub_tracking_results()
        _output(fmt, results, opts.get("--output"))
    elif what == "combine":
        files = opts.get("-p") or []
        if "--stf" not in opts or not files:
            raise UsageError("sub-track combine needs --stf and -p")
        if len(files) == 1 and os.path.isdir(files[0]):
            files = sorted(os.path.join(files[0], f) for f in os.listdir(files[0]))
        SubTrackingAnalyzer(None, opts["--stf"]).combine_sub_tracking_files(files)
    elif what == "compare":
        path_map, statistic = {}, None
        if "--cconfig" in opts:
            with open(opts["--cconfig"]) as f:
                config = json.load(f)
            path_map = dict(config.get("file_path_map") or {})
            statistic = config.get("statistic")
        for m in opts.get("-m") or []:
            if "=" not in m:
                raise UsageError(f"-m {m}: expected NAME=FILE")
            name, path = m.split("=", 1)
            path_map[name] = path
        if not path_map:
            return _error("A mapping of tracking session name to file path must be provided either through the -m "
                          "option or a config file.")
        statistic = opts.get("--stat") or statistic or "mean"
        _output(fmt, TrackingComparison(path_map).compare(statistic), opts.get("--output"))
    else:
        raise UsageError(f"unknown sub-track command {what!r} (combine, analyze, compare)")
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    logging.basicConfig(format="%(levelname)s:%(name)s:%(message)s")
    try:
        opts, command, words = parse(argv)
        if opts.get("-h") or opts.get("--help"):
            print(USAGE.rstrip())
            return 0
        if opts.get("-v") or opts.get("--version"):
            from . import __version__

            print(__version__)
            return 0
        if words and words[0] == "sub-track":
            if command is not None:
                raise UsageError("--execute and sub-track do not go together")
            return sub_track(opts, words[1:])
        if words:
            raise UsageError(f"unexpected argument {words[0]!r} (the command goes after --execute)")
        if command is None:
            raise UsageError("--execute is required (see --help)")
        return track(opts, command)
    except UsageError as e:
        return _error(f"{e} (see --help)", 2)
    except (ValueError, OSError, RuntimeError, KeyError) as e:
        return _error(str(e))


if __name__ == "__main__":
    sys.exit(main())
