// ragsift's web page: ask, see passages with their matched spans and the trace, compare two
// configurations, upload files and manage documents. Plain JavaScript, no build step; all text
// from the server is inserted as text, never as HTML.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const state = { kbs: [], defaultKb: "default", settings: null, key: "" };

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
  for (const name of state.settings.channels) {
    const input = el("input", { type: "checkbox", name: "channel", value: name });
    input.checked = s.query.channels.includes(name);
    box.append(el("label", {}, input, " " + name));
  }
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
  setStatus("searching…");
  $("#ask-button").disabled = true;
  try {
    const answers = await Promise.all(configs.map(([label, fs]) =>
      api(base() + "/query", { method: "POST", json: Object.assign({ question, filter, trace: true }, readConfig(fs)) })
        .then(r => [label, fs, r])));
    for (const [label, fs, r] of answers) results.append(renderResult(label, readConfig(fs), r));
    setStatus(`${answers[0][2].passages.length} passages, ${answers[0][2].trace.timings_ms.total.toFixed(0)} ms`);
  } catch (e) {
    showError(e.message);
    setStatus("");
  } finally {
    $("#ask-button").disabled = false;
  }
}

function highlighted(text, spans) {
  // the matched child spans of a passage, as <mark> elements in its text
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  const out = el("div", { class: "text" });
  let at = 0;
  for (const s of sorted) {
    const start = Math.max(s.start, at);
    if (s.end <= start) continue;
    if (start > at) out.append(text.slice(at, start));
    out.append(el("mark", { title: "found by " + s.channels.join(" + "), "data-channels": s.channels.join(" ") },
      text.slice(start, s.end)));
    at = s.end;
  }
  if (at < text.length) out.append(text.slice(at));
  return out;
}

function renderResult(label, config, r) {
  const col = el("div", { class: "result-column", "data-config": label.toLowerCase() });
  const summary = Object.entries(config).filter(([k]) => k !== "weights")
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join("+") : v}`).join(", ");
  col.append(el("h3", { text: `Configuration ${label}` }), el("p", { class: "config-summary", text: summary }));
  if (!r.passages.length) col.append(el("p", { class: "empty", text: "no passages found" }));
  for (const p of r.passages) {
    const heading = (p.heading_path.length ? " › " + p.heading_path.join(" > ") : "") + cite(p.location);
    const art = el("article", { class: "passage", "data-rank": p.rank, "data-source": p.source },
      el("header", {},
        el("span", { class: "rank", text: "#" + p.rank }),
        el("span", { class: "where", text: p.source + heading }),
        el("span", { class: "meta", text: `${p.unit} · score ${p.score.toFixed(4)} · ${p.tokens} tokens${p.truncated ? " · truncated" : ""}` })),
      highlighted(p.text, p.matched));
    if (p.provenance && p.provenance.length) {
      art.append(el("p", { class: "provenance", text: "found by " + p.provenance.map(e => `hop ${e.hop} (“${e.query}”, #${e.rank})`).join(", ") }));
    }
    col.append(art);
  }
  col.append(renderTrace(r.trace));
  return col;
}

function table(head, rows) {
  return el("table", {}, el("thead", {}, el("tr", {}, ...head.map(h => el("th", { text: h })))),
    el("tbody", {}, ...rows.map(row => el("tr", {}, ...row.map(c => el("td", { text: c }))))));
}

function renderTrace(t) {
  const d = el("details", { class: "trace" }, el("summary", { text: "Trace" }));
  const fusion = Object.entries(t.fusion).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join(", ");
  d.append(el("p", { text: `language ${t.language} · generation ${t.generation} · fusion: ${fusion}` }));
  d.append(el("h4", { text: "Channels" }), table(["channel", "hits", "entries", "ms", "error"],
    t.channels.map(c => [c.name, c.hits.length, c.raw_children, c.elapsed_ms.toFixed(1), c.error || ""])));
  for (const c of t.channels) {
    if (!c.hits.length) continue;
    const sec = el("details", { class: "channel-hits" }, el("summary", { text: `${c.name}: top hits (raw scores)` }));
    sec.append(table(["rank", "unit", "raw score"], c.hits.slice(0, 10).map(h => [h.rank, h.parent_id, h.score.toFixed(4)])));
    d.append(sec);
  }
  d.append(el("h4", { text: "Fused ranking" }), table(["rank", "unit", "fused score"],
    t.fused.slice(0, 10).map((f, i) => [i + 1, f.parent_id, f.score.toFixed(5)])));
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
  const body = $("#documents tbody");
  try {
    const r = await api(base() + "/documents?limit=500");
    body.replaceChildren(...r.documents.map(d => el("tr", { "data-doc": d.doc_id },
      el("td", { text: d.source }), el("td", { text: d.title }), el("td", { text: d.parents }),
      el("td", {}, el("button", { class: "view", text: "View", onclick: () => viewDocument(d) })),
      el("td", {}, el("button", { class: "delete", text: "Delete", onclick: () => removeDocument(d) })))));
  } catch (e) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 4, text: e.message })));
  }
}

// where a passage or section is in its source: (p. 3), (pp. 3-5), (slide 2)
function cite(location) {
  if (!location) return "";
  const [[kind, v]] = Object.entries(location);
  const label = { page: "p.", pages: "pp.", slide: "slide", slides: "slides" }[kind] || kind;
  return ` (${label} ${Array.isArray(v) ? v.join("-") : v})`;
}

// how a document was read: its heading tree, its sections with pages, tables and chunks
async function viewDocument(d) {
  const box = $("#document-view");
  try {
    const v = await api(`${base()}/documents/${encodeURIComponent(d.doc_id)}/view`);
    const doc = v.document;
    const items = [el("h3", { text: `${doc.source} — ${doc.title}` }),
      el("p", { class: "doc-meta", text: `${doc.format} · ${doc.parents} sections · ${doc.children} entries` +
        (v.pages ? ` · ${v.pages} page${v.pages === 1 ? "" : "s"}` : "") + (v.ocr_pages.length ? ` · OCR: pages ${v.ocr_pages.join(", ")}` : "") }),
      el("button", { class: "close", text: "Close", onclick: () => { box.hidden = true; } })];
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
      const chunks = p.entries.filter(e => e.kind === "chunk")
        .map(e => ({ child_id: e.child_id, start: e.start, end: e.end, channels: [e.child_id.split("#").pop()] }));
      items.push(el("details", { class: "section", "data-parent": p.parent_id },
        el("summary", { text: summary }), highlighted(p.text, chunks)));
    }
    box.replaceChildren(...items);
    box.hidden = false;
    box.scrollIntoView({ behavior: "smooth", block: "start" });
  } catch (e) { showError(e.message); }
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
    await loadDocuments();
  } catch (e) {
    box.textContent = "";
    showError(e.message);
  }
}

// ------------------------------------------------------------------ start
async function loadKb() {
  state.settings = await api(base() + "/settings");
  for (const fs of document.querySelectorAll("fieldset.config")) buildConfig(fs);
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
    await loadKb();
  } catch (e) {
    showError(e.message + (e.message.startsWith("401") ? " — enter an API key above" : ""));
  }
}

$("#query-form").addEventListener("submit", ask);
$("#upload-form").addEventListener("submit", upload);
$("#compare").addEventListener("change", e => { $("fieldset[data-config=b]").hidden = !e.target.checked; });
$("#kb").addEventListener("change", () => loadKb().catch(e => showError(e.message)));
$("#apikey").addEventListener("change", e => {
  const key = e.target.value.trim();
  if (key === state.key) return;  // a blur after a programmatic change: nothing new
  localStorage.setItem("ragsift-key", key);
  start();
});
start();
