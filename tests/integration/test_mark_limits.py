# SPDX-License-Identifier: MIT
"""Whatever `jobscope mark` accepts, the report renders (docs/RELIABILITY.md, "shared node", 7).

Before the fix a mark's data that was a JSON number of 64 digits or more, or nested 61 to 64 levels deep,
made `report` and `compare` fail ("cannot build the report: Invalid argument") and `run --report` leave a
0-byte page. The limits of mark data are documented in docs/PHASES.md: at most 4096 bytes, nested at most 64
levels; beyond them `jobscope mark` refuses with exit 2 before sending anything.
"""
import json

from conftest import assert_no_crash


def test_report_renders_any_mark_data(js):
    big = "9" * 4000
    deep_arr = "[" * 64 + "1" + "]" * 64
    deep_obj = '{"a":' * 64 + '"x"' + "}" * 64
    script = js.path("marks.sh")
    lines = [f"{js.binary} mark event big --data {big}",
             f"{js.binary} mark event huge --data 1e999",
             f"{js.binary} mark event deep61 --data '{'[' * 61}{']' * 61}'",
             f"{js.binary} mark event deeparr --data '{deep_arr}'",
             f"{js.binary} mark event deepobj --data '{deep_obj}'",
             f"{js.binary} mark begin phase --data {big}",
             f"{js.binary} mark end phase --data '{deep_obj}'",
             "sleep 0.3"]
    script.write_text("set -e\n" + "\n".join(lines) + "\n")
    page = js.path("r.html")
    r = js.run(["/bin/sh", str(script)], interval="0.1s", extra=[f"--report={page}"])
    assert r.returncode == 0, r.proc.stderr
    assert page.stat().st_size > 10000
    text = page.read_text()
    for name in ("big", "huge", "deep61", "deeparr", "deepobj"):
        assert f">{name}<" in text
    s = js.summary_json(r.recording)
    ev = {e["name"]: e for e in s["phases"]["events"]}
    assert ev["big"]["last_data"] == int(big)
    assert json.dumps(ev["deeparr"]["last_data"], separators=(",", ":")) == deep_arr
    p = js("report", r.recording, "-o", js.path("again.html"))
    assert_no_crash(p)
    assert p.returncode == 0, p.stderr
    p = js("compare", r.recording, r.recording, "-o", js.path("cmp.html"))
    assert_no_crash(p)
    assert p.returncode == 0, p.stderr
    assert js.path("cmp.html").stat().st_size > 10000


def test_mark_refuses_beyond_the_limits(js):
    too_deep = "[" * 65 + "]" * 65
    for data in (too_deep, "1" * 4097):
        p = js("mark", "event", "x", "--data", data)
        assert_no_crash(p)
        assert p.returncode == 2, (p.returncode, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1
