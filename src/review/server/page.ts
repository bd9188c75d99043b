// The review page: one HTML document, its script and style inline, nothing loaded from elsewhere.
// The takes come from the JSON API and live events; every text of a take is put in as text (never as
// markup), so a note or an id cannot run on the page.
import { PAGE_SCRIPT } from "./page-script.js";

export interface PageOptions {
  /** The CSP nonce of the inline script. */
  readonly nonce: string;
  readonly title: string;
  readonly reviewer: string | null;
}

/** The height of one video's row: every row is as high, so the list draws only the rows in view. */
const ROW_PX = 250;

const STYLE = `
body{font:14px system-ui,sans-serif;margin:0;background:#111;color:#ddd}
header{position:sticky;top:0;background:#1b1b1b;padding:8px 12px;display:flex;gap:8px;align-items:center;flex-wrap:wrap;z-index:2;border-bottom:1px solid #333}
header h1{font-size:15px;margin:0 12px 0 0}
button{background:#2a2a2a;color:#ddd;border:1px solid #444;border-radius:4px;padding:3px 8px;cursor:pointer}
button[aria-pressed=true]{background:#3a5a8a;border-color:#6a8aca}
input,select{background:#222;color:#ddd;border:1px solid #444;border-radius:4px;padding:3px 6px}
#counts{margin-left:auto;color:#aaa}
#vars label{margin-right:6px;color:#aaa}
#message{padding:4px 12px;min-height:18px;color:#fc6}
main{position:relative;margin:8px 12px}
section.video{position:absolute;left:0;right:0;box-sizing:border-box;height:${ROW_PX - 8}px;padding:6px;border:2px solid transparent;border-radius:6px;overflow:hidden}
section.video.current{border-color:#555}
section.video h2{font-size:13px;margin:0 0 6px;color:#bbb;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.var{margin-left:8px;padding:0 5px;border-radius:3px;background:#2c3440;color:#cde;font-weight:normal}
.takes{display:flex;gap:10px;overflow-x:auto;overflow-y:hidden}
figure.take{margin:0;flex:0 0 240px;box-sizing:border-box;background:#1c1c1c;border:2px solid #333;border-radius:6px;padding:4px}
figure.take.current{border-color:#6a8aca}
figure.take.approved{box-shadow:inset 0 0 0 2px #3c3}
figure.take.rejected{opacity:.6}
figure.take video,figure.take .novideo{width:100%;aspect-ratio:16/9;background:#000;display:block;object-fit:contain}
figure.take .novideo{display:flex;align-items:center;justify-content:center;color:#888;overflow:hidden}
figcaption{font-size:12px;line-height:1.4;padding-top:3px}
figcaption div{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
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
<span id="vars"></span>
<input id="search" type="search" placeholder="search (/)" aria-label="search">
<button id="helpbutton" title="keys">?</button>
<span id="who"></span>
<span id="counts"></span>
</header>
<div id="message" role="status"></div>
<main id="takes"></main>
<div id="help" hidden>${HELP}</div>
<form id="noteform" hidden><label>Why rejected? <input id="note" maxlength="2000" autocomplete="off"></label> <button>reject</button></form>
<script id="config" type="application/json">${scriptJson({ reviewer: options.reviewer, rowPx: ROW_PX })}</script>
<script nonce="${options.nonce}">${PAGE_SCRIPT}</script>
</body></html>
`;
}
