# SPDX-License-Identifier: MIT
"""The report's first screen and its phone layout in headless Chromium (issue 24), on a real recording of a job
with two named phases (`jobscope mark`): a CPU phase and a memory phase.

- At 1400 x 900: the "At a glance" section (where the time went, memory, totals) lies wholly inside the first
  900 px, without scrolling, and its phase table names the phases (not unix timestamps), with the figures the
  summary has for them.
- Printed: charts two to a row, the details and the inventory in two columns.
- At 390 px: nothing overflows horizontally (the document is no wider than the viewport); wide tables scroll
  inside themselves.

With JOBSCOPE_DOCS_SHOTS=1 the first test writes docs/report-first.png (the first screen docs/REPORT.md shows).
"""
import base64
import os
import re

import pytest

import chromium
from conftest import PYTHON, REPO, WORKLOADS, Jobscope

BURN = str(WORKLOADS / "burn.py")
SHOTS = os.environ.get("JOBSCOPE_DOCS_SHOTS") == "1"
GROW = ("import time\n"
        "b = bytearray(200 * 1024 * 1024)\n"
        "for k in range(0, len(b), 4096): b[k] = 1\n"
        "time.sleep(1.0)\n")

BOX = ("(sel => { const r = document.querySelector(sel).getBoundingClientRect();"
       " return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; })")


@pytest.fixture(scope="module")
def phased(jobscope_bin, tmp_path_factory):
    js = Jobscope(jobscope_bin, tmp_path_factory.mktemp("first"))
    script = (f"set -e; {jobscope_bin} mark begin compute; {PYTHON} {BURN} 0.8 & {PYTHON} {BURN} 0.8 & wait; "
              f"{jobscope_bin} mark end compute; {jobscope_bin} mark begin 'load data'; {PYTHON} -c '{GROW}'; "
              f"{jobscope_bin} mark end 'load data'")
    r = js.run(["sh", "-c", script], interval="0.2s", name="phased")
    assert r.returncode == 0, r.proc.stderr
    p = js("report", r.recording)
    assert p.returncode == 0, p.stderr
    return r, js.path("phased.html")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not chromium.available():
        pytest.skip(f"{chromium.CHROMIUM} not installed")
    b = chromium.Browser(tmp_path_factory.mktemp("chromium"))
    yield b
    b.close()


def test_first_screen_visible_without_scrolling(phased, browser):
    r, page_path = phased
    page = browser.page(1400, 900)
    page.load(page_path.as_uri())
    assert page.evaluate("window.scrollY") == 0
    box = page.evaluate(BOX + "('#first .glance')")
    assert 0 <= box["top"] and box["bottom"] <= 900, box
    for card in ("#first-time", "#first-memory", "#first-totals"):
        b = page.evaluate(BOX + f"('{card}')")
        assert b["bottom"] <= 900 and b["right"] <= 1400, (card, b)
    # the phases by name, with their figures; the peak memory of the memory phase above 200 MiB
    rows = page.evaluate("[...document.querySelectorAll('#first-phases tbody tr')]"
                         ".map(tr => [...tr.children].map(c => c.textContent))")
    names = [row[0] for row in rows]
    assert names[:2] == ["compute", "load data"], rows
    phases = {p["name"]: p for p in r.summary["phases"]["phases"]}
    assert phases["load data"]["peak_bytes"] >= 200 * 1024 * 1024
    assert "MiB" in rows[1][4], rows
    assert page.evaluate("document.querySelector('#first-peak dd').textContent").endswith("iB")
    text = page.evaluate("document.querySelector('#first').textContent")
    assert "Where the time went" in text and "request" in text, text
    if SHOTS:
        shot = page.send("Page.captureScreenshot",
                         {"format": "png", "clip": {"x": 0, "y": 0, "width": 1400, "height": 900, "scale": 1}})
        (REPO / "docs" / "report-first.png").write_bytes(base64.b64decode(shot["data"]))
    page.collect()
    assert page.errors == [] and page.requests == []


def test_phone_width_has_no_horizontal_overflow(phased, browser):
    _, page_path = phased
    page = browser.page(390, 844)
    page.load(page_path.as_uri())
    width = page.evaluate("({doc: document.documentElement.scrollWidth, body: document.body.scrollWidth,"
                          " inner: window.innerWidth})")
    assert width["inner"] == 390, width
    assert width["doc"] <= 390 and width["body"] <= 390, width
    # no element sticks out of the viewport on the right (scrolling boxes clip their own content)
    wide = page.evaluate("[...document.querySelectorAll('body *')].filter(e => {"
                         " const r = e.getBoundingClientRect(); if (r.width === 0) return false;"
                         " for (let p = e.parentElement; p; p = p.parentElement)"
                         "   if (getComputedStyle(p).overflowX !== 'visible') return false;"
                         " return r.right > 390.5; }).slice(0, 5).map(e => e.tagName + '.' + e.className"
                         " + ' ' + Math.round(e.getBoundingClientRect().right))")
    assert wide == [], wide
    box = page.evaluate(BOX + "('#first .glance')")
    assert box["right"] <= 390, box
    page.collect()
    assert page.errors == [], page.errors


def test_print_layout_is_compact(phased, browser):
    """Printed (A4), the charts sit two to a row and the long key/value sections take two columns: the printed
    page is much shorter than the screen's."""
    _, page_path = phased
    page = browser.page(1280, 900)
    page.load(page_path.as_uri())
    page.send("Emulation.setEmulatedMedia", {"media": "print"})
    page.send("Emulation.setDeviceMetricsOverride", {"width": 703, "height": 1000, "deviceScaleFactor": 1,
                                                     "mobile": False})  # A4 less 12 mm margins, in CSS px
    tops = page.evaluate("[...document.querySelectorAll('#sec-cpu figure.chart')]"
                         ".map(f => Math.round(f.getBoundingClientRect().top))")
    assert len(tops) >= 2 and tops[0] == tops[1], tops  # side by side
    cols = page.evaluate("['details', 'inventory'].map(id => getComputedStyle(document.getElementById(id))"
                         ".columnCount)")
    assert cols == ["2", "2"], cols
    height_print = page.evaluate("document.documentElement.scrollHeight")
    page.send("Emulation.setEmulatedMedia", {"media": "screen"})
    height_screen = page.evaluate("document.documentElement.scrollHeight")
    assert height_print < 0.75 * height_screen, (height_print, height_screen)
    page.collect()
    assert page.errors == [], page.errors



def test_compare_shows_phases(phased, jobscope_bin, tmp_path):
    """`compare` lists both runs' phases by name, side by side (here a run with itself)."""
    r, _ = phased
    js = Jobscope(jobscope_bin, tmp_path)
    out = tmp_path / "cmp.html"
    p = js("compare", r.recording, r.recording, "-o", out)
    assert p.returncode == 0, p.stderr
    text = out.read_text(encoding="utf-8")
    sec = text[text.index('id="phases"'):]
    sec = sec[:sec.index("</section>")]
    rows = re.findall(r"<tr>(.*?)</tr>", sec, re.S)
    cells = [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
             for row in rows[1:]]
    assert [c[0] for c in cells] == ["compute", "load data"], cells
    for c in cells:  # a run with itself: each of A's figures equals B's
        assert c[1] == c[2] and c[3] == c[4] and c[6] == c[7], c
        assert c[5] in ("1", "\u2014"), c  # CPU B / A (missing where the phase used no CPU)
