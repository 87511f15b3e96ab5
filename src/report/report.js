/* SPDX-License-Identifier: MIT
 *
 * The report page's only script, inlined by html_end() (through the generated report_assets.h). It adds to
 * the static page: a tooltip with the nearest point of each visible series (and any event there, with its
 * data) at the cursor or where a finger taps, drag-to-zoom on the
 * time axis (double-click or "reset zoom" to undo), legend toggles, and heat-map tooltips. It reads each chart's
 * data from the JSON block svg.c writes after the SVG and mirrors units.c (units_format, units_time_ticks,
 * units_time_label, units_time) so redrawn axes and tooltips read like the page. Without it the page is
 * complete. No request, no global name, text only through textContent.
 */
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var PB = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'], PS = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
  var STEPS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200,
    10800, 21600, 43200, 86400];

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function p2(n) { return (n < 10 ? '0' : '') + n; }
  function pad(n, w) { var s = String(n); while (s.length < w) s = '0' + s; return s; }
  function trim(s) { return s.indexOf('.') < 0 ? s : s.replace(/0+$/, '').replace(/\.$/, ''); }
  function fixed(x, d) { var s = x.toFixed(d); return +s === 0 ? s.replace('-', '') : s; }

  /* human: units_format() */
  function dec3(x) {
    var a = Math.abs(x);
    if (a === 0 || a >= 100) return 0;
    if (a >= 10) return 1;
    if (a >= 1) return 2;
    return Math.min(9, 2 - Math.floor(Math.log10(a)));
  }
  function compose(num, u, k) {
    var pre = k > 0 ? (u.b === 1024 ? PB : PS)[k] : '';
    return u.y === 0 ? num + ' ' + pre + u.s : u.y === 2 ? num + pre + ' ' + u.s : num + pre + u.s;
  }
  function human(v, u) {
    if (v === null || v === undefined || !isFinite(v)) return '\u2014';
    var x = v * u.m, k = 0;
    while (u.b && Math.abs(x) >= u.b && k < 6) { x /= u.b; k++; }
    var s = fixed(x, dec3(x));
    if (u.b && Math.abs(+s) >= u.b && k < 6) { x /= u.b; k++; s = fixed(x, dec3(x)); }
    return compose(trim(s), u, k);
  }

  /* tticks, tlabel, ttime: units_time_ticks(), units_time_label(), units_time() */
  function tticks(lo, hi, target, ax) {
    var raw = (hi - lo) / target, step = 0, i;
    for (i = 0; i < STEPS.length && !step; i++) if (STEPS[i] >= raw) step = STEPS[i];
    if (!step) {
      var days = raw / 86400, mag = Math.pow(10, Math.floor(Math.log10(days))), n = days / mag;
      step = (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * mag * 86400;
    }
    var off = ax.m === 1 ? ax.o : 0, m = Math.max(Math.abs(lo), Math.abs(hi));
    var first = Math.ceil((lo + off) / step - 1e-9) * step - off;
    var tk = { step: step, off: off, style: ax.m === 1 ? 3 : m < 120 ? 0 : m < 3600 ? 1 : 2,
      dec: step >= 1 ? 0 : step >= 0.1 ? 1 : 2, v: [] };
    var n2 = first > hi ? 0 : Math.floor((hi - first) / step + 1e-9) + 1;
    for (i = 0; i < n2; i++) tk.v.push(first + i * step);
    return tk;
  }
  function tlabel(tk, t) {
    if (!isFinite(t)) return '\u2014';
    if (tk.style === 0) return trim(fixed(t, tk.dec)) + ' s';
    var sc = Math.pow(10, tk.dec), q = Math.round((t + tk.off) * sc);
    if (tk.style === 3) {
      var secs = Math.floor(q / sc), frac = q - secs * sc, d = ((secs % 86400) + 86400) % 86400;
      if (d === 0 && frac === 0 && tk.step >= 60) {
        var dt = new Date(secs * 1000);
        return p2(dt.getUTCMonth() + 1) + '-' + p2(dt.getUTCDate());
      }
      var hm = p2(Math.floor(d / 3600)) + ':' + p2(Math.floor(d / 60) % 60);
      return tk.step >= 60 ? hm : hm + ':' + p2(d % 60) + (tk.dec ? '.' + pad(frac, tk.dec) : '');
    }
    var a = Math.abs(q), whole = Math.floor(a / sc), sec = p2(whole % 60) + (tk.dec ? '.' + pad(a % sc, tk.dec) : '');
    return (q < 0 ? '-' : '') + (tk.style === 1 ? Math.floor(whole / 60) + ':' + sec
      : Math.floor(whole / 3600) + ':' + p2(Math.floor(whole / 60) % 60) + ':' + sec);
  }
  function ttime(t, ax) {
    if (ax.m === 1) return tlabel({ style: 3, off: ax.o, dec: 0, step: 1 }, t);
    var a = Math.abs(t), st = a < 120 ? 0 : a < 3600 ? 1 : 2;
    return tlabel({ style: st, off: 0, dec: st === 0 && Math.round(a * 10) !== Math.round(a) * 10 ? 1 : 0, step: 1 }, t);
  }

  /* the tooltip: a heading and rows of [colour or null, text] */
  var tip = document.createElement('div');
  tip.className = 'tip';
  tip.hidden = true;
  document.body.appendChild(tip);
  function showTip(ev, head, rows) {
    tip.textContent = '';
    var b = document.createElement('b');
    b.textContent = head;
    tip.appendChild(b);
    rows.forEach(function (r) {
      var div = document.createElement('div');
      if (r[0]) {
        var sw = document.createElement('i');
        sw.style.borderTopColor = r[0];
        div.appendChild(sw);
      }
      div.appendChild(document.createTextNode(r[1]));
      tip.appendChild(div);
    });
    tip.hidden = false;
    var de = document.documentElement, x = ev.pageX + 14, y = ev.pageY + 14;
    if (x + tip.offsetWidth > window.scrollX + de.clientWidth) x = Math.max(0, ev.pageX - tip.offsetWidth - 14);
    if (y + tip.offsetHeight > window.scrollY + de.clientHeight) y = Math.max(0, ev.pageY - tip.offsetHeight - 14);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function hideTip() { tip.hidden = true; }
  function svgPoint(svg, ev) {
    var m = svg.getScreenCTM();
    return m ? new DOMPoint(ev.clientX, ev.clientY).matrixTransform(m.inverse()) : null;
  }
  /* lb: the first index whose time is >= t; nearest: the index of the time closest to t */
  function lb(ts, t) {
    var lo = 0, hi = ts.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (ts[mid] < t) lo = mid + 1; else hi = mid; }
    return lo;
  }
  function nearest(ts, t) {
    var i = lb(ts, t);
    return i > 0 && (i === ts.length || t - ts[i - 1] <= ts[i] - t) ? i - 1 : i;
  }
  function r1(x) { return Math.round(x * 10) / 10; }

  function line(fig, svg, d) {
    var x0 = d.box[0], y0 = d.box[1], x1 = d.box[2], y1 = d.box[3], V = d.v, full = d.t.slice(), T = full.slice();
    var hidden = [], drag = null, sel = null, rz = fig.querySelector('.rz'), xa = svg.querySelector('g.xa');
    var cur = el('g', { 'class': 'cur' }, svg);
    cur.style.display = 'none';
    function X(t) { return x0 + (t - T[0]) * (x1 - x0) / (T[1] - T[0]); }
    function Y(v) { return Math.max(-1e5, Math.min(1e5, y1 - (v - V[0]) * (y1 - y0) / (V[1] - V[0]))); }
    function tAt(x) { return T[0] + (x - x0) / (x1 - x0) * (T[1] - T[0]); }
    /* paths: line and fill of the points in view and one beyond each edge (as svg.c writes them) */
    function paths(s) {
      var a = Math.max(0, lb(s.t, T[0]) - 1), z = Math.min(s.t.length, lb(s.t, T[1]) + 1);
      var base = r1(Math.min(y1, Math.max(y0, Y(0)))), ln = '', fl = '', pen = false, segs = 0, lx = 0, ly = 0;
      for (var i = a; i < z; i++) {
        var v = s.v[i];
        if (v === null) {
          if (pen) { ln += segs ? '' : 'h0'; fl += 'V' + base + 'Z'; }
          pen = false;
          continue;
        }
        var x = r1(X(s.t[i])), y = r1(Y(v));
        if (!pen) { ln += 'M' + x + ' ' + y; fl += 'M' + x + ' ' + base + 'V' + y; pen = true; segs = 0; }
        else if (x !== lx || y !== ly) { ln += (segs ? ' ' : 'L') + x + ' ' + y; fl += 'L' + x + ' ' + y; segs++; }
        lx = x;
        ly = y;
      }
      if (pen) { ln += segs ? '' : 'h0'; fl += 'V' + base + 'Z'; }
      return [ln, fl];
    }
    function axis() {
      while (xa.firstChild) xa.removeChild(xa.firstChild);
      var tk = tticks(T[0], T[1], d.xt, d.ax);
      tk.v.forEach(function (t) {
        var x = r1(X(t));
        el('line', { x1: x, x2: x, y1: y1, y2: y1 + 4 }, xa);
        el('text', { x: x, y: y1 + 16 }, xa).textContent = tlabel(tk, t);
      });
    }
    function redraw() {
      d.s.forEach(function (s, i) {
        var p = paths(s), ln = svg.querySelector('path.s[data-s="' + i + '"]'),
          fl = svg.querySelector('path.f[data-s="' + i + '"]');
        if (ln) ln.setAttribute('d', p[0]);
        if (fl) fl.setAttribute('d', p[1]);
      });
      svg.querySelectorAll('[data-t]').forEach(function (g) {
        var t = +g.getAttribute('data-t');
        g.setAttribute('transform', 'translate(' + r1(X(t)) + ' ' + (g.getAttribute('data-y') || 0) + ')');
        g.style.display = t < T[0] || t > T[1] ? 'none' : '';
      });
      svg.querySelectorAll('[data-z0]').forEach(function(g) {
          var a = X(+g.getAttribute('data-z0')), z = X(+g.getAttribute('data-z1'));
          g.setAttribute('transform', 'translate(' + r1(a) + ' ' + y0 + ') scale(' +
                                          ((z - a) / +g.getAttribute('data-n')) + ' 1)');
      });
      svg.querySelectorAll('[data-t0]').forEach(function (g) {
        var a = Math.max(x0, X(+g.getAttribute('data-t0'))), z = Math.min(x1, X(+g.getAttribute('data-t1')));
        var rc = g.querySelector('rect'), tx = g.querySelector('text');
        rc.setAttribute('x', r1(a));
        rc.setAttribute('width', r1(Math.max(0, z - a)));
        g.style.display = z <= a ? 'none' : '';
        if (tx) {
          tx.setAttribute('x', r1(a + 3));
          tx.style.display = '';
          if (z - a < tx.getComputedTextLength() + 6) tx.style.display = 'none';
        }
      });
      axis();
    }
    function leave() { cur.style.display = 'none'; hideTip(); }
    function reset() { T = full.slice(); redraw(); if (rz) rz.hidden = true; }

    function at(ev) {
      var p = svgPoint(svg, ev);
      if (!p) return;
      if (sel) {
        var a = Math.max(x0, Math.min(drag, p.x)), z = Math.min(x1, Math.max(drag, p.x));
        sel.setAttribute('x', a);
        sel.setAttribute('width', z - a);
      }
      if (p.x < x0 || p.x > x1 || p.y < y0 - 4 || p.y > y1 + 4) { leave(); return; }
      var t = tAt(p.x), rows = [], dots = [], ht = null, span = T[1] - T[0];
      d.s.forEach(function (s, i) {
        if (hidden[i] || !s.t.length) return;
        var j = nearest(s.t, t), v = s.v[j];
        if (ht === null) ht = s.t[j];
        var at = Math.abs(s.t[j] - ht) > span / 400 ? ' (at ' + ttime(s.t[j], d.ax) + ')' : '';
        rows.push([s.c, s.n + ': ' + human(v, d.u) + at]);
        if (v !== null) dots.push([r1(X(s.t[j])), r1(Y(v)), s.c]);
      });
      if (ht === null) { leave(); return; }
      cur.textContent = '';
      var cx = r1(X(ht));
      el('line', { x1: cx, x2: cx, y1: y0, y2: y1 }, cur);
      dots.forEach(function (q) { el('circle', { cx: q[0], cy: q[1], r: 3.5, fill: q[2] }, cur); });
      /* events within a few units of the cursor (or the tap): their name, time and data */
      svg.querySelectorAll('g.ev').forEach(function (g) {
        var tt = g.querySelector('title');
        if (tt && g.style.display !== 'none' && Math.abs(X(+g.getAttribute('data-t')) - p.x) <= 8)
          rows.push([null, tt.textContent]);
      });
      cur.style.display = '';
      showTip(ev, ttime(ht, d.ax), rows);
    }
    svg.addEventListener('mousemove', at);
    svg.addEventListener('click', at);
    svg.addEventListener('pointerup', function (ev) { if (ev.pointerType !== 'mouse') at(ev); }); /* a tap */
    svg.addEventListener('mouseleave', function () { if (!sel) leave(); });
    svg.addEventListener('mousedown', function (ev) {
      var p = svgPoint(svg, ev);
      if (ev.button !== 0 || !p || p.x < x0 || p.x > x1 || p.y < y0 || p.y > y1) return;
      ev.preventDefault();
      drag = p.x;
      sel = el('rect', { 'class': 'sel', x: p.x, y: y0, width: 0, height: y1 - y0 }, svg);
    });
    window.addEventListener('mouseup', function (ev) {
      if (!sel) return;
      var p = svgPoint(svg, ev), a = Math.max(x0, Math.min(x1, drag));
      sel.parentNode.removeChild(sel);
      sel = null;
      if (!p) return;
      var z = Math.max(x0, Math.min(x1, p.x)), ta = tAt(Math.min(a, z)), tb = tAt(Math.max(a, z));
      if (Math.abs(z - a) < 4 || tb - ta < 1e-3) return;
      T = [ta, tb];
      redraw();
      if (rz) rz.hidden = false;
    });
    svg.addEventListener('dblclick', reset);
    if (rz) rz.addEventListener('click', reset);
    fig.querySelectorAll('.lg button[data-s]').forEach(function (btn) {
      btn.addEventListener('click', function () {
        var i = +btn.getAttribute('data-s');
        hidden[i] = !hidden[i];
        btn.setAttribute('aria-pressed', hidden[i] ? 'false' : 'true');
        svg.querySelectorAll('[data-s="' + i + '"]').forEach(function (e) { e.style.display = hidden[i] ? 'none' : ''; });
      });
    });
  }

  function heat(fig, svg, d) {
    var x0 = d.box[0], y0 = d.box[1], x1 = d.box[2], y1 = d.box[3], nr = d.rows.length, nc = d.n;
    function at(ev) {
      var p = svgPoint(svg, ev);
      if (!p) return;
      var ri = Math.floor((p.y - y0) / (y1 - y0) * nr), ci = Math.floor((p.x - x0) / (x1 - x0) * nc);
      if (ri < 0 || ri >= nr || ci < 0 || ci >= nc) { hideTip(); return; }
      var w = (d.t[1] - d.t[0]) / nc, ta = d.t[0] + ci * w;
      showTip(ev, d.rows[ri], [[null, ttime(ta, d.ax) + ' \u2013 ' + ttime(ta + w, d.ax)],
        [null, (d.pk ? 'peak ' : 'mean ') + human(d.v[ri][ci], d.u)]]);
    }
    svg.addEventListener('mousemove', at);
    svg.addEventListener('click', at);
    svg.addEventListener('pointerup', function (ev) { if (ev.pointerType !== 'mouse') at(ev); });
    svg.addEventListener('mouseleave', hideTip);
  }

  document.documentElement.classList.add('js');
  document.querySelectorAll('figure.chart').forEach(function (fig) {
    var js = fig.querySelector('script.cd'), svg = fig.querySelector('svg.ch'), d;
    if (!js || !svg) return;
    try { d = JSON.parse(js.textContent); } catch (e) { return; }
    if (d.k === 'line') line(fig, svg, d);
    else if (d.k === 'heat') heat(fig, svg, d);
  });
})();
