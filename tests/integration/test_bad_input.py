# SPDX-License-Identifier: MIT
"""Bad input: a one-line error, a non-zero exit, no crash (issue 2, Integration: bad input).

Usage errors of `run` must also exit 2 before anything starts: no recording is created.
"""
import os
import shutil

import pytest

from conftest import PYTHON, assert_clean_error, assert_no_crash


def no_recordings(js):
    return [p.name for p in js.tmp.iterdir() if p.suffix == ".db" or ".db-" in p.name]


@pytest.mark.parametrize(
    "args",
    [
        ["--no-such-option"],
        ["frobnicate"],
        ["run", "--no-such-option", "--", "true"],
        ["run", "-x", "--", "true"],
        ["run", "--uss-every", "many", "--", "true"],
        ["run", "--uss-every", "-3", "--", "true"],
        ["summary", "--no-such-option", "x.db"],
        ["export", "--no-such-option", "x.db"],
        ["attach", "--no-such-option", "1"],
    ],
    ids=lambda a: " ".join(a),
)
def test_unknown_option(js, args):
    proc = js(*args, timeout=30)
    assert_clean_error(proc, rc=2)
    assert not no_recordings(js), f"a usage error created {no_recordings(js)}"


@pytest.mark.parametrize("interval", ["0", "abc", "10x", "-1", "", "0s", "1s2", "nan", "inf", "1e999"])
def test_bad_interval(js, interval):
    marker = js.path("command-ran")
    proc = js("run", "-i", interval, "--", "touch", marker, timeout=30)
    assert_clean_error(proc, rc=2)
    assert not marker.exists(), "COMMAND ran despite the bad interval"
    assert not no_recordings(js), f"a usage error created {no_recordings(js)}"


@pytest.mark.parametrize("interval", ["1ms", "5ms", "2h"])
def test_interval_outside_documented_range(js, interval):
    """The issue documents 10ms…1h as the accepted range."""
    proc = js("run", "-i", interval, "--", "true", timeout=30)
    assert_clean_error(proc, rc=2)


@pytest.mark.parametrize("interval", ["10ms", "0.5", "500ms", "2m", "1s", "1h"])
def test_good_interval_accepted(js, interval):
    proc = js("run", "-q", "-i", interval, "-o", js.path("ok.db"), "--", "true", timeout=60)
    assert_no_crash(proc)
    assert proc.returncode == 0, f"-i {interval} rejected: {proc.stderr}"


@pytest.mark.parametrize("args", [["run"], ["run", "--"], ["run", "-q"], ["run", "-i", "1s"], ["run", "-i"]],
                         ids=lambda a: " ".join(a))
def test_missing_command(js, args):
    proc = js(*args, timeout=30)
    assert_clean_error(proc, rc=2)
    assert not no_recordings(js)


@pytest.mark.parametrize("args", [["attach"], ["attach", "abc"], ["attach", "-5"], ["attach", "12x"]],
                         ids=lambda a: " ".join(a))
def test_attach_bad_pid(js, args):
    proc = js(*args, timeout=30)
    assert_clean_error(proc, rc=2)


def test_attach_nonexistent_pid(js):
    with open("/proc/sys/kernel/pid_max") as f:
        pid_max = int(f.read())
    proc = js("attach", "-o", js.path("a.db"), str(pid_max + 1000), timeout=30)
    assert_clean_error(proc)


def test_summary_and_export_need_a_file(js):
    assert_clean_error(js("summary", timeout=30), rc=2)
    assert_clean_error(js("export", "--format", "csv", timeout=30), rc=2)


# ---- files that are not (complete) recordings -------------------------------------------------------------


@pytest.fixture(scope="module")
def good_recording(jobscope_bin, tmp_path_factory):
    """A finished recording with a few hundred samples, so truncating it cuts real data."""
    from conftest import Jobscope, WORKLOADS

    d = tmp_path_factory.mktemp("good")
    js = Jobscope(jobscope_bin, d)
    r = js.run([PYTHON, str(WORKLOADS / "tree.py"), str(d), "2", "0.2", "1.0"], interval="0.01s", timeout=60)
    assert r.returncode == 0, r.proc.stderr
    return r.recording


def bad_files(tmp, good):
    files = {}
    p = tmp / "text.db"
    p.write_text("this is not a database\n" * 20)
    files["text"] = p
    p = tmp / "empty.db"
    p.write_bytes(b"")
    files["empty"] = p
    p = tmp / "random.db"
    p.write_bytes(os.urandom(8192))
    files["random"] = p
    p = tmp / "other.db"
    import sqlite3

    con = sqlite3.connect(p)
    con.execute("CREATE TABLE foo (a INTEGER)")
    con.execute("INSERT INTO foo VALUES (1)")
    con.commit()
    con.close()
    files["other-sqlite"] = p
    size = os.path.getsize(good)
    for name, length in (("half", size // 2), ("100b", 100), ("header-only", 4096)):
        p = tmp / f"trunc-{name}.db"
        shutil.copy(good, p)
        os.truncate(p, min(length, size - 1))
        files[f"truncated-{name}"] = p
    files["missing"] = tmp / "no-such-file.db"
    d = tmp / "a-directory.db"
    d.mkdir()
    files["directory"] = d
    return files


BAD_KINDS = ["text", "empty", "random", "other-sqlite", "truncated-half", "truncated-100b", "truncated-header-only",
             "missing", "directory"]

READERS = [
    ["summary"],
    ["summary", "--json"],
    ["export", "--format", "csv"],
    ["export", "--format", "jsonl"],
    ["export", "--format", "csv", "--scope", "process"],
    ["export", "--format", "csv", "--scope", "system"],
]


@pytest.mark.parametrize("kind", BAD_KINDS)
@pytest.mark.parametrize("reader", READERS, ids=lambda a: " ".join(a))
def test_bad_recording(js, good_recording, kind, reader):
    f = bad_files(js.tmp, good_recording)[kind]
    before = f.read_bytes() if f.is_file() else None
    proc = js(*reader, f, timeout=60)
    assert_clean_error(proc)
    if before is not None:
        assert f.read_bytes() == before, "a reader modified the file it was given"
    if kind == "missing":
        assert not f.exists(), "a reader created the missing file"


def test_export_unknown_format(js, good_recording):
    assert_clean_error(js("export", "--format", "xml", good_recording, timeout=30), rc=2)


def test_export_unknown_scope(js, good_recording):
    assert_clean_error(js("export", "--format", "csv", "--scope", "galaxy", good_recording, timeout=30), rc=2)


def test_export_without_format(js, good_recording):
    proc = js("export", good_recording, timeout=30)
    assert_no_crash(proc)
    # either a default format or a usage error; if an error, a clean one
    if proc.returncode != 0:
        assert_clean_error(proc, rc=2)


def test_export_to_uncreatable_file(js, good_recording):
    assert_clean_error(js("export", "--format", "csv", "-o", js.path("no/such/dir/out.csv"), good_recording, timeout=30))


def test_good_recording_still_reads(js, good_recording):
    """Sanity check for the fixture the bad-file tests corrupt copies of."""
    proc = js("summary", good_recording, timeout=30)
    assert_no_crash(proc)
    assert proc.returncode == 0, proc.stderr
