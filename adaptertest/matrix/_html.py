"""The matrix as one self-contained HTML page: no network at view time.

Styles and script are inline; the data the script needs (every cell's messages) travels
in a JSON block the script reads with ``textContent``, and every text reaches the page
as a DOM text node, never as markup, so a message cannot inject anything.
"""

from __future__ import annotations

import html
import json

from adaptertest._screen import screen
from adaptertest.matrix._model import Matrix

_SYMBOL = {
    "passed": "✓",
    "failed": "✗",
    "skipped": "\u2013",  # en dash
    "xfailed": "known",
    "xpassed": "stale",
    "absent": "·",
}
_TITLE_CHARS = 300


def visible(text: str) -> str:
    """``text`` as the page may show it: the environment's secret values masked and
    control characters escaped (the same screen every front end uses)."""
    return screen(text)


_STYLE = """
:root { --pass:#1a7f37; --fail:#cf222e; --skip:#6e7781; --known:#9a6700; --line:#d0d7de; }
* { box-sizing: border-box; }
body { font: 14px/1.4 system-ui, sans-serif; margin: 16px; color: #1f2328; }
h1 { font-size: 20px; margin: 0 0 4px; }
.controls { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; margin: 12px 0; }
.wrap { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; table-layout: fixed; width: max-content; }
th, td { border: 1px solid var(--line); padding: 3px 6px; }
th.clause, td.clause { width: 22em; text-align: left; overflow: hidden; text-overflow: ellipsis;
  white-space: nowrap; }
th.run { width: 9em; vertical-align: top; font-weight: normal; overflow-wrap: anywhere; }
th.run .t { font-weight: 600; }
th.run .level { display: inline-block; margin-top: 2px; padding: 0 4px; border-radius: 3px;
  background: #ddf4ff; }
th.run .fact { font-size: 12px; color: #57606a; }
td.cell { text-align: center; cursor: pointer; overflow: hidden; white-space: nowrap; }
td.cell.selected { outline: 2px solid #0969da; outline-offset: -2px; }
tr.family th { text-align: left; background: #f6f8fa; }
.passed { color: var(--pass); } .failed { color: var(--fail); font-weight: 700; }
.skipped, .absent { color: var(--skip); } .xfailed, .xpassed { color: var(--known); }
tr.hidden { display: none; }
#diff { margin: 0 0 12px; border: 1px solid var(--line); padding: 8px; max-width: 100%; }
#panel { position: fixed; top: 12px; right: 12px; width: min(40em, 45vw);
  max-height: calc(100vh - 24px); overflow: auto; background: #fff; z-index: 2;
  border: 1px solid var(--line); padding: 8px; box-shadow: 0 4px 16px rgba(0,0,0,.2); }
#panel .close { float: right; }
#panel pre, #diff pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0 0; }
#diff table { table-layout: auto; width: 100%; }
#diff td { overflow-wrap: anywhere; vertical-align: top; }
.legend span { margin-right: 10px; }
"""

_SCRIPT = """
(function () {
  const data = JSON.parse(document.getElementById('matrix-data').textContent);
  const panel = document.getElementById('panel');
  function show(row, col) {
    const cell = data.rows[row].cells[col];
    const head = data.rows[row].clause + ' · ' + data.columns[col].title + ' ('
      + data.columns[col].subtitle + '): ' + cell.status;
    panel.replaceChildren();
    const close = document.createElement('button');
    close.type = 'button'; close.className = 'close'; close.textContent = 'close';
    close.addEventListener('click', () => { panel.hidden = true; });
    const h = document.createElement('div'); h.className = 'head'; h.textContent = head;
    const pre = document.createElement('pre'); pre.textContent = cell.message || '(no message)';
    panel.append(close, h, pre); panel.hidden = false; panel.scrollTop = 0;
    document.querySelectorAll('td.cell.selected').forEach(el => el.classList.remove('selected'));
    const td = document.querySelector('td.cell[data-row="' + row + '"][data-col="' + col + '"]');
    if (td) td.classList.add('selected');
  }
  document.querySelectorAll('td.cell').forEach(td => {
    const open = () => show(Number(td.dataset.row), Number(td.dataset.col));
    td.addEventListener('click', open);
    td.addEventListener('keydown', e => { if (e.key === 'Enter' || e.key === ' ') open(); });
  });
  document.addEventListener('keydown', e => { if (e.key === 'Escape') panel.hidden = true; });
  const only = document.getElementById('only-differing');
  const skips = document.getElementById('count-skips');
  const notRun = s => s === 'skipped' || s === 'absent';
  const differ = (x, y) => x !== y && (skips.checked || !(notRun(x) || notRun(y)));
  function filter() {
    const key = skips.checked ? 'differsSkips' : 'differs';
    const rows = Array.from(document.querySelectorAll('tr.clause-row'));
    document.getElementById('differing-count').textContent =
      rows.filter(tr => tr.dataset[key] === '1').length;
    document.querySelectorAll('tr.clause-row').forEach(tr => {
      tr.classList.toggle('hidden', only.checked && tr.dataset[key] !== '1');
    });
    document.querySelectorAll('tr.family').forEach(tr => {
      const rows = document.querySelectorAll(
        'tr.clause-row[data-family="' + tr.dataset.family + '"]');
      const any = Array.from(rows).some(r => !r.classList.contains('hidden'));
      tr.classList.toggle('hidden', !any);
    });
  }
  only.addEventListener('change', filter);
  const a = document.getElementById('diff-a'), b = document.getElementById('diff-b');
  const out = document.getElementById('diff');
  function diff() {
    const i = Number(a.value), j = Number(b.value);
    out.replaceChildren();
    const head = document.createElement('div');
    const changed = data.rows.filter(r => differ(r.cells[i].status, r.cells[j].status));
    const name = k => data.columns[k].title + ' ' + data.columns[k].subtitle;
    head.textContent = changed.length + ' clause(s) differ from "' + name(i) + '" to "'
      + name(j) + '"';
    out.append(head);
    if (changed.length) {
      const t = document.createElement('table');
      const hr = t.insertRow();
      for (const label of ['clause', 'from', 'to', 'message (to)']) {
        const th = document.createElement('th'); th.textContent = label; hr.append(th);
      }
      for (const r of changed) {
        const tr = t.insertRow(); tr.className = 'diff-row'; tr.dataset.clause = r.clause;
        const values = [r.clause, r.cells[i].status, r.cells[j].status,
          (r.cells[j].message || r.cells[i].message).split('\\n')[0]];
        values.forEach((v, k) => { const td = tr.insertCell(); td.textContent = v;
          if (k === 1 || k === 2) td.className = v; });
      }
      out.append(t);
    }
    out.hidden = false;
  }
  document.getElementById('diff-go').addEventListener('click', diff);
  skips.addEventListener('change', () => { filter(); if (!out.hidden) diff(); });
})();
"""


def _data(matrix: Matrix) -> str:
    doc = {
        "columns": [
            {"title": visible(c.title), "subtitle": visible(c.subtitle)} for c in matrix.columns
        ],
        "rows": [
            {
                "clause": r.clause,
                "cells": [
                    {"status": cell.status, "message": visible(cell.message)}
                    for cell in matrix.cells[i]
                ],
            }
            for i, r in enumerate(matrix.rows)
        ],
    }
    # "</" must not end the script block early; JSON allows the escaped slash.
    return json.dumps(doc, ensure_ascii=True).replace("</", "<\\/")


def render_html(matrix: Matrix, *, title: str = "adaptertest conformance matrix") -> str:
    """The whole page."""
    e = html.escape
    head_cells = []
    options = []
    for index, col in enumerate(matrix.columns):
        version = f" {col.driver_version}" if col.driver_version else ""
        tooltip = f"{col.name} · kit {col.kit_version} · {col.source}"
        facts = matrix.head_facts(index)
        head_cells.append(
            f'<th class="run" data-col="{index}" title="{e(visible(tooltip))}">'
            f'<div class="t">{e(visible(col.title + version))}</div>'
            f'<div class="sub">{e(visible(col.subtitle))}</div>'
            + "".join(f'<div class="fact">{e(visible(fact))}</div>' for fact in facts)
            + f'<div class="level" data-level="{e(col.level_text)}">{e(col.level_text)}</div></th>'
        )
        label = " ".join([f"{index + 1}.", col.title, col.subtitle, *facts]).strip()
        options.append(f'<option value="{index}">{e(visible(label))}</option>')
    body = []
    width = len(matrix.columns) + 1
    for family, indexes in matrix.families():
        body.append(
            f'<tr class="family" data-family="{e(family)}">'
            f'<th colspan="{width}">{e(family)}</th></tr>'
        )
        for i in indexes:
            row = matrix.rows[i]
            cells = []
            for j, cell in enumerate(matrix.cells[i]):
                tip = visible(cell.headline)[:_TITLE_CHARS] or cell.status
                cells.append(
                    f'<td class="cell {cell.status}" data-row="{i}" data-col="{j}" '
                    f'data-status="{cell.status}" tabindex="0" title="{e(tip)}">'
                    f"{_SYMBOL[cell.status]}</td>"
                )
            differs = "1" if matrix.differs(i) else "0"
            with_skips = "1" if matrix.differs(i, skips=True) else "0"
            body.append(
                f'<tr class="clause-row" data-clause="{e(row.clause)}" data-family="{e(family)}" '
                f'data-differs="{differs}" data-differs-skips="{with_skips}">'
                f'<td class="clause" title="{e(row.title)}">'
                f"<b>{e(row.clause)}</b> {e(row.title)}</td>{''.join(cells)}</tr>"
            )
    second = 1 if len(matrix.columns) > 1 else 0
    options_b = [o.replace(f'value="{second}"', f'value="{second}" selected', 1) for o in options]
    legend = " ".join(
        f'<span class="{s}">{_SYMBOL[s]} {s}</span>' for s in _SYMBOL if s != "absent"
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(title)}</title><style>{_STYLE}</style></head>
<body>
<h1>{e(title)}</h1>
<div class="legend">{legend} <span class="absent">· not in the report</span></div>
<div class="controls">
<label><input type="checkbox" id="only-differing"> only rows that differ
(<span id="differing-count">{len(matrix.differing)}</span>)</label>
<label><input type="checkbox" id="count-skips"> count skipped vs run as a difference</label>
<span>compare <select id="diff-a">{"".join(options)}</select> with
<select id="diff-b">{"".join(options_b)}</select>
<button type="button" id="diff-go">diff</button></span>
</div>
<div id="diff" hidden></div>
<div class="wrap"><table id="matrix">
<thead><tr><th class="clause">clause</th>{"".join(head_cells)}</tr></thead>
<tbody>
{chr(10).join(body)}
</tbody></table></div>
<div id="panel" hidden></div>
<script type="application/json" id="matrix-data">{_data(matrix)}</script>
<script>{_SCRIPT}</script>
</body></html>
"""
