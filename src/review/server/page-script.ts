// The review page's script (page.ts puts it inline): state (takes by job), the view (groups of
// takes by video, drawn as a windowed list: only the rows in view and a few around them are in the
// document, so 10,000 takes open as fast as 20), keys, API calls. It reads its settings (the
// reviewer, the row height) from the page's config element.

export const PAGE_SCRIPT = String.raw`
"use strict";
const config = JSON.parse(document.getElementById("config").textContent);
const ROW = config.rowPx, AROUND = 4;
const takes = new Map();
let filter = "all", query = "", videoAt = 0, takeAt = 0, list = [], varsSeen = "";
const varFilter = new Map();
const sections = new Map(), figures = new Map();
const $ = (id) => document.getElementById(id);
const FAILED = new Set(["Fail", "Canceled", "uncertain"]);
const say = (text) => { $("message").textContent = text; };
const varsText = (t) => t.vars ? Object.entries(t.vars).map(([k, v]) => k + "=" + v).join(" ") : "";

function reviewer() {
  let name = config.reviewer || localStorage.getItem("reel-reviewer");
  while (!name) {
    name = (prompt("Your name, recorded with each decision:") || "").trim();
    if (!name) return null;
    localStorage.setItem("reel-reviewer", name);
  }
  $("who").textContent = "reviewer: " + name;
  return name;
}

function matches(t) {
  if (filter === "undecided" && (t.decision !== null || t.status !== "Success")) return false;
  if (filter === "approved" && t.decision !== "approved") return false;
  if (filter === "rejected" && t.decision !== "rejected") return false;
  if (filter === "failed" && !FAILED.has(t.status)) return false;
  for (const [name, value] of varFilter) if (!t.vars || String(t.vars[name]) !== value) return false;
  if (query) {
    const hay = [t.job, t.status, t.note || "", t.reviewer || "", String(t.seed), varsText(t)].join(" ").toLowerCase();
    if (!hay.includes(query)) return false;
  }
  return true;
}

function groups() {
  const byVideo = new Map();
  for (const t of takes.values()) {
    if (!matches(t)) continue;
    const key = t.manifest + "/" + t.video;
    if (!byVideo.has(key)) byVideo.set(key, []);
    byVideo.get(key).push(t);
  }
  const sorted = [...byVideo].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [, ts] of sorted) ts.sort((a, b) => a.take - b.take);
  return sorted;
}

// One select per matrix variable, its values those the takes have; rebuilt only when they change.
function varFilters() {
  const values = new Map();
  for (const t of takes.values()) {
    for (const [k, v] of Object.entries(t.vars || {})) {
      if (!values.has(k)) values.set(k, new Set());
      values.get(k).add(String(v));
    }
  }
  const names = [...values.keys()].sort();
  const seen = JSON.stringify(names.map((k) => [k, [...values.get(k)].sort()]));
  if (seen === varsSeen) return;
  varsSeen = seen;
  const box = $("vars");
  box.replaceChildren();
  for (const name of names) {
    const label = document.createElement("label");
    label.textContent = name + " ";
    const select = document.createElement("select");
    select.dataset.var = name;
    for (const v of ["", ...[...values.get(name)].sort()]) {
      const o = document.createElement("option"); o.value = v; o.textContent = v || "any"; select.append(o);
    }
    select.value = varFilter.get(name) || "";
    select.addEventListener("change", () => {
      if (select.value) varFilter.set(name, select.value); else varFilter.delete(name);
      videoAt = 0; takeAt = 0; render(); select.blur();
    });
    label.append(select); box.append(label);
  }
}

function caption(t) {
  const parts = ["~" + t.take, t.seed === null ? "no seed" : "seed " + t.seed, t.status];
  if (t.retake) parts.push("retake of " + t.retake.from.slice(t.manifest.length + 1) + " (" + t.retake.state + ")");
  return parts.join(" · ");
}

function updateFigure(fig, t) {
  fig.className = "take" + (t.decision ? " " + t.decision : "");
  fig.dataset.decision = t.decision || "undecided";
  const media = fig.firstChild;
  if (t.src && (media.tagName !== "VIDEO" || media.getAttribute("src") !== t.src)) {
    const v = document.createElement("video");
    v.muted = true; v.loop = true; v.autoplay = true; v.playsInline = true; v.preload = "metadata";
    v.src = t.src;
    fig.replaceChild(v, media);
  } else if (!t.src && media.tagName === "VIDEO") {
    const d = document.createElement("div"); d.className = "novideo"; fig.replaceChild(d, media);
  }
  if (!t.src) fig.firstChild.textContent = t.error ? t.status + ": " + t.error : t.status;
  const cap = fig.lastChild;
  cap.replaceChildren();
  const line = document.createElement("div"); line.className = "info"; line.textContent = caption(t);
  const dec = document.createElement("div");
  dec.className = "decision " + (t.decision || "undecided");
  dec.textContent = t.decision ? t.decision + " by " + t.reviewer + (t.note ? ": " + t.note : "") : "undecided";
  dec.title = dec.textContent;
  cap.append(line, dec);
}

function figureOf(t) {
  let fig = figures.get(t.job);
  if (!fig) {
    fig = document.createElement("figure");
    fig.dataset.job = t.job;
    const media = document.createElement("div"); media.className = "novideo";
    fig.append(media, document.createElement("figcaption"));
    fig.addEventListener("click", () => select(fig));
    figures.set(t.job, fig);
  }
  updateFigure(fig, t);
  return fig;
}

function sectionOf(key, ts) {
  let sec = sections.get(key);
  if (!sec) {
    sec = document.createElement("section"); sec.className = "video"; sec.dataset.video = key;
    const h = document.createElement("h2");
    const row = document.createElement("div"); row.className = "takes";
    sec.append(h, row); sections.set(key, sec);
  }
  const h = sec.firstChild;
  h.replaceChildren(key);
  for (const [k, v] of Object.entries(ts[0].vars || {})) {
    const chip = document.createElement("span"); chip.className = "var"; chip.textContent = k + " " + v; h.append(chip);
  }
  const row = sec.lastChild;
  ts.forEach((t, j) => place(row, figureOf(t), j));
  while (row.children.length > ts.length) row.lastChild.remove();
  return sec;
}

/** A row leaves the document with its players: their downloads stop, and nothing keeps them. */
function drop(sec) {
  for (const fig of sec.querySelectorAll("figure")) {
    const v = fig.querySelector("video");
    if (v) { v.removeAttribute("src"); v.load(); }
    figures.delete(fig.dataset.job);
  }
  sections.delete(sec.dataset.video);
  sec.remove();
}

function place(parent, node, i) {
  if (parent.children[i] !== node) parent.insertBefore(node, parent.children[i] || null);
}

const mainTop = () => $("takes").getBoundingClientRect().top + scrollY;

/** Draws the rows in view (and a few around), in order; the others leave the document. */
function paint() {
  const main = $("takes");
  const top = scrollY - mainTop();
  const from = Math.max(0, Math.floor(top / ROW) - AROUND);
  const to = Math.min(list.length, Math.ceil((top + innerHeight) / ROW) + AROUND);
  const shown = new Set();
  for (let i = from; i < to; i++) {
    const [key, ts] = list[i];
    const sec = sectionOf(key, ts);
    sec.style.top = i * ROW + "px";
    sec.dataset.index = String(i);
    place(main, sec, i - from); shown.add(sec);
  }
  for (const sec of [...main.children]) if (!shown.has(sec)) drop(sec);
  mark();
}

function render() {
  varFilters();
  list = groups();
  $("takes").style.height = list.length * ROW + "px";
  let approved = 0, rejected = 0, undecided = 0;
  for (const t of takes.values()) {
    if (t.status !== "Success") continue;
    if (t.decision === "approved") approved++; else if (t.decision === "rejected") rejected++; else undecided++;
  }
  $("counts").textContent = approved + " approved · " + rejected + " rejected · " + undecided + " undecided · " + takes.size + " takes";
  paint();
}

function current() {
  if (list.length === 0) return null;
  videoAt = Math.max(0, Math.min(videoAt, list.length - 1));
  const ts = list[videoAt][1];
  takeAt = Math.max(0, Math.min(takeAt, ts.length - 1));
  return ts[takeAt];
}

function mark() {
  for (const el of document.querySelectorAll(".current")) el.classList.remove("current");
  const t = current();
  if (!t) return;
  const fig = figures.get(t.job);
  if (!fig) return;
  fig.classList.add("current"); fig.closest("section").classList.add("current");
}

/** Brings the current take into view, then marks it. */
function highlight() {
  const t = current();
  if (!t) return mark();
  const head = document.querySelector("header").offsetHeight;
  const rowTop = mainTop() + videoAt * ROW;
  if (rowTop < scrollY + head) scrollTo(0, rowTop - head - 8);
  else if (rowTop + ROW > scrollY + innerHeight) scrollTo(0, rowTop + ROW - innerHeight);
  paint();
  figures.get(t.job)?.scrollIntoView({ block: "nearest", inline: "nearest" });
}

function select(fig) {
  videoAt = Number(fig.closest("section").dataset.index);
  takeAt = [...fig.parentNode.children].indexOf(fig);
  highlight();
}

function merge(entries) { for (const t of entries) takes.set(t.job, t); }

async function refresh() {
  const res = await fetch("/api/takes");
  const body = await res.json();
  takes.clear(); merge(body.takes); render();
}

async function post(path, body) {
  const name = reviewer();
  if (!name) { say("no reviewer name: nothing recorded"); return false; }
  const res = await fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...body, reviewer: name }) });
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) { say(answer.error || "refused (" + res.status + ")"); return false; }
  return answer;
}

async function act(kind) {
  const t = current();
  if (!t) return;
  let done;
  if (kind === "approve") done = await post("/api/decide", { job: t.job, decision: "approved" });
  else if (kind === "undo") done = await post("/api/undo", { job: t.job });
  else if (kind === "retake") {
    if (!confirm("Retake " + t.job + "? One more take with a new seed: a paid generation (" + t.seconds + " s of video), sent by the next run or a running watch.")) return;
    done = await post("/api/retake", { job: t.job, note: "" });
    if (done) say("queued " + done.queued + ": sent by the next run (or a running watch); " + t.job + " rejected");
  }
  if (done) await refresh();
}

function askNote() {
  if (!current()) return;
  $("noteform").hidden = false; $("note").value = ""; $("note").focus();
}

$("noteform").addEventListener("submit", async (e) => {
  e.preventDefault();
  const t = current();
  $("noteform").hidden = true;
  if (!t) return;
  if (await post("/api/decide", { job: t.job, decision: "rejected", note: $("note").value })) await refresh();
});

document.addEventListener("keydown", (e) => {
  if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") {
    if (e.key === "Escape") { $("noteform").hidden = true; e.target.blur(); }
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const keys = {
    j: () => { videoAt++; takeAt = 0; highlight(); },
    k: () => { videoAt = Math.max(0, videoAt - 1); takeAt = 0; highlight(); },
    l: () => { takeAt++; highlight(); },
    h: () => { takeAt = Math.max(0, takeAt - 1); highlight(); },
    a: () => act("approve"),
    r: askNote,
    t: () => act("retake"),
    u: () => act("undo"),
    "?": () => { $("help").hidden = !$("help").hidden; },
    "/": () => $("search").focus(),
  };
  const run = keys[e.key];
  if (run) { e.preventDefault(); run(); performance.mark("reel-key"); }
});

for (const b of document.querySelectorAll("[data-filter]")) {
  b.addEventListener("click", () => {
    filter = b.dataset.filter;
    for (const o of document.querySelectorAll("[data-filter]")) o.setAttribute("aria-pressed", String(o === b));
    videoAt = 0; takeAt = 0; render(); b.blur();
  });
}
$("search").addEventListener("input", () => { query = $("search").value.trim().toLowerCase(); videoAt = 0; takeAt = 0; render(); });
$("helpbutton").addEventListener("click", () => { $("help").hidden = !$("help").hidden; });
let painting = false;
addEventListener("scroll", () => {
  if (painting) return;
  painting = true;
  requestAnimationFrame(() => { painting = false; paint(); });
}, { passive: true });
addEventListener("resize", () => paint());

const events = new EventSource("/api/events");
events.addEventListener("takes", (e) => {
  const change = JSON.parse(e.data);
  merge(change.takes);
  for (const job of change.gone) takes.delete(job);
  render();
});
// The stream begins with every take (and again after a reconnect): the changes that follow apply to
// exactly it, where a separate first read could miss one made between the two.
events.addEventListener("snapshot", (e) => {
  takes.clear(); merge(JSON.parse(e.data).takes); render();
  document.body.dataset.live = "true";
  if (document.body.dataset.ready !== "true") {
    document.body.dataset.ready = "true";
    performance.mark("reel-ready");
  }
});
events.addEventListener("error", () => {
  if (document.body.dataset.ready === "true") return;
  refresh().then(() => { document.body.dataset.ready = "true"; }, () => say("the takes could not be read"));
});
if (config.reviewer || localStorage.getItem("reel-reviewer")) reviewer();
`;
