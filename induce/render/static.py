"""The style and script every page carries inline (no network, no external files)."""

from __future__ import annotations

STYLE = """
:root { --gold: #1f5fa8; --pred: #333; --wrong: #d0202f; --missed: #e08a00; }
body { font: 15px/1.4 system-ui, sans-serif; margin: 0 1.5em 3em; color: #222; }
header h1 { font-size: 1.3em; margin: 0.8em 0 0.3em; }
table.summary th { text-align: left; padding-right: 1em; font-weight: 600; }
table.summary td { font-family: monospace; word-break: break-all; }
.help { color: #666; font-size: 0.9em; }
kbd { border: 1px solid #bbb; border-radius: 3px; padding: 0 0.3em; font-size: 0.85em; }
.legend .key { margin-right: 1.2em; }
.legend .key::before { content: ""; display: inline-block; width: 1.6em; height: 0.25em;
  vertical-align: middle; margin-right: 0.4em; background: var(--pred); }
.legend .gold::before, .legend .arcs::before { background: var(--gold); }
.legend .wrong::before { background: var(--wrong); }
.legend .missed::before { background: var(--missed); }
nav#index { max-height: 14em; overflow-y: auto; border: 1px solid #ddd; margin: 0.6em 0; }
nav#index table { border-collapse: collapse; width: 100%; font-size: 0.9em; }
nav#index th { position: sticky; top: 0; background: #f3f3f3; text-align: left;
  padding: 0.15em 0.6em; cursor: pointer; }
nav#index td { padding: 0.1em 0.6em; white-space: nowrap; }
nav#index td:last-child { max-width: 36em; overflow: hidden; text-overflow: ellipsis; }
nav#index td.num, nav#index td.score { text-align: right; font-variant-numeric: tabular-nums; }
nav#index tr.row { cursor: pointer; }
nav#index tr.row:hover, nav#index tr.current { background: #fff4c2; }
section.sentence { border-top: 1px solid #e5e5e5; padding: 0.4em 0; outline: none;
  content-visibility: auto; contain-intrinsic-size: auto 220px; }
section.sentence.current { background: #fffbea; }
section.sentence h2 { font-size: 0.95em; font-weight: normal; margin: 0.2em 0; }
section.sentence h2 .score { font-weight: 600; }
section.sentence h2 .where, .note { color: #777; }
.picture { overflow-x: auto; }
svg text { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; }
svg text.word { font-size: 15px; fill: #111; }
svg text.tag { font-size: 11px; fill: #888; }
svg .arc, svg .span { fill: none; stroke: var(--pred); stroke-width: 1.3; }
svg g[data-layer="gold"] .arc, svg g[data-layer="gold"] .span,
svg g[data-layer="dependencies"] .arc { stroke: var(--gold); }
svg .arrow { fill: var(--pred); }
svg g[data-layer="gold"] .arrow, svg g[data-layer="dependencies"] .arrow { fill: var(--gold); }
svg .arc-label, svg .span-label { font-size: 11px; fill: #444; paint-order: stroke;
  stroke: #fff; stroke-width: 4px; stroke-linejoin: round; }
svg path.wrong { stroke: var(--wrong) !important; stroke-width: 2.2; }
svg path.missed { stroke: var(--missed) !important; stroke-dasharray: 4 3; stroke-width: 2; }
svg path.arrow.wrong { fill: var(--wrong) !important; stroke: none !important; }
svg path.arrow.missed { fill: var(--missed) !important; stroke: none !important; }
svg text.wrong { fill: var(--wrong); font-weight: 600; }
svg text.missed { fill: var(--missed); font-weight: 600; }
"""

SCRIPT = """
(function () {
  "use strict";
  var sections = Array.prototype.slice.call(document.querySelectorAll("section.sentence"));
  var index = document.getElementById("index");
  var rows = [];
  var current = -1;
  function go(k, scroll) {
    if (!sections.length) { return; }
    k = Math.max(0, Math.min(sections.length - 1, k));
    if (current >= 0) {
      sections[current].classList.remove("current");
      rows[current].classList.remove("current");
    }
    current = k;
    sections[k].classList.add("current");
    rows[k].classList.add("current");
    if (scroll !== false) {
      sections[k].scrollIntoView({block: "start"});
      sections[k].focus({preventScroll: true});
      rows[k].scrollIntoView({block: "nearest"});
    }
    history.replaceState(null, "", "#" + sections[k].id);
  }
  function cell(text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) { td.className = cls; }
    return td;
  }
  var table = document.createElement("table");
  var head = document.createElement("tr");
  [["#", "number"], ["where", "where"], ["score", "score"], ["words", ""]].forEach(function (c) {
    var th = document.createElement("th");
    th.textContent = c[0];
    if (c[1]) {
      th.title = "sort by " + c[0];
      th.addEventListener("click", function () { sortBy(c[1]); });
    }
    head.appendChild(th);
  });
  table.appendChild(head);
  sections.forEach(function (s, k) {
    var tr = document.createElement("tr");
    tr.className = "row";
    tr.appendChild(cell(s.dataset.number, "num"));
    tr.appendChild(cell(s.dataset.where, ""));
    tr.appendChild(cell(s.dataset.score, "score"));
    tr.appendChild(cell(s.dataset.words, ""));
    tr.addEventListener("click", function () { go(k); });
    rows.push(tr);
    table.appendChild(tr);
  });
  if (index) { index.appendChild(table); }
  var ascending = {};
  function sortBy(key) {
    ascending[key] = !ascending[key];
    var order = rows.map(function (r, k) { return k; });
    order.sort(function (a, b) {
      var x = sections[a].dataset[key], y = sections[b].dataset[key];
      var nx = parseFloat(x), ny = parseFloat(y);
      // "file:2" before "file:10": the numbers inside text compared as numbers
      var d = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y, "en", {numeric: true}) : nx - ny;
      return (ascending[key] ? d : -d) || a - b;
    });
    order.forEach(function (k) { table.appendChild(rows[k]); });
  }
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) { return; }
    var key = e.key;
    if (key === "j" || key === "n" || key === "ArrowDown") { go(current + 1); }
    else if (key === "k" || key === "p" || key === "ArrowUp") { go(current - 1); }
    else if (key === "Home") { go(0); }
    else if (key === "End") { go(sections.length - 1); }
    else if (key === "i" && index) { index.scrollIntoView(); }
    else { return; }
    e.preventDefault();
  });
  var start = sections.findIndex(function (s) { return "#" + s.id === location.hash; });
  if (start >= 0) { go(start); } else if (sections.length) { go(0, false); }
})();
"""
