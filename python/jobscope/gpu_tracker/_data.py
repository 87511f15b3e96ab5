# SPDX-License-Identifier: MIT
"""gpu_tracker's tracking and sub-tracking files: CSV or SQLite, written with the standard library.

Formats (gpu_tracker 5.0.1's, so its files and ours are interchangeable):

- A tracking file (Tracker(tracking_file=...)). CSV: a header and one row of static data (units, capacities,
  counts), then a header and one row per timepoint. SQLite: the same in tables `static_data` and `data`.
- A sub-tracking file (SubTracker): one row per code-block start or stop, columns process_id,
  code_block_name, position (0 start, 1 stop), timestamp (Unix seconds); CSV, or SQLite table `data`.

Column types in SQLite follow the Python value (str VARCHAR, int INTEGER, float FLOAT); a value that could not
be measured is an empty CSV cell or NULL. Reading (for the analysis) goes through pandas.
"""
import csv
import os
import sqlite3

STATIC_FIELDS = ["ram_unit", "gpu_ram_unit", "time_unit", "ram_system_capacity", "gpu_ram_system_capacity",
                 "system_core_count", "n_expected_cores", "system_gpu_count", "n_expected_gpus"]
TIMEPOINT_FIELDS = [
    "main_ram", "descendants_ram", "combined_ram", "system_ram", "main_gpu_ram", "descendants_gpu_ram",
    "combined_gpu_ram", "system_gpu_ram", "gpu_sum_utilization_percent", "gpu_hardware_utilization_percent",
    "main_n_threads", "descendants_n_threads", "combined_n_threads", "cpu_system_sum_utilization_percent",
    "cpu_system_hardware_utilization_percent", "cpu_main_sum_utilization_percent",
    "cpu_main_hardware_utilization_percent", "cpu_descendants_sum_utilization_percent",
    "cpu_descendants_hardware_utilization_percent", "cpu_combined_sum_utilization_percent",
    "cpu_combined_hardware_utilization_percent", "timestamp"]
SUB_TRACKING_FIELDS = ["process_id", "code_block_name", "position", "timestamp"]
INT_FIELDS = {"system_core_count", "n_expected_cores", "system_gpu_count", "n_expected_gpus", "main_n_threads",
              "descendants_n_threads", "combined_n_threads", "process_id", "position"}
STR_FIELDS = {"ram_unit", "gpu_ram_unit", "time_unit", "code_block_name"}

DATA_TABLE, STATIC_TABLE = "data", "static_data"

# files this process has started writing rows to (a second SubTracker on the same file appends)
_files_with_data = set()


def _sql_type(field):
    return "VARCHAR" if field in STR_FIELDS else "INTEGER" if field in INT_FIELDS else "FLOAT"


def create(file, overwrite=False):
    """The proxy of `file` (".csv" or ".sqlite"), or None for None. ValueError for another extension."""
    if file is None:
        return None
    file = os.fspath(file)
    if file.endswith(".csv"):
        return CSVData(file, overwrite)
    if file.endswith(".sqlite"):
        return SQLiteData(file, overwrite)
    raise ValueError(f'Invalid file name: "{file}". Valid file extensions are ".csv" and ".sqlite".')


class _Data:
    extension = ""

    def __init__(self, file, overwrite):
        self.file = file
        self.overwrite = overwrite

    def check_overwrite(self):
        """Remove the file when overwrite, else FileExistsError if it exists."""
        if os.path.lexists(self.file):
            if self.overwrite:
                os.remove(self.file)
            else:
                raise FileExistsError(f"File {self.file} already exists. Set overwrite to True to overwrite the "
                                      "existing file.")

    def append(self, row, fields):
        """One row (a sub-tracking record): the first row this process writes to the file checks overwrite
        and creates the table; later ones append. FileNotFoundError when the file vanished in between."""
        key = os.path.abspath(self.file)
        if key not in _files_with_data:
            self.check_overwrite()
            self._create(DATA_TABLE, fields)
            _files_with_data.add(key)
        elif not os.path.isfile(self.file):
            raise FileNotFoundError(f"The file {self.file} was removed in the middle of writing data to it.")
        self._insert(DATA_TABLE, fields, [row])

    def write_tracking(self, static, rows):
        """A whole tracking file: the static data, then every timepoint row (the file is replaced)."""
        if os.path.lexists(self.file):
            os.remove(self.file)
        self._create(STATIC_TABLE, STATIC_FIELDS)
        self._insert(STATIC_TABLE, STATIC_FIELDS, [static])
        self._create(DATA_TABLE, TIMEPOINT_FIELDS)
        self._insert(DATA_TABLE, TIMEPOINT_FIELDS, rows)

    # ---- reading (pandas) ---------------------------------------------------------------------------------

    def combine(self, files):
        """Concatenate sub-tracking `files` (same extension) into this new file."""
        if os.path.exists(self.file):
            raise ValueError(f"Cannot create sub-tracking file {self.file}. File already exists.")
        for f in files:
            if not os.fspath(f).endswith(self.extension):
                raise ValueError(f'File {f} does not end with the same extension as {self.file}. Must end in '
                                 f'"{self.extension}".')
        self._combine([os.fspath(f) for f in files])


class CSVData(_Data):
    extension = ".csv"

    def _create(self, table, fields):
        with open(self.file, "a", newline="") as f:
            csv.writer(f).writerow(fields)

    def _insert(self, table, fields, rows):
        with open(self.file, "a", newline="") as f:
            w = csv.writer(f)
            for r in rows:
                w.writerow(["" if r.get(k) is None else r[k] for k in fields])

    def static(self, pd):
        return pd.read_csv(self.file, header=0, nrows=1)

    def timepoints(self, pd):
        return pd.read_csv(self.file, skiprows=2)

    def records(self, pd):
        return pd.read_csv(self.file)

    def _combine(self, files):
        with open(self.file, "w", newline="") as out:
            w = csv.writer(out)
            header = None
            for f in files:
                with open(f, newline="") as src:
                    r = csv.reader(src)
                    h = next(r, None)
                    if h is None:
                        continue
                    if header is None:
                        header = h
                        w.writerow(h)
                    for row in r:
                        w.writerow(row)


class SQLiteData(_Data):
    extension = ".sqlite"

    def _connect(self):
        return sqlite3.connect(self.file)

    def _create(self, table, fields):
        con = self._connect()
        try:
            cols = ", ".join(f'"{k}" {_sql_type(k)}' for k in fields)
            con.execute(f'CREATE TABLE IF NOT EXISTS "{table}" ({cols})')
            con.commit()
        finally:
            con.close()

    def _insert(self, table, fields, rows):
        con = self._connect()
        try:
            marks = ", ".join("?" for _ in fields)
            names = ", ".join(f'"{k}"' for k in fields)
            con.executemany(f'INSERT INTO "{table}" ({names}) VALUES ({marks})',
                            [[r.get(k) for k in fields] for r in rows])
            con.commit()
        finally:
            con.close()

    def _read(self, pd, sql, args=()):
        con = sqlite3.connect(self.file)
        try:
            return pd.read_sql_query(sql, con, params=args)
        finally:
            con.close()

    def static(self, pd):
        return self._read(pd, f'SELECT * FROM "{STATIC_TABLE}"')

    def timepoints(self, pd):
        return self._read(pd, f'SELECT * FROM "{DATA_TABLE}"')

    def records(self, pd):
        return self._read(pd, f'SELECT * FROM "{DATA_TABLE}"')

    def _combine(self, files):
        con = self._connect()
        try:
            created = False
            for f in files:
                con.execute("ATTACH DATABASE ? AS input_db", (f,))
                if not created:
                    con.execute(f'CREATE TABLE "{DATA_TABLE}" AS SELECT * FROM input_db."{DATA_TABLE}"')
                    created = True
                else:
                    con.execute(f'INSERT INTO "{DATA_TABLE}" SELECT * FROM input_db."{DATA_TABLE}"')
                con.commit()
                con.execute("DETACH DATABASE input_db")
        finally:
            con.close()
