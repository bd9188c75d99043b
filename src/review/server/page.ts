// The review page: one HTML document, its script and style inline, nothing loaded from elsewhere.
// The takes come from the JSON API and live events; every text of a take is put in as text (never as
// markup), so a note or an id cannot run on the page.

export interface PageOptions {
  /** The CSP nonce of the inline script. */
  readonly nonce: string;
  readonly title: string;
  readonly reviewer: string | null;
}

const STYLE = `
body{font:14px system-ui,sans-serif;margin:0;background:#111;color:#ddd}
header{position:sticky;top:0;background:#1b1b1b;padding:8px 12px;display:flex;gap:8px;align-items:center;flex-wrap:wrap;z-index:2;border-bottom:1px solid #333}
header h1{font-size:15px;margin:0 12px 0 0}
button{background:#2a2a2a;color:#ddd;border:1px solid #444;border-radius:4px;padding:3px 8px;cursor:pointer}
button[aria-pressed=true]{background:#3a5a8a;border-color:#6a8aca}
input{background:#222;color:#ddd;border:1px solid #444;border-radius:4px;padding:3px 6px}
#counts{margin-left:auto;color:#aaa}
#message{padding:4px 12px;min-height:18px;color:#fc6}
main{padding:8px 12px}
section.video{margin:0 0 14px;padding:6px;border:2px solid transparent;border-radius:6px}
section.video.current{border-color:#555}
section.video h2{font-size:13px;margin:0 0 6px;color:#bbb}
.takes{display:flex;gap:10px;flex-wrap:wrap}
figure.take{margin:0;width:240px;background:#1c1c1c;border:2px solid #333;border-radius:6px;padding:4px}
figure.take.current{border-color:#6a8aca}
figure.take.approved{box-shadow:inset 0 0 0 2px #3c3}
figure.take.rejected{opacity:.6}
figure.take video,figure.take .novideo{width:100%;aspect-ratio:16/9;background:#000;display:block}
figure.take .novideo{display:flex;align-items:center;justify-content:center;color:#888}
figcaption{font-size:12px;line-height:1.4;padding-top:3px;word-break:break-word}
.decision.approved{color:#5d5}.decision.rejected{color:#e66}
#help,#noteform{position:fixed;inset:auto 20px 20px auto;background:#222;border:1px solid #555;border-radius:6px;padding:10px 14px;z-index:3}
#help[hidden],#noteform[hidden]{display:none}
kbd{background:#333;border-radius:3px;padding:0 4px}
`;

const HELP = `<h3 style="margin:0 0 6px">Keys</h3>
<div><kbd>j</kbd>/<kbd>k</kbd> next / previous video</div>
<div><kbd>l</kbd>/<kbd>h</kbd> next / previous take</div>
<div><kbd>a</kbd> approve · <kbd>r</kbd> reject (with a note)</div>
<div><kbd>t</kbd> retake: one more take, a paid generation (asks first)</div>
<div><kbd>u</kbd> undo the take's latest decision</div>
<div><kbd>?</kbd> this help</div>`;

// The page's script: state (takes by job), the view (groups of takes by video), keys, API calls.
const SCRIPT = String.raw`
"use strict";
const config = JSON.parse(document.getElementById("config").textContent);
const takes = new Map();
let filter = "all", query = "", videoAt = 0, takeAt = 0;
const sections = new Map(), figures = new Map();
const $ = (id) => document.getElementById(id);
const FAILED = new Set(["Fail", "Canceled", "uncertain"]);
const say = (text) => { $("message").textContent = text; };

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
  if (query) {
    const hay = [t.job, t.status, t.note || "", t.reviewer || "", String(t.seed)].join(" ").toLowerCase();
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
  const list = [...byVideo].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [, ts] of list) ts.sort((a, b) => a.take - b.take);
  return list;
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

function place(parent, node, i) {
  if (parent.children[i] !== node) parent.insertBefore(node, parent.children[i] || null);
}

function render() {
  const list = groups();
  const main = $("takes");
  const shown = new Set();
  list.forEach(([key, ts], i) => {
    let sec = sections.get(key);
    if (!sec) {
      sec = document.createElement("section"); sec.className = "video"; sec.dataset.video = key;
      const h = document.createElement("h2"); h.textContent = key;
      const row = document.createElement("div"); row.className = "takes";
      sec.append(h, row); sections.set(key, sec);
    }
    place(main, sec, i); shown.add(sec);
    const row = sec.lastChild;
    ts.forEach((t, j) => place(row, figureOf(t), j));
    while (row.children.length > ts.length) row.lastChild.remove();
  });
  for (const sec of [...main.children]) if (!shown.has(sec)) sec.remove();
  const all = [...takes.values()];
  const n = (d) => all.filter((t) => t.status === "Success" && (t.decision || null) === d).length;
  $("counts").textContent = n("approved") + " approved · " + n("rejected") + " rejected · " + n(null) + " undecided · " + all.length + " takes";
  highlight();
}

function current() {
  const secs = $("takes").children;
  if (secs.length === 0) return null;
  videoAt = Math.max(0, Math.min(videoAt, secs.length - 1));
  const figs = secs[videoAt].lastChild.children;
  takeAt = Math.max(0, Math.min(takeAt, figs.length - 1));
  return { sec: secs[videoAt], fig: figs[takeAt] };
}

function highlight() {
  for (const el of document.querySelectorAll(".current")) el.classList.remove("current");
  const c = current();
  if (!c) return;
  c.sec.classList.add("current"); c.fig.classList.add("current");
  c.fig.scrollIntoView({ block: "nearest" });
}

function select(fig) {
  const secs = [...$("takes").children];
  videoAt = secs.indexOf(fig.closest("section"));
  takeAt = [...fig.parentNode.children].indexOf(fig);
  highlight();
}

function merge(list) { for (const t of list) takes.set(t.job, t); }

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
  const c = current();
  if (!c) return;
  const t = takes.get(c.fig.dataset.job);
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
  const c = current();
  if (!c) return;
  $("noteform").hidden = false; $("note").value = ""; $("note").focus();
}

$("noteform").addEventListener("submit", async (e) => {
  e.preventDefault();
  const c = current();
  $("noteform").hidden = true;
  if (!c) return;
  if (await post("/api/decide", { job: c.fig.dataset.job, decision: "rejected", note: $("note").value })) await refresh();
});

document.addEventListener("keydown", (e) => {
  if (e.target.tagName === "INPUT") {
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
  if (run) { e.preventDefault(); run(); }
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

const events = new EventSource("/api/events");
events.addEventListener("takes", (e) => {
  const change = JSON.parse(e.data);
  merge(change.takes);
  for (const job of change.gone) takes.delete(job);
  render();
});
events.addEventListener("open", () => { document.body.dataset.live = "true"; });
if (config.reviewer || localStorage.getItem("reel-reviewer")) reviewer();
refresh().catch(() => say("the takes could not be read"));
`;

/** `value` as JSON that is safe inside a script element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c");
}

export function reviewPage(options: PageOptions): string {
  const title = options.title.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>reel review · ${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${STYLE}</style></head>
<body>
<header>
<h1>reel review · ${title}</h1>
<button data-filter="all" aria-pressed="true">all</button>
<button data-filter="undecided" aria-pressed="false">undecided</button>
<button data-filter="approved" aria-pressed="false">approved</button>
<button data-filter="rejected" aria-pressed="false">rejected</button>
<button data-filter="failed" aria-pressed="false">failed</button>
<input id="search" type="search" placeholder="search (/)" aria-label="search">
<button id="helpbutton" title="keys">?</button>
<span id="who"></span>
<span id="counts"></span>
</header>
<div id="message" role="status"></div>
<main id="takes"></main>
<div id="help" hidden>${HELP}</div>
<form id="noteform" hidden><label>Why rejected? <input id="note" maxlength="2000" autocomplete="off"></label> <button>reject</button></form>
<script id="config" type="application/json">${scriptJson({ reviewer: options.reviewer })}</script>
<script nonce="${options.nonce}">${SCRIPT}</script>
</body></html>
`;
}
