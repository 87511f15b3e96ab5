# SPDX-License-Identifier: MIT
"""gpu_tracker's API on jobscope's monitor: change `import gpu_tracker` to `import jobscope.gpu_tracker` (or
call jobscope.compat.install() and change nothing).

    import jobscope.gpu_tracker as gput
    with gput.Tracker(sleep_time=0.5) as tracker:
        with gput.SubTracker(code_block_name="load"):
            load()
    print(tracker)

Modules as gpu_tracker 5.0.1 lays them out: `tracker` (Tracker and the ResourceUsage data classes),
`sub_tracker` (SubTracker, sub_track, SubTrackingAnalyzer, TrackingComparison and their results), and the
command line (`python3 -m jobscope.gpu_tracker --execute CMD ...`). docs/PYTHON.md lists every item with
its jobscope equivalent and the differences.
"""
from .sub_tracker import (CodeBlockResults, ComparisonResults, SubTracker, SubTrackingAnalyzer, SubTrackingResults,
                          TrackingComparison, sub_track)
from .tracker import (ComputeTime, CPUUtilization, GPUUtilization, MaxGPURAM, MaxRAM, ProcessingUnitPercentages,
                      ResourceUsage, RSSValues, Tracker)

__version__ = "5.0.1+jobscope"

__all__ = ["Tracker", "SubTracker", "sub_track", "SubTrackingAnalyzer", "TrackingComparison", "ResourceUsage",
           "MaxRAM", "RSSValues", "MaxGPURAM", "CPUUtilization", "ProcessingUnitPercentages", "GPUUtilization",
           "ComputeTime", "SubTrackingResults", "CodeBlockResults", "ComparisonResults"]
