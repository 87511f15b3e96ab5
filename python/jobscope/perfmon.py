# SPDX-License-Identifier: MIT
"""SKA SDP perfmon's exports through pandas, for `jobscope perfmon -e pickle|parquet|feather|orc`.

`jobscope perfmon` writes perfmon's dataframes (cpu_metrics and perf_metrics: one row per host and timestamp,
perfmon's column headers) itself as CSV and HDF5; the formats whose writers live in Python are made here from
those dataframes:

    python3 -m jobscope.perfmon convert pickle|parquet|feather|orc SRC_DIR DEST_DIR

reads SRC_DIR/cpu_metrics.csv and SRC_DIR/perf_metrics.csv and writes DEST_DIR/cpu_metrics.EXT and
DEST_DIR/perf_metrics.EXT (pkl, parquet, feather, orc), each whole or not at all. pickle needs only pandas;
parquet needs pyarrow or fastparquet, feather and orc need pyarrow: where the engine is not installed (Debian 12
packages neither), one line says so on stderr, the exit status is 3 and no file is written.

    import jobscope.perfmon
    df = jobscope.perfmon.read_hdf("metrics.h5", "cpu_metrics_1234")   # perfmon's headers as columns
"""
import importlib.util
import os
import sys

FORMATS = {"pickle": "pkl", "parquet": "parquet", "feather": "feather", "orc": "orc"}
FRAMES = ("cpu_metrics", "perf_metrics")


def engine_missing(fmt):
    """Why `fmt` cannot be written here (one line), or None when it can."""
    if importlib.util.find_spec("pandas") is None:
        return "pandas is not installed (Debian: python3-pandas)"
    if fmt == "parquet":
        if importlib.util.find_spec("pyarrow") is None and importlib.util.find_spec("fastparquet") is None:
            return "parquet needs pyarrow or fastparquet, and neither is installed (Debian 12 packages neither)"
    elif fmt in ("feather", "orc"):
        if importlib.util.find_spec("pyarrow") is None:
            return f"{fmt} needs pyarrow, which is not installed (Debian 12 does not package it)"
    return None


def convert(fmt, src, dest):
    """Write perfmon's dataframes in SRC (CSV) as DEST/NAME.EXT in format `fmt`. Raises ValueError for an
    unknown format and RuntimeError when its engine is missing (nothing written then)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (pickle, parquet, feather, orc)")
    why = engine_missing(fmt)
    if why:
        raise RuntimeError(why)
    import pandas as pd

    frames = {name: pd.read_csv(os.path.join(src, name + ".csv")) for name in FRAMES}
    written = []
    try:
        for name, df in frames.items():
            out = os.path.join(dest, f"{name}.{FORMATS[fmt]}")
            tmp = os.path.join(dest, f".{name}.{FORMATS[fmt]}.{os.getpid()}.tmp")
            if fmt == "pickle":
                df.to_pickle(tmp)
            elif fmt == "parquet":
                df.to_parquet(tmp, index=False)
            elif fmt == "feather":
                df.to_feather(tmp)
            else:
                df.to_orc(tmp, index=False)
            written.append((tmp, out))
        for tmp, out in written:
            os.replace(tmp, out)
    finally:
        for tmp, _ in written:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return [out for _, out in written]


def read_hdf(path, key):
    """Group `key` (cpu_metrics_JOBID or perf_metrics_JOBID) of the metrics.h5 that `jobscope perfmon -e hdf5`
    writes, as a pandas DataFrame with perfmon's headers as columns (needs h5py)."""
    import h5py
    import pandas as pd

    with h5py.File(path, "r") as f:
        g = f[key]
        cols = [c.decode() if isinstance(c, bytes) else c for c in g.attrs["columns"]][1:]  # "sample" first
        data = {}
        for c in cols:
            d = g[c]
            header = d.attrs.get("help", c)
            header = header.decode() if isinstance(header, bytes) else header
            values = d[()]
            if values.dtype.kind in "OS":
                values = [v.decode() if isinstance(v, bytes) else v for v in values]
            data[header] = values
        return pd.DataFrame(data)


def main(argv):
    if len(argv) != 5 or argv[1] != "convert":
        print("usage: python3 -m jobscope.perfmon convert pickle|parquet|feather|orc SRC_DIR DEST_DIR",
              file=sys.stderr)
        return 2
    try:
        for out in convert(argv[2], argv[3], argv[4]):
            print(out)
    except (ValueError, RuntimeError) as e:
        print(f"jobscope perfmon: {argv[2]} export: {e}", file=sys.stderr)
        return 3
    except OSError as e:
        print(f"jobscope perfmon: {argv[2]} export: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
