# SPDX-License-Identifier: MIT
"""The report's charts and events in headless Chromium (issue 24), on a real recording of a job that burns CPU
and sends three events with data (`jobscope mark event epoch --data '{"epoch": N, "loss": L}'`).

- Events: each event's data is in the Events table (time from the start, name, data) and in the <title> of its
  mark on the charts; hovering or tapping a chart where an event is shows its data in the tooltip.
- Perf: a counter the machine could not open (the summary's perf.missing) or one that is zero throughout is not
  drawn; one line names the unavailable ones; nanosecond counters are drawn as cores, never as "events".
- Legends in words, not raw column names (no '_'); y labels never cut (each lies inside its picture).
- The CPU heat map has the line charts' plot box and time axis.
- At 390 px: nothing overflows, every chart's text renders at 10 px or more, and a tap on a chart shows values.
"""
import json
import re

import pytest

import chromium
from conftest import PYTHON, WORKLOADS, Jobscope

BURN = str(WORKLOADS / "burn.py")

# every visible text of the charts' SVGs: its rendered size (CSS font size times the picture's scale) and
# whether its box lies inside the picture's
TEXTS = ("[...document.querySelectorAll('figure.chart svg.ch text')].filter(t => {"
         " const r = t.getBoundingClientRect(); return r.width > 0 && getComputedStyle(t).display !== 'none'; })"
         ".map(t => { const svg = t.ownerSVGElement, s = svg.getBoundingClientRect(), r = t.getBoundingClientRect();"
         " return {text: t.textContent, cls: t.getAttribute('class') || t.parentNode.getAttribute('class') || '',"
         " px: parseFloat(getComputedStyle(t).fontSize) * svg.getScreenCTM().a,"
         " inside: r.left >= s.left - 0.5 && r.right <= s.right + 0.5,"
         " fig: t.closest('figure').id}; })")


@pytest.fixture(scope="module")
def events_run(jobscope_bin, tmp_path_factory):
    js = Jobscope(jobscope_bin, tmp_path_factory.mktemp("charts"))
    marks = " ".join(f"{PYTHON} {BURN} 0.5; {jobscope_bin} mark event epoch --data '{{\"epoch\": {i}, "
                     f"\"loss\": 0.{9 - i}}}';" for i in (1, 2, 3))
    r = js.run(["sh", "-c", f"set -e; {marks}"], interval="0.2s", name="events")
    assert r.returncode == 0, r.proc.stderr
    p = js("report", r.recording)
    assert p.returncode == 0, p.stderr
    return r, js.path("events.html")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not chromium.available():
        pytest.skip(f"{chromium.CHROMIUM} not installed")
    b = chromium.Browser(tmp_path_factory.mktemp("chromium"))
    yield b
    b.close()


def chart_data(page, fig_id):
    return json.loads(page.evaluate(f"document.querySelector('#{fig_id} script.cd').textContent"))


def test_event_data_in_table_and_title(events_run, browser):
    _, path = events_run
    page = browser.page(1400, 900)
    page.load(path.as_uri())
    rows = page.evaluate("[...document.querySelectorAll('#events table.events tbody tr')]"
                         ".map(tr => [...tr.children].map(c => c.textContent))")
    assert [r[1] for r in rows] == ["epoch"] * 3, rows
    data = [json.loads(r[2]) for r in rows]
    assert data == [{"epoch": 1, "loss": 0.8}, {"epoch": 2, "loss": 0.7}, {"epoch": 3, "loss": 0.6}], rows
    assert all(re.fullmatch(r"[0-9.]+ s", r[0]) for r in rows), rows
    titles = page.evaluate("[...document.querySelectorAll('#cpu g.ev title')].map(t => t.textContent)")
    assert len(titles) == 3 and '"loss":0.7' in titles[1].replace(" ", ""), titles
    # hovering the chart where the second event is: the tooltip shows its data
    page.evaluate("document.querySelector('#cpu svg').scrollIntoView({block: 'center'})")
    x = page.evaluate("(() => { const g = document.querySelectorAll('#cpu g.ev')[1].querySelector('line');"
                      " const r = g.getBoundingClientRect(); return r.left + r.width / 2; })()")
    y = page.evaluate("(() => { const r = document.querySelector('#cpu svg').getBoundingClientRect();"
                      " return r.top + r.height / 2; })()")
    page.mouse("mouseMoved", x, y)
    tip = page.evaluate("document.querySelector('.tip').hidden ? '' : document.querySelector('.tip').textContent")
    assert '"epoch":2' in tip.replace(" ", ""), tip
    page.collect()
    assert page.errors == [] and page.requests == []


def test_perf_charts_draw_only_counters_that_count(events_run, browser):
    r, path = events_run
    perf = (r.summary or {}).get("perf") or {}
    page = browser.page(1400, 900)
    page.load(path.as_uri())
    figs = page.evaluate("[...document.querySelectorAll('figure.chart')].map(f => f.id)")
    perf_figs = [f for f in figs if f.startswith("perf-")]
    if not perf.get("events"):
        assert perf_figs == [], figs
        pytest.skip("no perf counter opened on this machine")
    assert not any(f.startswith("v-perf-") for f in figs), figs  # the raw columns are not charted
    drawn = []
    for f in perf_figs:
        d = chart_data(page, f)
        for s in d["s"]:
            drawn.append(s["n"])
            vals = [v for v in s["v"] if v is not None]
            assert vals and any(v != 0 for v in vals), (f, s["n"])  # never all missing nor all zero
    missing = perf.get("missing") or {}
    for name in missing:
        human = name.replace("_ns", "").replace("_", " ")
        assert not any(human.lower() == n.lower() for n in drawn), (name, drawn)
    line = page.evaluate("(document.querySelector('p.perf-none') || {}).textContent || ''")
    if missing:
        assert line.startswith("Counters unavailable on this machine"), line
        assert "cycles" in line or len(missing) and list(missing)[0].split("_")[0] in line.lower(), line
    # nanoseconds as cores, never "events"
    if "task_clock_ns" in perf["events"]:
        d = chart_data(page, "perf-time")
        assert d["u"]["s"] == "cores" and any(s["n"] == "task clock" for s in d["s"]), d["u"]
        caption = page.evaluate("document.querySelector('#perf-time figcaption').textContent")
        assert "events" not in caption and "cores" in caption, caption
        busy = max(v for s in d["s"] for v in s["v"] if v is not None)
        assert 0.3 < busy < 4, busy  # a burn of one core, sampled at 0.2 s
    page.collect()
    assert page.errors == []


def test_legends_in_words_and_y_labels_whole(events_run, browser):
    _, path = events_run
    page = browser.page(1400, 900)
    page.load(path.as_uri())
    legends = page.evaluate("[...document.querySelectorAll('.lg button')].map(b => b.textContent)")
    raw = [n for n in legends if re.search(r"[a-z]_[a-z]", n)]
    assert legends and raw == [], raw
    texts = page.evaluate(TEXTS)
    cut = [t for t in texts if "yl" in t["cls"] and not t["inside"]]
    assert [t for t in texts if "yl" in t["cls"]] and cut == [], cut[:5]
    # the y labels of each chart are distinct (no "0M, 0M, 0M")
    by_fig = {}
    for t in texts:
        if "yl" in t["cls"]:
            by_fig.setdefault(t["fig"], []).append(t["text"])
    assert all(len(set(v)) == len(v) for v in by_fig.values()), by_fig


def test_heat_map_aligned_with_charts(events_run, browser):
    _, path = events_run
    page = browser.page(1400, 900)
    page.load(path.as_uri())
    if not page.evaluate("!!document.getElementById('cpu-heat')"):
        pytest.skip("a single CPU: no heat map")
    line, heat = chart_data(page, "cpu"), chart_data(page, "cpu-heat")
    assert heat["box"][0] == line["box"][0] and heat["box"][2] == line["box"][2], (heat["box"], line["box"])
    assert heat["t"] == line["t"], (heat["t"], line["t"])
    lx = page.evaluate("document.querySelector('#cpu svg').getBoundingClientRect().left")
    hx = page.evaluate("document.querySelector('#cpu-heat svg').getBoundingClientRect().left")
    assert abs(lx - hx) < 0.5


def test_phone_chart_text_legible_and_tap_details(events_run, browser):
    _, path = events_run
    page = browser.page(390, 844)
    page.load(path.as_uri())
    width = page.evaluate("({doc: document.documentElement.scrollWidth, inner: window.innerWidth})")
    assert width["doc"] <= 390 and width["inner"] == 390, width
    wide = page.evaluate("[...document.querySelectorAll('body *')].filter(e => {"
                         " const r = e.getBoundingClientRect(); if (r.width === 0) return false;"
                         " for (let p = e.parentElement; p; p = p.parentElement)"
                         "   if (getComputedStyle(p).overflowX !== 'visible') return false;"
                         " return r.right > 390.5; }).slice(0, 5).map(e => e.tagName + '.' + e.className)")
    assert wide == [], wide
    texts = page.evaluate(TEXTS)
    small = [t for t in texts if t["px"] < 9.95]
    assert texts and small == [], small[:5]
    cut = [t for t in texts if t["cls"] in ("yl", "bl") and not t["inside"]]
    assert cut == [], cut[:5]
    # a tap in the middle of the first chart shows the values there
    page.evaluate("document.querySelector('#cpu svg').scrollIntoView({block: 'center'})")
    box = page.evaluate("(() => { const r = document.querySelector('#cpu svg').getBoundingClientRect();"
                        " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()")
    page.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 1})
    page.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [box]})
    page.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    tip = page.evaluate("document.querySelector('.tip').hidden ? '' : document.querySelector('.tip').textContent")
    assert "cores in use" in tip and "cores" in tip.split("cores in use", 1)[1], tip
    page.collect()
    assert page.errors == [], page.errors
