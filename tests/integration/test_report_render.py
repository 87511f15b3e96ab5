# SPDX-License-Identifier: MIT
"""The report rendering library end to end: tests/report_demo writes a page with every chart kind from a
synthetic 24 h run at 1 s (32 series of 86,400 samples, bars, a heat map, phases, events, hostile text).

Without a browser: the page is valid UTF-8 with balanced tags, every <svg> is well-formed XML with drawn paths,
nothing can be requested from outside, the page stays small, and the memory chart's hover data holds every
spike and the dip exactly. In headless Chromium (driven through the DevTools protocol, see chromium.py): no
console error and no request, every chart drawn, tooltips, drag-to-zoom, reset and legend toggles work, the
print layout applies, a screenshot is not blank and printing gives a multi-page PDF. Sizes and timings go to
$JOBSCOPE_BUILD/report_render_metrics.json (and the screenshot and PDF next to it) for the record.
"""
import json
import os
import re
import statistics
import struct
import subprocess
import time
import xml.etree.ElementTree as ET
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

import chromium
from conftest import REPO

BUILD = Path(os.environ.get("JOBSCOPE_BUILD", REPO / "build"))
DEMO = BUILD / "tests" / "report_demo"
METRICS = BUILD / "report_render_metrics.json"
SVG = "{http://www.w3.org/2000/svg}"
LINE_CHARTS = ["cpu", "mem", "io", "net", "power", "energy", "gpu-util", "gpu-mem", "gpu-power", "node-cpu",
               "cmp", "temp"]
BAR_CHARTS = {"top-cpu": 4, "top-mem": 3}
HEAT_MAPS = {"node-heat": 8}
BUDGET = 724  # buckets per series: one per horizontal unit of the plot
VOID = {"meta", "link", "br", "hr", "img", "input", "source", "wbr"}


def record(**values):
    """Merge measurements into the metrics file."""
    data = json.loads(METRICS.read_text()) if METRICS.exists() else {}
    data.update(values)
    METRICS.write_text(json.dumps(data, indent=2) + "\n")
    print(values)


def sig6(x):
    return float(f"{x:.6g}")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    if not os.access(DEMO, os.X_OK):
        pytest.skip(f"{DEMO} not built (meson builds it with the integration suite)")
    out = tmp_path_factory.mktemp("report") / "demo.html"
    t0 = time.monotonic()
    proc = subprocess.run([str(DEMO), str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    facts = json.loads(proc.stdout)
    facts["generate_s"] = time.monotonic() - t0
    return out, facts


def charts_data(text):
    """{figure id: the chart's JSON block}"""
    out = {}
    for m in re.finditer(r'<figure class="chart \w+" id="([^"]+)">(.*?)</figure>', text, re.S):
        js = re.search(r'<script type="application/json" class="cd">(.*?)</script>', m.group(2), re.S)
        out[m.group(1)] = json.loads(js.group(1)) if js else None
    return out


class TagChecker(HTMLParser):
    """Balanced, properly nested tags; attributes that could load or run something."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.problems, self.ids = [], [], []

    def handle_starttag(self, tag, attrs):
        self._attrs(tag, attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self._attrs(tag, attrs)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'} at {self.getpos()}")
        else:
            self.stack.pop()

    def _attrs(self, tag, attrs):
        for name, value in attrs:
            if name == "id":
                self.ids.append(value)
            if name.startswith("on"):
                self.problems.append(f"event handler attribute {name} on <{tag}>")
            if name in ("src", "srcset", "action", "formaction", "xlink:href"):
                self.problems.append(f"{name}= on <{tag}>")
            if name == "href" and not (value or "").startswith(("data:", "#")):
                self.problems.append(f"href={value!r} on <{tag}>")


def test_page_valid_small_and_exact(demo):
    path, facts = demo
    raw = path.read_bytes()
    text = raw.decode("utf-8")  # strict: invalid UTF-8 from the input never reaches the page
    assert text.startswith("<!DOCTYPE html>\n")
    bad = [c for c in text if ord(c) < 0x20 and c not in "\n\t"]
    assert not bad, f"control characters in the page: {bad[:5]}"

    checker = TagChecker()
    checker.feed(text)
    checker.close()
    assert not checker.problems, checker.problems[:5]
    assert checker.stack == [], f"unclosed: {checker.stack}"
    assert len(checker.ids) == len(set(checker.ids)), "duplicate ids"
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert "https:" not in text and text.count("http:") == text.count("http://www.w3.org/2000/svg")

    # every <svg> is well-formed XML, accessible, and drawn
    svgs = re.findall(r"<svg .*?</svg>", text, re.S)
    assert len(svgs) == len(LINE_CHARTS) + len(BAR_CHARTS) + len(HEAT_MAPS)
    for s in svgs:
        root = ET.fromstring(s)
        assert root.get("viewBox", "").startswith("0 0 800 ")
        assert (root.find(SVG + "title").text or "").strip()
        assert (root.find(SVG + "desc").text or "").strip()
    for d in re.findall(r' d="([^"]*)"', text):
        assert not re.search(r"\d\.\d\d", d), "coordinates must have at most one decimal"

    data = charts_data(text)
    assert set(data) == set(LINE_CHARTS) | set(BAR_CHARTS) | set(HEAT_MAPS)
    npoints = 0
    for cid in LINE_CHARTS:
        fig = re.search(rf'<figure class="chart line" id="{cid}">(.*?)</figure>', text, re.S).group(1)
        paths = re.findall(r'<path class="s[^"]*" data-s="\d+" stroke="#[0-9A-F]{6}" d="(M[^"]+)"', fig)
        assert len(paths) == len(data[cid]["s"]), f"{cid}: a series is not drawn"
        for s in data[cid]["s"]:
            assert len(s["t"]) == len(s["v"])
            assert 0 < len(s["t"]) <= 2 * BUDGET + 4, f"{cid}/{s['n']}: {len(s['t'])} points"
            npoints += len(s["t"])
    for cid, n in BAR_CHARTS.items():
        fig = re.search(rf'<figure class="chart bars" id="{cid}">(.*?)</figure>', text, re.S).group(1)
        assert fig.count("<rect ") == n
    heat = re.search(r'<figure class="chart heat" id="node-heat">(.*?)</figure>', text, re.S).group(1)
    assert heat.count("<rect ") > HEAT_MAPS["node-heat"] * 2
    assert len(data["node-heat"]["v"]) == HEAT_MAPS["node-heat"]

    # the memory chart keeps every spike and the dip at their exact seconds (6 significant digits in the page)
    mem = data["mem"]["s"][0]
    pts = set(zip(mem["t"], mem["v"]))
    for t, v in facts["spikes"] + [facts["dip"]]:
        assert (t, sig6(v)) in pts, f"lost the extreme {v} at {t} s"
    assert max(v for v in mem["v"] if v is not None) == sig6(max(v for _, v in facts["spikes"]))
    assert min(v for v in mem["v"] if v is not None) == sig6(facts["dip"][1])
    # the I/O gap stays a break
    io_read = data["io"]["s"][0]
    assert any(v is None and 30000 <= t < 30600 for t, v in zip(io_read["t"], io_read["v"]))
    assert not any(v is not None and 30000 <= t < 30600 for t, v in zip(io_read["t"], io_read["v"]))

    # hostile text is escaped
    assert "compute &lt;main&gt; &amp; &quot;solve&quot;" in text
    assert "<main> &" not in text and "\ufffd" in text

    size = len(raw)
    record(page_bytes=size, series=facts["series"], samples_per_series=facts["samples"],
           drawn_points=npoints, generate_s=round(facts["generate_s"], 3))
    assert facts["series"] >= 30 and facts["samples"] == 86400
    assert size < 4 * 1024 * 1024, f"24 h page is {size} bytes"


# ---- in Chromium ----

@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not chromium.available():
        pytest.skip(f"{chromium.CHROMIUM} not installed")
    b = chromium.Browser(tmp_path_factory.mktemp("chromium"))
    yield b
    b.close()


def png_info(data):
    """(width, height, distinct byte values of the decoded image data) of a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", (0, 0)
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IHDR":
            size = struct.unpack(">II", data[pos + 8:pos + 16])
        elif kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    return size[0], size[1], len(set(zlib.decompress(idat)))


CHART_STATE = """(() => {
  const out = {};
  document.querySelectorAll('figure.chart').forEach(f => {
    const svg = f.querySelector('svg.ch'), box = svg.getBoundingClientRect();
    const drawn = [...svg.querySelectorAll('path.s')].filter(p => p.getAttribute('d') && p.getTotalLength() > 0);
    out[f.id] = {w: box.width, h: box.height, paths: drawn.length,
                 rects: svg.querySelectorAll('rect').length, xlabels: svg.querySelectorAll('g.xa text').length};
  });
  return out;
})()"""


def test_chromium_loads_renders_and_prints(demo, browser):
    path, facts = demo
    page = browser.page(1280, 900)
    url = path.as_uri()
    first = page.load(url)
    again = [page.load(url) for _ in range(3)]
    assert page.errors == [], page.errors
    assert page.requests == [], page.requests

    state = page.evaluate(CHART_STATE)
    assert set(state) == set(LINE_CHARTS) | set(BAR_CHARTS) | set(HEAT_MAPS)
    for cid, s in state.items():
        assert s["w"] > 500 and s["h"] > 50, (cid, s)
    for cid in LINE_CHARTS:
        assert state[cid]["paths"] >= 1 and state[cid]["xlabels"] >= 3, (cid, state[cid])
    for cid, n in BAR_CHARTS.items():
        assert state[cid]["rects"] == n
    assert state["node-heat"]["rects"] > 100

    shot = page.screenshot()
    w, h, distinct = png_info(shot)
    assert (w, h) == (1280, 900) and distinct > 100, "the screenshot looks blank"
    full = page.screenshot(full=True)
    (BUILD / "report_demo.png").write_bytes(full)
    pdf = page.pdf()
    (BUILD / "report_demo.pdf").write_bytes(pdf)
    assert pdf.startswith(b"%PDF-") and len(pdf) > 50_000
    pages = len(re.findall(rb"/Type\s*/Page\b", pdf))
    assert pages >= 3, f"{pages} PDF pages"

    # the print style: controls hidden, charts kept whole
    page.send("Emulation.setEmulatedMedia", {"media": "print"})
    printed = page.evaluate("""[getComputedStyle(document.querySelector('.rz')).display,
        getComputedStyle(document.querySelector('figure.chart')).breakInside]""")
    assert printed == ["none", "avoid"]
    page.send("Emulation.setEmulatedMedia", {"media": ""})
    page.collect()
    assert page.errors == [], page.errors

    render = [first["render_ms"]] + [a["render_ms"] for a in again]
    record(render_ms_first=round(first["render_ms"]), render_ms_median=round(statistics.median(render)),
           load_event_ms_first=round(first["load_event_ms"]), load_s_first=round(first["load_s"], 3),
           screenshot_bytes=len(full), pdf_bytes=len(pdf), pdf_pages=pages)
    # The target is 2 s; the bound here leaves room for a loaded CI machine.
    assert statistics.median(render) < 10_000


def center(page, selector):
    """Scroll the element into view; its bounding box in viewport pixels."""
    return page.evaluate(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
        e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();
        return {{x: r.left, y: r.top, w: r.width, h: r.height}}; }})()""")


def at(box, vx, vy, height=240):
    """Viewport pixels of viewBox point (vx, vy) of an 800-wide chart."""
    return box["x"] + vx * box["w"] / 800, box["y"] + vy * box["h"] / height


def test_chromium_interaction(demo, browser):
    path, _ = demo
    page = browser.page(1280, 900)
    page.load(path.as_uri())
    tip = "(() => { const t = document.querySelector('.tip'); return t && !t.hidden ? t.textContent : null; })()"

    # tooltip: the nearest point of each series, with time and human value; a cursor line and dots
    box = center(page, "#mem svg")
    page.mouse("mouseMoved", *at(box, 400, 120))
    text = page.evaluate(tip)
    assert text and "RSS (tree): " in text and "GiB" in text and re.match(r"\d+:\d\d:\d\d", text), text
    assert page.evaluate("document.querySelectorAll('#mem g.cur circle').length") == 1
    box = center(page, "#gpu-util svg")
    page.mouse("mouseMoved", *at(box, 300, 100))
    text = page.evaluate(tip)
    assert all(f"GPU {g}: " in text for g in range(4)) and "%" in text, text
    page.mouse("mouseMoved", 5, 5)
    assert page.evaluate(tip) is None

    # drag to zoom on the time axis, then reset
    box = center(page, "#cpu svg")
    labels = "[...document.querySelectorAll('#cpu g.xa text')].map(t => t.textContent).join(' ')"
    line = "document.querySelector('#cpu path.s').getAttribute('d').length"
    before, before_len = page.evaluate(labels), page.evaluate(line)
    page.mouse("mouseMoved", *at(box, 300, 100))
    page.mouse("mousePressed", *at(box, 300, 100), button="left", clicks=1)
    page.mouse("mouseMoved", *at(box, 360, 100), button="left")
    page.mouse("mouseReleased", *at(box, 360, 100), button="left", clicks=1)
    zoomed = page.evaluate(labels)
    assert zoomed != before and len(zoomed.split()) >= 3, (before, zoomed)
    assert page.evaluate("!document.querySelector('#cpu .rz').hidden")
    assert page.evaluate(line) < before_len  # fewer points in view
    page.evaluate("document.querySelector('#cpu .rz').click()")
    assert page.evaluate(labels) == before
    assert page.evaluate("document.querySelector('#cpu .rz').hidden")

    # legend toggles hide a series and take it out of the tooltip
    box = center(page, "#net .lg button[data-s='1']")
    page.mouse("mousePressed", box["x"] + box["w"] / 2, box["y"] + box["h"] / 2, button="left", clicks=1)
    page.mouse("mouseReleased", box["x"] + box["w"] / 2, box["y"] + box["h"] / 2, button="left", clicks=1)
    assert page.evaluate("document.querySelector('#net .lg button[data-s=\"1\"]').getAttribute('aria-pressed')") \
        == "false"
    assert page.evaluate("getComputedStyle(document.querySelector('#net path.s[data-s=\"1\"]')).display") == "none"
    box = center(page, "#net svg")
    page.mouse("mouseMoved", *at(box, 400, 100))
    text = page.evaluate(tip)
    assert "receive: " in text and "transmit" not in text, text

    # heat map: node, time range and value under the cursor
    box = center(page, "#node-heat svg")
    height = page.evaluate("document.querySelector('#node-heat svg').viewBox.baseVal.height")
    page.mouse("mouseMoved", *at(box, 400, 6 + 18 * 2.5, height))
    text = page.evaluate(tip)
    assert text and text.startswith("node003") and "mean " in text and "%" in text, text

    page.collect()
    assert page.errors == [], page.errors
    assert page.requests == []


def test_chromium_without_javascript(demo, browser):
    """With scripts off the page is complete: every chart drawn, legends shown, no error."""
    path, _ = demo
    page = browser.page(1280, 900)
    page.send("Emulation.setScriptExecutionDisabled", {"value": True})
    page.load(path.as_uri(), paint=False)
    state = page.evaluate(CHART_STATE)
    assert all(state[c]["paths"] >= 1 for c in LINE_CHARTS)
    assert page.evaluate("document.documentElement.classList.contains('js')") is False
    assert page.evaluate("document.querySelectorAll('.lg button').length") > 30
    page.collect()
    assert page.errors == [], page.errors
