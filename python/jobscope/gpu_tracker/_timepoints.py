# SPDX-License-Identifier: MIT
"""gpu_tracker's figures per sample ("timepoints") from a jobscope recording, in base units.

Every number comes from the recording's views (libjobscope's model): `process` (each member's RSS, USS, PSS,
threads and own CPU times), `tree` (the scope's CPU rate, exact: children that lived less than an interval
included; the embedded monitor's thread taken off), `system` (the host's CPU and memory) and `gpu` (per
device and sample). This module only sums members and devices per sample the way gpu_tracker defines its
figures; the peaks and means of a run are taken over these timepoints (CPU means excepted: they come from the
summary's exact totals, see tracker.py).

Memory follows gpu_tracker's definitions (RSSValues), computed so that no page is counted twice: see
ram_split, the one place that decides it.
"""
from .. import _views


def ram_split(procs, root_pid):
    """gpu_tracker's RSS figures of one sample: {"main" | "descendants" | "combined": (total, private, shared)}
    in bytes, None where unknown.

    `procs` are the sample's rows of the `process` view (pid, rss_bytes, shared_bytes, uss_bytes, pss_bytes).
    Per process: private = USS (pages mapped by that process alone: smaps_rollup Private_*), shared = the pages
    it shares with at least one other process, RSS - USS. RSS (statm) and USS (smaps_rollup) are two reads a
    moment apart, so a process freeing memory between them (one exiting) would show its freed pages as
    shared: RSS - USS is capped at what can be shared, the resident file-backed and shmem pages (statm) plus
    twice its proportional share of shared pages (2 x (PSS - USS): anonymous pages shared after fork), both
    consistent with one read. PSS - USS is taken from the smaps_rollup read alone: a process growing between
    the two reads has a USS above its RSS, and PSS less that RSS would count its growth as shared. For a group (descendants, combined): private = the sum of the USS (each such
    page belongs to one process: exact); shared = the larger of two lower bounds of the group's shared pages
    counted once: the largest single member's, and the group's proportional share, sum(PSS - USS) (a page
    shared by k processes, all in the group, counts k x 1/k = once). It is exact when the members' shared pages
    nest (forked workers sharing their parent's pages, interpreters sharing the same libraries) or are shared
    only inside the group, and never counts a page twice. total = private + shared, gpu_tracker's definition.
    A member whose USS could not be read (another user's process, one exiting) makes the group's private and
    shared unknown; total is then the sum of RSS (an upper bound).

    The lead may switch this to the summary's private/shared split once the C summary has it; nothing else
    in the drop-in computes memory.
    """
    main = None
    for r in procs:
        if r.get("pid") is not None and int(r["pid"]) == root_pid:
            main = r
    desc = [r for r in procs if r is not main]

    def parts(r):
        """(rss, private, shared, proportional shared) of one process, None where unknown"""
        rss, uss, pss = r.get("rss_bytes"), r.get("uss_bytes"), r.get("pss_bytes")
        if rss is None or uss is None or pss is None:
            return rss, None, None, None
        prop = max(pss - uss, 0.0)  # PSS and USS are one read (smaps_rollup): consistent with each other
        uss = min(uss, rss)  # RSS (statm) was read before it: a process growing meanwhile has USS above RSS
        shared = rss - uss
        if r.get("shared_bytes") is not None:
            shared = min(shared, r["shared_bytes"] + 2 * prop)
        return rss, uss, shared, prop

    def one(r):
        rss, private, shared, _ = parts(r)
        if private is None:
            return (rss, None, None)
        return (private + shared, private, shared)

    def group(rs):
        if not rs:
            return (0.0, 0.0, 0.0)
        ps = [parts(r) for r in rs]
        if any(p[0] is None for p in ps):
            return (None, None, None)
        if any(p[1] is None for p in ps):
            return (sum(p[0] for p in ps), None, None)
        private = sum(p[1] for p in ps)
        shared = max(max(p[2] for p in ps), sum(p[3] for p in ps))
        return (private + shared, private, shared)

    return {
        "main": one(main) if main is not None else (0.0, 0.0, 0.0),
        "descendants": group(desc),
        "combined": group(list(procs)),
    }


PROCESS_COLUMNS = {"pid", "rss_bytes", "shared_bytes", "uss_bytes", "pss_bytes", "threads", "utime_s", "stime_s"}
TREE_COLUMNS = {"unix_s", "dt_s", "cpu_cores"}
GPU_COLUMNS = {"vendor", "gpu", "util_fraction", "mem_used_bytes", "mem_total_bytes", "job_mem_bytes",
               "job_mem_main_bytes", "job_mem_descendants_bytes"}


def _num(v):
    return None if v is None else float(v)


def _sum(vals):
    vals = [v for v in vals if v is not None]
    return sum(vals) if vals else None


def load(path, summary, root_pid, embedded, gpu_brand=None, gpu_uuids=None, stop_helper=False):
    """The timepoints of the recording at `path`: a list of dicts, one per sample, in base units (bytes,
    percent, counts, Unix seconds), with gpu_tracker's field names:

      main_ram, descendants_ram, combined_ram      total RSS (ram_split), and main_private_ram, ..._shared_ram
      system_ram                                   the host's memory in use (MemTotal - MemAvailable)
      main_gpu_ram, descendants_gpu_ram, combined_gpu_ram, system_gpu_ram   device memory (bytes)
      gpu_sum_utilization_percent                  the tracked GPUs' utilisation, summed (percent)
      main_n_threads, descendants_n_threads, combined_n_threads
      cpu_system_sum_utilization_percent, cpu_{main,descendants,combined}_sum_utilization_percent
      timestamp

    `summary` is the run's summary (GPU devices and their UUIDs); `embedded`: the root is the process that runs
    the monitor, whose thread (the process view leaves it out) and, at the closing sample, the thread waiting
    in stop() when `stop_helper` are not counted; `gpu_brand` keeps that vendor's GPUs; `gpu_uuids` the GPUs whose utilisation is summed.
    Values that could not be measured are None."""
    procs = _views.by_sample(_views.rows(path, "process", PROCESS_COLUMNS))
    tree = {int(r["sample"]): r for r in _views.rows(path, "tree", TREE_COLUMNS) if r.get("sample") is not None}
    system = {int(r["sample"]): r for r in _views.rows(path, "system") if r.get("sample") is not None}
    has_gpus = bool(((summary or {}).get("gpu") or {}).get("devices"))
    gpus = _views.by_sample(_views.rows(path, "gpu", GPU_COLUMNS)) if has_gpus else {}
    final = {int(s) for (s,) in _views.query(path, "SELECT sample FROM samples WHERE final = 1")}
    mon = {}
    if embedded:  # the monitor thread's CPU (self table, µs), taken off the main process's
        mon = {int(s): (u or 0) / 1e6 + (t or 0) / 1e6
               for s, u, t in _views.query(path, "SELECT sample, utime_us, stime_us FROM self")}
    uuid_of = {(d.get("vendor"), d.get("index")): d.get("uuid") for d in ((summary or {}).get("gpu") or {})
               .get("devices") or []}
    ncpu = None
    out = []
    prev_main = None
    for s in sorted(tree):
        t, sy = tree[s], system.get(s, {})
        if ncpu is None:
            ncpu = sum(1 for k in sy if k.startswith("cpu") and k[3:4].isdigit() and k.endswith("_util_fraction"))
        ps = procs.get(s, [])
        ram = ram_split(ps, root_pid)
        tp = {}
        for who in ("main", "descendants", "combined"):
            total, private, shared = ram[who]
            tp[f"{who}_ram"] = total
            tp[f"{who}_private_ram"] = private
            tp[f"{who}_shared_ram"] = shared
        tp["system_ram"] = _num(sy.get("mem_used_bytes"))
        tp["system_ram_total"] = _num(sy.get("mem_total_bytes"))
        # GPUs: this sample's devices of the brand
        devs = [g for g in gpus.get(s, []) if gpu_brand is None or g.get("vendor") == gpu_brand]
        tp["system_gpu_ram"] = _sum(g.get("mem_used_bytes") for g in devs)
        tp["main_gpu_ram"] = _sum(g.get("job_mem_main_bytes") for g in devs)
        tp["descendants_gpu_ram"] = _sum(g.get("job_mem_descendants_bytes") for g in devs)
        tp["combined_gpu_ram"] = _sum(g.get("job_mem_bytes") for g in devs)
        tp["gpu_ram_total"] = _sum(g.get("mem_total_bytes") for g in devs)
        tracked = [g for g in devs
                   if not gpu_uuids or uuid_of.get((g.get("vendor"), g.get("gpu"))) in gpu_uuids]
        util = [g.get("util_fraction") for g in tracked]
        tp["gpu_sum_utilization_percent"] = (None if not tracked or any(u is None for u in util)
                                             else 100.0 * sum(util))
        tp["gpu_devices"] = len(devs)
        # threads: the monitor's own thread is already off the process view's count (the model takes it off
        # the embedding process's row); stop()'s thread waiting at the closing sample is not the job's either
        main_row = next((r for r in ps if r.get("pid") is not None and int(r["pid"]) == root_pid), None)
        mt = main_row.get("threads") if main_row else 0
        if main_row and mt is not None and embedded and stop_helper and s in final:
            mt -= 1
        dt = [r.get("threads") for r in ps if r is not main_row]
        tp["main_n_threads"] = None if mt is None else int(max(mt, 0))
        tp["descendants_n_threads"] = int(sum(x for x in dt if x is not None))
        tp["combined_n_threads"] = None if mt is None else tp["main_n_threads"] + tp["descendants_n_threads"]
        # CPU: the system's busy share of its CPUs; the scope's rate (exact); the root's own rate
        u = sy.get("cpu_util_fraction")
        tp["cpu_system_sum_utilization_percent"] = None if u is None or not ncpu else 100.0 * u * ncpu
        comb = t.get("cpu_cores")
        dts = t.get("dt_s")
        main_cpu = None
        if main_row and main_row.get("utime_s") is not None and main_row.get("stime_s") is not None:
            main_cpu = main_row["utime_s"] + main_row["stime_s"] - mon.get(s, 0.0)
        main_rate = None
        if main_cpu is not None and prev_main is not None and dts:
            main_rate = max(main_cpu - prev_main, 0.0) / dts
        if main_cpu is not None:
            prev_main = main_cpu
        tp["cpu_combined_sum_utilization_percent"] = None if comb is None else 100.0 * comb
        tp["cpu_main_sum_utilization_percent"] = None if main_rate is None else 100.0 * main_rate
        tp["cpu_descendants_sum_utilization_percent"] = (
            None if comb is None or main_rate is None else 100.0 * max(comb - main_rate, 0.0))
        tp["timestamp"] = _num(t.get("unix_s"))
        tp["sample"] = s
        out.append(tp)
    return out, (ncpu or None)
