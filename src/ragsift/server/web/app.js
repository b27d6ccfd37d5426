// ragsift's web page: ask, see passages with their matching sentences marked and why each was
// found, the trace, two configurations side by side; upload files, and browse (search, sort,
// page), view and delete documents. Plain JavaScript, no build step; all text from the server is
// inserted as text, never as HTML.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const state = { kbs: [], defaultKb: "default", settings: null, key: "",
                docs: { q: "", sort: "source:asc", offset: 0, total: 0, fresh: null } };
const PAGE = 10;  // documents a page

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function setStatus(text) { $("#status").textContent = text; }

function showError(message) {
  const box = $("#error");
  box.textContent = message || "";
  box.hidden = !message;
}

async function api(path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  const key = $("#apikey").value.trim();
  if (key) headers["Authorization"] = "Bearer " + key;
  if (options.json !== undefined) {
    headers["Content-Type"] = "application/json";
    options = Object.assign({}, options, { body: JSON.stringify(options.json) });
  }
  const resp = await fetch(path, Object.assign({}, options, { headers }));
  const type = resp.headers.get("content-type") || "";
  const body = type.includes("json") ? await resp.json() : await resp.text();
  if (!resp.ok) {
    const detail = body && body.detail ? body.detail : resp.statusText;
    throw new Error(`${resp.status} ${body && body.title ? body.title : ""}: ${detail}`);
  }
  return body;
}

function base() {
  const kb = $("#kb").value;
  return !kb || kb === state.defaultKb ? "/v1" : `/v1/kbs/${encodeURIComponent(kb)}`;
}

// ------------------------------------------------------------------ configurations
function enumValues(schema, name) {
  const def = schema.$defs && schema.$defs[name];
  return def && def.enum ? def.enum : [];
}

function buildConfig(fieldset) {
  fieldset.querySelectorAll(":scope > :not(legend)").forEach(n => n.remove());
  fieldset.append($("#config-template").content.cloneNode(true));
  const s = state.settings.settings;
  const schema = state.settings.query_schema;
  const fill = (name, values, current) => {
    const select = fieldset.querySelector(`[name=${name}]`);
    for (const v of values) select.append(el("option", { value: v, text: v }));
    select.value = current;
  };
  fill("unit", enumValues(schema, "Unit"), s.query.unit);
  fill("fusion", enumValues(schema, "FusionMode"), s.query.fusion);
  fill("strategy", enumValues(schema, "Strategy"), s.query.strategy);
  fill("multihop_mode", enumValues(schema, "MultiHop"), s.multihop.mode);
  fill("hyde_mode", enumValues(schema, "HydeMode"), s.transforms.hyde_mode);
  fieldset.querySelector("[name=max_passages]").value = s.query.max_passages;
  fieldset.querySelector("[name=token_budget]").value = s.query.token_budget;
  fieldset.querySelector("[name=llm_model]").value = s.llm.model || "none (the operator sets it)";
  const box = fieldset.querySelector(".channels");
  const missing = state.settings.unavailable || {};
  const off = missing.channels || {};
  for (const name of state.settings.channels) {
    const input = el("input", { type: "checkbox", name: "channel", value: name });
    input.checked = s.query.channels.includes(name);
    box.append(el("label", {}, input, " " + name));
  }
  // what cannot run on this knowledge base: shown, not offered, with why (the server's reasons)
  for (const [name, why] of Object.entries(off)) {
    const input = el("input", { type: "checkbox", name: "channel-off", value: name, disabled: "", "aria-describedby": `${fieldset.dataset.config}-unavailable` });
    box.append(el("label", { class: "unavailable", title: why }, input, " " + name));
  }
  const reasons = {};
  for (const [setting, values] of Object.entries(missing)) {
    for (const [value, why] of Object.entries(values)) {
      (reasons[why] = reasons[why] || []).push(setting === "channels" ? value : `${setting} ${value}`);
    }
  }
  if (Object.keys(reasons).length) {
    fieldset.append(el("p", { class: "unavailable-note", id: `${fieldset.dataset.config}-unavailable` },
      "Not available on this knowledge base: " +
      Object.entries(reasons).map(([why, names]) => `${names.join(", ")}: ${why}`).join(". ") + "."));
  }
}

// before the server accepts a key: say why the selector and the settings are empty, and where to go
function showLocked() {
  const kb = $("#kb");
  kb.replaceChildren(el("option", { value: "", text: "(enter an API key first)" }));
  kb.disabled = true;
  for (const fs of document.querySelectorAll("fieldset.config")) {
    fs.querySelectorAll(":scope > :not(legend)").forEach(n => n.remove());
    fs.append(el("p", { class: "locked", text: "The search settings load once the server accepts your API key: " +
      "enter it in the API key box above. This server asks for a key before it shows its knowledge bases." }));
  }
  $("#documents").replaceChildren(el("li", { class: "empty locked", text: "Enter an API key above to see the documents." }));
  $("#doc-range").textContent = "";
  setStatus("waiting for an API key");
}

function readConfig(fieldset) {
  const get = name => fieldset.querySelector(`[name=${name}]`).value;
  const channels = [...fieldset.querySelectorAll("[name=channel]:checked")].map(i => i.value);
  const out = {
    unit: get("unit"), fusion: get("fusion"), multihop_mode: get("multihop_mode"), strategy: get("strategy"),
    max_passages: parseInt(get("max_passages"), 10), token_budget: parseInt(get("token_budget"), 10),
    channels,
  };
  // weighted fusion uses the knowledge base's weights (a channel they do not name counts 0.5)
  if (channels.some(c => c.startsWith("hyde"))) out.hyde_mode = get("hyde_mode");
  return out;
}

// ------------------------------------------------------------------ asking
async function ask(event) {
  event.preventDefault();
  showError("");
  const question = $("#question").value.trim();
  if (!question) return;
  let filter = null;
  const ftext = $("#filter").value.trim();
  if (ftext) {
    try { filter = JSON.parse(ftext); } catch (e) { showError("The filter is not valid JSON: " + e.message); return; }
  }
  const configs = [["A", $("fieldset[data-config=a]")]];
  if ($("#compare").checked) configs.push(["B", $("fieldset[data-config=b]")]);
  const results = $("#results");
  results.replaceChildren();
  results.classList.toggle("compare", configs.length > 1);
  results.setAttribute("aria-busy", "true");
  setStatus("searching…");
  $("#ask-button").disabled = true;
  try {
    const answers = await Promise.all(configs.map(([label, fs]) =>
      api(base() + "/query", { method: "POST", json: Object.assign({ question, filter, trace: true }, readConfig(fs)) })
        .then(r => [label, fs, r])));
    for (const [label, fs, r] of answers) results.append(renderResult(label, readConfig(fs), r));
    const first = answers[0][2];
    setStatus(`${first.passages.length} passages${first.no_good_match ? " (no good match)" : ""}, ${first.trace.timings_ms.total.toFixed(0)} ms`);
  } catch (e) {
    showError("The search failed: " + e.message);
    setStatus("search failed");
  } finally {
    results.removeAttribute("aria-busy");
    $("#ask-button").disabled = false;
  }
}

// Enter searches, Shift+Enter is a new line; never while an input method is composing (Chinese)
function questionKey(event) {
  if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
  event.preventDefault();
  if (!$("#ask-button").disabled) $("#query-form").requestSubmit();
}

function merged(spans) {
  // spans as disjoint [start, end) intervals, in order, with the channels of what they cover
  const out = [];
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    const last = out[out.length - 1];
    if (last && s.start <= last.end) {
      last.end = Math.max(last.end, s.end);
      for (const c of s.channels) if (!last.channels.includes(c)) last.channels.push(c);
    } else out.push({ start: s.start, end: s.end, channels: [...s.channels] });
  }
  return out;
}

function marked(text, chunks, sentences) {
  // a passage's text: the matched children on a light background (span.chunk), inside them the
  // sentences that best match the question as <mark>
  const out = el("div", { class: "text", tabindex: "0" });  // it may scroll: reachable by keyboard
  const marks = merged(sentences);
  let at = 0;
  const plain = upTo => { if (upTo > at) out.append(text.slice(at, upTo)); at = Math.max(at, upTo); };
  for (const c of merged(chunks)) {
    plain(c.start);
    const chunk = el("span", { class: "chunk", title: "found by " + c.channels.join(" + "), "data-channels": c.channels.join(" ") });
    let inAt = Math.max(c.start, at);
    for (const m of marks) {
      if (m.end <= inAt || m.start >= c.end) continue;
      const start = Math.max(m.start, inAt), end = Math.min(m.end, c.end);
      if (start > inAt) chunk.append(text.slice(inAt, start));
      chunk.append(el("mark", { "data-channels": m.channels.join(" ") }, text.slice(start, end)));
      inAt = end;
    }
    if (c.end > inAt) chunk.append(text.slice(inAt, c.end));
    out.append(chunk);
    at = Math.max(at, c.end);
  }
  plain(text.length);
  return out;
}

// a unit of the trace as a reader knows it: "source › heading > path (p. 3)"; its id as a tooltip
function unitName(trace, id) {
  const u = (trace.units || {})[id];
  if (!u) return id;
  return u.source + (u.heading_path.length ? " › " + u.heading_path.join(" > ") : "") + cite(u.location);
}

// why a passage was found: each channel's rank for it, the fused rank, the hops that found it
function renderWhy(p, trace) {
  const ids = new Set(p.matched.map(s => s.child_id));
  const keys = new Set([p.parent_id, p.doc_id, ...ids]);
  const items = [];
  for (const c of trace.channels) {
    const hits = c.hits.filter(h => ids.has(h.child_id) || (p.unit === "parent" && h.parent_id === p.parent_id));
    const best = hits.length ? hits.reduce((a, b) => (a.rank <= b.rank ? a : b)) : null;
    items.push(el("li", { "data-channel": c.name, class: best ? "hit" : "miss" },
      el("strong", { text: c.name }), best ? ` #${best.rank} (score ${best.score.toFixed(3)})` : c.error ? " failed" : " did not find it"));
  }
  const fusedAt = trace.fused.findIndex(f => keys.has(f.parent_id));
  if (fusedAt >= 0) items.push(el("li", { class: "fused" }, el("strong", { text: "fused" }), ` #${fusedAt + 1} (${trace.fusion.mode})`));
  const why = el("aside", { class: "why", "aria-label": `Why passage ${p.rank} was found` },
    el("h4", { text: "Why this passage" }), el("ul", {}, ...items));
  if (p.provenance && p.provenance.length) {
    why.append(el("p", { class: "provenance", text: "found by " + p.provenance.map(e => `hop ${e.hop} (“${e.query}”, #${e.rank})`).join(", ") }));
  }
  const marks = (p.sentences || []).length;
  why.append(el("p", { class: "why-note", text: marks
    ? `${marks} sentence${marks === 1 ? "" : "s"} marked: the ones sharing the question's words`
    : "no sentence marked: none shares the question's words" }));
  return why;
}

// how well a passage matches the question, comparable across questions (the fused score is not)
function matchNote(p) {
  const parts = [];
  if (p.similarity !== null && p.similarity !== undefined) parts.push(`similarity ${p.similarity.toFixed(3)}`);
  if (p.term_match !== null && p.term_match !== undefined) parts.push(`terms ${Math.round(p.term_match * 100)}%`);
  return parts.map(x => x + " · ").join("");
}

function renderResult(label, config, r) {
  const col = el("div", { class: "result-column", "data-config": label.toLowerCase() });
  const summary = Object.entries(config).filter(([k]) => k !== "weights")
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join("+") : v}`).join(", ");
  col.append(el("h3", { text: `Configuration ${label}` }), el("p", { class: "config-summary", text: summary }));
  if (r.no_good_match) {
    // nothing matched well: say why, and that what follows (if anything) is weak
    col.append(el("p", { class: "no-good-match", role: "status",
      text: "No good match: " + r.match.reason + (r.passages.length ? ". The passages below are weak." : ".") }));
  } else if (!r.passages.length && !(r.warnings || []).length) col.append(el("p", { class: "empty", text: "no passages found" }));
  for (const w of r.warnings || []) {
    // why nothing was found, where the server can tell: an empty knowledge base, a filter value
    // no document holds (with the values nearest to it)
    col.append(el("p", { class: "warning", role: "status", text: "Why nothing was found: " + w }));
  }
  for (const p of r.passages) {
    const heading = (p.heading_path.length ? " › " + p.heading_path.join(" > ") : "") + cite(p.location);
    const art = el("article", { class: "passage", "data-rank": p.rank, "data-source": p.source },
      el("header", {},
        el("span", { class: "rank", text: "#" + p.rank }),
        el("span", { class: "where", text: p.source + heading }),
        el("span", { class: "meta", text: `${p.unit} · ${matchNote(p)}score ${p.score.toFixed(4)} · ${p.tokens} tokens${p.truncated ? " · truncated" : ""}` })),
      el("div", { class: "body" }, marked(p.text, p.matched, p.sentences || []), renderWhy(p, r.trace)));
    col.append(art);
  }
  col.append(renderTrace(r.trace));
  return col;
}

function table(head, rows) {
  // in a box that scrolls sideways on a narrow screen (the page itself never does)
  return el("div", { class: "table-box", tabindex: "0" }, el("table", {}, el("thead", {}, el("tr", {}, ...head.map(h => el("th", { scope: "col", text: h })))),
    el("tbody", {}, ...rows.map(row => el("tr", {}, ...row.map(c => (c instanceof Node ? el("td", {}, c) : el("td", { text: c }))))))));
}

function named(trace, id) {
  return el("span", { class: "unit-name", title: id, text: unitName(trace, id) });
}

function renderTrace(t) {
  const d = el("details", { class: "trace" }, el("summary", { text: "Trace: every channel, fusion, timings" }));
  const fusion = Object.entries(t.fusion).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join(", ");
  d.append(el("p", { text: `language ${t.language} · generation ${t.generation} · fusion: ${fusion}` }));
  d.append(el("h4", { text: "Channels" }), table(["channel", "hits", "entries", "ms", "error"],
    t.channels.map(c => [c.name, c.hits.length, c.raw_children, c.elapsed_ms.toFixed(1), c.error || ""])));
  for (const c of t.channels) {
    if (!c.hits.length) continue;
    const sec = el("details", { class: "channel-hits" }, el("summary", { text: `${c.name}: top hits (raw scores)` }));
    sec.append(table(["rank", "section", "raw score"], c.hits.slice(0, 10).map(h => [h.rank, named(t, h.parent_id), h.score.toFixed(4)])));
    d.append(sec);
  }
  d.append(el("h4", { text: "Fused ranking" }), table(["rank", "unit", "fused score"],
    t.fused.slice(0, 10).map((f, i) => [i + 1, named(t, f.parent_id), f.score.toFixed(5)])));
  d.append(el("h4", { text: "Timings (ms)" }), table(Object.keys(t.timings_ms), [Object.values(t.timings_ms).map(v => v.toFixed(1))]));
  const tr = t.transforms || {};
  if (tr.rewrite) d.append(el("p", { class: "rewrite", text: `rewrite: ${tr.rewrite.rewritten || "(failed: " + tr.rewrite.error + ")"}` }));
  if (tr.hyde) {
    d.append(el("h4", { text: `HyDE (${tr.hyde.mode})` }));
    for (const h of tr.hyde.hypotheses) d.append(el("blockquote", { class: "hypothesis", text: h }));
    for (const e of tr.hyde.errors) d.append(el("p", { class: "error", text: e }));
  }
  if (tr.multi_query) d.append(el("p", { text: "multi-query: " + tr.multi_query.queries.join(" | ") }));
  if (t.rerank) d.append(el("p", { text: `rerank ${t.rerank.model}: judged ${t.rerank.judged}` + (t.rerank.error ? ` (${t.rerank.error})` : "") }));
  if (t.strategy) {
    const st = t.strategy;
    d.append(el("p", { class: "strategy", text: st.strategy === "auto"
      ? `strategy auto: chose ${st.chosen} (${st.reason})`
      : `strategy ${st.strategy}: channels ${st.channels.join(", ")}; multi-hop ${st.multihop}; unit ${st.unit}` }));
  }
  if (t.multihop) {
    d.append(el("h4", { text: `Multi-hop (${t.multihop.mode}): stopped by ${t.multihop.stop}` }),
      table(["hop", "queries", "new units", "gain", "merged"], t.multihop.hops.map(h =>
        [h.hop, h.queries.join(" | "), h.new_units.length, h.gain === null ? "" : h.gain, h.merged ? "yes" : "no"])));
  }
  return d;
}

// ------------------------------------------------------------------ documents and uploads
async function loadDocuments() {
  const list = $("#documents");
  const st = state.docs;
  const [sort, order] = st.sort.split(":");
  const params = new URLSearchParams({ offset: st.offset, limit: PAGE, sort, order });
  if (st.q) params.set("q", st.q);
  try {
    const r = await api(`${base()}/documents?${params}`);
    if (!r.documents.length && st.offset > 0 && r.total > 0) {  // the last page emptied: go back one
      st.offset = Math.max(0, Math.floor((r.total - 1) / PAGE) * PAGE);
      return loadDocuments();
    }
    st.total = r.total;
    list.replaceChildren(...r.documents.map(d => {
      const name = d.title && d.title !== d.source ? d.title : "";
      const item = el("li", { class: "doc", "data-doc": d.doc_id, "data-source": d.source },
        el("div", { class: "doc-name" },
          el("span", { class: "doc-source", text: d.source }),
          name ? el("span", { class: "doc-title", text: name }) : ""),
        el("div", { class: "doc-counts", text: `${d.parents} section${d.parents === 1 ? "" : "s"} · ${d.format}` }),
        el("div", { class: "doc-actions" },
          el("button", { type: "button", class: "view secondary", text: "View", "aria-label": `View ${d.source}`, onclick: () => viewDocument(d) }),
          el("button", { type: "button", class: "delete", text: "Delete", "aria-label": `Delete ${d.source}`, onclick: () => removeDocument(d) })));
      if (st.fresh !== null && d.generation === st.fresh) item.classList.add("fresh");
      return item;
    }));
    if (!r.documents.length) list.append(el("li", { class: "empty", text: st.q ? `no document matches “${st.q}”` : "no documents yet" }));
    const first = r.total ? st.offset + 1 : 0, last = st.offset + r.documents.length;
    $("#doc-range").textContent = `${first}–${last} of ${r.total}`;
    $("#doc-prev").disabled = st.offset === 0;
    $("#doc-next").disabled = last >= r.total;
  } catch (e) {
    list.replaceChildren(el("li", { class: "error", text: e.message }));
    $("#doc-range").textContent = "";
  }
}

let searchTimer = null;
function searchDocuments() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    state.docs.q = $("#doc-search").value.trim();
    state.docs.offset = 0;
    loadDocuments();
  }, 250);
}

function turnPage(step) {
  state.docs.offset = Math.max(0, state.docs.offset + step * PAGE);
  loadDocuments();
}

// where a passage or section is in its source: (p. 3), (pp. 3-5), (slide 2)
function cite(location) {
  if (!location) return "";
  const [[kind, v]] = Object.entries(location);
  const label = { page: "p.", pages: "pp.", slide: "slide", slides: "slides" }[kind] || kind;
  return ` (${label} ${Array.isArray(v) ? v.join("-") : v})`;
}

// what became of each scanned page (kb.files.scanned_pages), a line a run of pages that fared alike
const SCAN_STATES = { ocr: "read by OCR", rotated: "found turned {r} degrees counterclockwise, read upright by OCR",
  empty: "read by OCR, no text found", ocr_missing: "left out: OCR is not installed (ocr_missing)" };
function scanRuns(pages) {
  const runs = [];
  for (const p of pages) {
    const what = (SCAN_STATES[p.state] || p.state).replace("{r}", String(p.rotated));
    const last = runs[runs.length - 1];
    if (last && last.to === p.page - 1 && last.what === what) last.to = p.page;
    else runs.push({ from: p.page, to: p.page, what });
  }
  return runs.map(r => `${r.from === r.to ? `page ${r.from}` : `pages ${r.from}-${r.to}`}: ${r.what}`);
}

// how a document was read: its heading tree, its sections with pages, tables and chunks
async function viewDocument(d) {
  const box = $("#document-view");
  try {
    const v = await api(`${base()}/documents/${encodeURIComponent(d.doc_id)}/view`);
    const doc = v.document;
    const items = [el("div", { class: "view-head" },
      el("h3", { id: "document-view-title", text: `${doc.source} — ${doc.title}` }),
      el("button", { type: "button", class: "close secondary", text: "Close", onclick: () => box.close() })),
      el("p", { class: "doc-meta", text: `${doc.format} · ${doc.parents} sections · ${doc.children} entries` +
        (v.pages ? ` · ${v.pages} page${v.pages === 1 ? "" : "s"}` : "") + (v.ocr_pages.length ? ` · OCR: pages ${v.ocr_pages.join(", ")}` : "") })];
    const scans = scanRuns(v.scanned_pages || []);
    if (scans.length) {
      items.push(el("h4", { text: "Scanned pages" }), el("ul", { class: "scanned" }, ...scans.map(t => el("li", { text: t }))));
    }
    if (v.outline.length) {
      items.push(el("h4", { text: "Headings" }),
        el("ul", { class: "outline" }, ...v.outline.map(h => el("li", { style: `margin-left:${(h.level - 1) * 1.2}em`, text: h.heading }))));
    }
    items.push(el("h4", { text: "Sections and chunks" }));
    for (const p of v.parents) {
      const kinds = {};
      for (const e of p.entries) kinds[e.kind] = (kinds[e.kind] || 0) + 1;
      const range = p.location ? [].concat(Object.values(p.location)[0]) : [];
      const ocr = v.ocr_pages.some(n => range.length && n >= range[0] && n <= range[range.length - 1]);
      const summary = `${p.heading_path.join(" > ") || "(no heading)"}${cite(p.location)} · ${p.tokens} tokens` +
        (p.tables ? ` · ${p.tables} table(s)` : "") + (ocr ? " · read by OCR" : "") + " · " +
        Object.entries(kinds).map(([k, n]) => `${n} ${k}`).join(", ");
      items.push(el("details", { class: "section", "data-parent": p.parent_id },
        el("summary", { text: summary }), chunked(p.text, p.entries.filter(e => e.kind === "chunk"))));
    }
    box.replaceChildren(...items);
    if (!box.open) box.showModal();  // Escape or Close shuts it; focus returns to the View button
  } catch (e) { showError(e.message); }
}

// a section's text with its chunks told apart (alternating backgrounds; the chunk's id as a tooltip)
function chunked(text, chunks) {
  const out = el("div", { class: "text", tabindex: "0" });
  let at = 0;
  chunks.sort((a, b) => a.start - b.start).forEach((c, i) => {
    const start = Math.max(c.start, at);
    if (c.end <= start) return;
    if (start > at) out.append(text.slice(at, start));
    out.append(el("span", { class: i % 2 ? "chunk alt" : "chunk", title: c.child_id }, text.slice(start, c.end)));
    at = c.end;
  });
  if (at < text.length) out.append(text.slice(at));
  return out;
}

async function removeDocument(d) {
  if (!confirm(`Delete ${d.source}?`)) return;
  try {
    let job = await api(`${base()}/documents/${encodeURIComponent(d.doc_id)}`, { method: "DELETE" });
    while (job.state === "queued" || job.state === "running") {  // a delete is a job on the writer
      await new Promise(res => setTimeout(res, 300));
      job = await api(`${base()}/jobs/${job.id}`);
    }
    if (job.state === "failed") throw new Error(job.error);
    await loadDocuments();
  } catch (e) { showError(e.message); }
}

async function upload(event) {
  event.preventDefault();
  showError("");
  const files = $("#files").files;
  if (!files.length) return;
  const form = new FormData();
  for (const f of files) form.append("files", f, f.name);
  const box = $("#job");
  try {
    let job = await api(base() + "/files", { method: "POST", body: form });
    while (job.state === "queued" || job.state === "running") {
      box.textContent = `ingest ${job.state}: ${job.phase} ${job.progress.done}` +
        (job.progress.total == null ? "" : `/${job.progress.total}`);
      await new Promise(res => setTimeout(res, 400));
      job = await api(`${base()}/jobs/${job.id}`);
    }
    if (job.state === "failed") throw new Error(job.error);
    const rep = job.report;
    box.textContent = `ingest done: ${rep.added.length} added, ${rep.updated.length} updated, ` +
      `${rep.unchanged.length} unchanged, ${rep.skipped.length} skipped` +
      rep.skipped.map(s => ` (${s.path}: ${s.reason})`).join("");
    box.dataset.state = "done";
    $("#files").value = "";
    // what the upload wrote: newest first, marked
    Object.assign(state.docs, { q: "", sort: "generation:desc", offset: 0, fresh: rep.generation });
    $("#doc-search").value = "";
    $("#doc-sort").value = "generation:desc";
    await loadDocuments();
  } catch (e) {
    box.textContent = "";
    showError("The upload failed: " + e.message);
  }
}

// ------------------------------------------------------------------ start
async function loadKb() {
  state.settings = await api(base() + "/settings");
  for (const fs of document.querySelectorAll("fieldset.config")) buildConfig(fs);
  state.docs.offset = 0;
  await loadDocuments();
  setStatus("ready");
}

async function start() {
  $("#apikey").value = state.key = localStorage.getItem("ragsift-key") || "";
  try {
    const r = await api("/v1/kbs");
    state.defaultKb = r.default;
    $("#kb").replaceChildren(...r.kbs.map(k => el("option", { value: k, text: k })));
    $("#kb").value = r.default;
    $("#kb").disabled = false;
    showError("");  // the key is accepted: a banner from an earlier key (a 401) is stale
    await loadKb();
  } catch (e) {
    const locked = e.message.startsWith("401");
    if (locked) showLocked();
    showError(e.message + (locked ? " — enter an API key above" : ""));
  }
}

$("#query-form").addEventListener("submit", ask);
$("#question").addEventListener("keydown", questionKey);
$("#doc-search").addEventListener("input", searchDocuments);
$("#doc-sort").addEventListener("change", e => { state.docs.sort = e.target.value; state.docs.offset = 0; loadDocuments(); });
$("#doc-prev").addEventListener("click", () => turnPage(-1));
$("#doc-next").addEventListener("click", () => turnPage(1));
$("#upload-form").addEventListener("submit", upload);
$("#compare").addEventListener("change", e => {
  $("fieldset[data-config=b]").hidden = !e.target.checked;
  if (e.target.checked) $("#settings").open = true;
});
// on a phone the settings start folded, so the question and its passages come first
if (window.matchMedia("(max-width: 900px)").matches) $("#settings").open = false;
$("#kb").addEventListener("change", () => loadKb().catch(e => showError(e.message)));
$("#apikey").addEventListener("change", e => {
  const key = e.target.value.trim();
  if (key === state.key) return;  // a blur after a programmatic change: nothing new
  localStorage.setItem("ragsift-key", key);
  start();
});
start();
