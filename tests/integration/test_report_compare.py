# SPDX-License-Identifier: MIT
"""`jobscope compare` of two real recordings with phases and events (issue 24): both runs' phases by name, and
both runs' events side by side (number, time from the run's start, name, JSON data), bounded.

- A: a training-like run, a phase `train` holding three `epoch` events with their data ({"epoch": N, "loss": L}).
- B: a phase `train` holding 60 `step` events: more than the 50 (first 25, last 25) listed, so the page says
  how many were left out between them and lists the first and last ones.

Marks are sent by the real `jobscope mark` client to the monitor of the run; nothing here depends on timing.
"""
import html
import re

from conftest import assert_no_crash


def run_with_marks(js, jobscope_bin, name, events):
    """Record `sh` marking a phase `train` around `events` (name, JSON data) events."""
    marks = "; ".join(f"{jobscope_bin} mark event {n} --data '{d}'" for n, d in events)
    script = f"set -e; {jobscope_bin} mark begin train; {marks}; sleep 0.3; {jobscope_bin} mark end train"
    r = js.run(["sh", "-c", script], interval="0.1s", name=name)
    assert r.returncode == 0, r.proc.stderr
    return r


def section(text, sid):
    s = text[text.index(f'id="{sid}"'):]
    return s[:s.index("</section>")]


def rows_of(sec):
    """The table's body rows, each a list of its cells' text."""
    body = sec[sec.index("<tbody>"):]
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def test_compare_lists_both_runs_events(js, jobscope_bin):
    a_events = [("epoch", f'{{"epoch": {i}, "loss": {1 / i:.3f}}}') for i in range(1, 4)]
    b_events = [("step", f'{{"i": {i}}}') for i in range(1, 61)]
    a = run_with_marks(js, jobscope_bin, "a", a_events)
    b = run_with_marks(js, jobscope_bin, "b", b_events)
    out = js.path("cmp.html")
    p = js("compare", a.recording, b.recording, "-o", out)
    assert_no_crash(p)
    assert p.returncode == 0, p.stderr
    text = out.read_text(encoding="utf-8")

    phases = rows_of(section(text, "phases"))
    assert [c[0] for c in phases] == ["train"], phases

    sec = section(text, "events")
    intro = html.unescape(re.sub(r"<[^>]+>", "", sec))
    assert "3 events in A, 60 in B" in intro, intro
    assert "the first and the last 25 are listed" in intro, intro
    rows = rows_of(sec)
    # A's three events, in order, with their data, beside B's first three
    for i, (name, data) in enumerate(a_events):
        num, t, ev, d = rows[i][:4]
        assert (num, ev, d) == (str(i + 1), name, data), rows[i]
        assert t.endswith("s"), rows[i]
        assert rows[i][4:7:2] == [str(i + 1), "step"], rows[i]
        assert rows[i][7] == b_events[i][1], rows[i]
    # B: events 1..25, a row for the 10 left out, 36..60; A's columns empty past its third
    bnums = [r[-4] for r in rows if len(r) == 8]
    assert bnums == [str(i) for i in range(1, 26)] + [str(i) for i in range(36, 61)], bnums
    assert any("10 more events" in " ".join(r) for r in rows), rows
    assert rows[-1][-4:] == ["60", rows[-1][-3], "step", '{"i": 60}'], rows[-1]
    assert all(c == "" for c in rows[5][:4]), rows[5]


def test_compare_without_events_has_no_events_section(js):
    a = js.run(["sleep", "0.3"], interval="0.1s", name="plain")
    assert a.returncode == 0, a.proc.stderr
    out = js.path("plain.html")
    p = js("compare", a.recording, a.recording, "-o", out)
    assert p.returncode == 0, p.stderr
    assert 'id="events"' not in out.read_text(encoding="utf-8")
