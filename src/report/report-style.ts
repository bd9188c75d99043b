// The style of OUT/index.html, inlined into the page (allowed by its hash in the page's
// Content-Security-Policy) so that it opens from the file system with no server, no network and no
// files to copy at build time.

export const REPORT_CSS = `
:root{color-scheme:light dark;--bg:#f5f6f8;--fg:#1b1f24;--muted:#5b6470;--card:#fff;--line:#dce0e5;
--ok:#1a7f37;--fail:#cf222e;--warn:#9a6700;--cancel:#6e7781;--active:#0969da;
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;--card:#161b22;
--line:#30363d;--ok:#3fb950;--fail:#f85149;--warn:#d29922;--cancel:#8d96a0;--active:#4493f8}}
*{box-sizing:border-box}
[hidden]{display:none!important}
body{margin:0;background:var(--bg);color:var(--fg)}
a{color:var(--active)}
.page-head{padding:20px 24px 4px}
h1{margin:0;font-size:22px}
.meta{margin:4px 0 0;color:var(--muted)}
.tiles{display:flex;flex-wrap:wrap;gap:8px;padding:12px 24px 8px}
.tile{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:6px 14px;min-width:104px;
font:inherit;color:inherit;text-align:left}
button.tile{cursor:pointer}
button.tile:hover{border-color:var(--st,var(--active))}
button.tile[aria-pressed=true]{outline:2px solid var(--st,var(--active));outline-offset:-1px}
.banner{margin:10px 24px 0;padding:10px 14px;border-radius:8px;border:1px solid var(--bn);
background:color-mix(in srgb,var(--bn) 12%,var(--card));display:flex;flex-wrap:wrap;gap:4px 10px;align-items:baseline}
.banner .detail{color:var(--muted);overflow-wrap:anywhere}
.banner .next{flex-basis:100%}
.b-ok{--bn:var(--ok)}.b-warn{--bn:var(--warn)}.b-stop{--bn:var(--fail)}.b-live{--bn:var(--active)}
.thumb{width:44px;height:44px;object-fit:cover;border-radius:6px;border:1px solid var(--line);flex:none}
.chunks .voice{color:var(--muted)}
.tile b{display:block;font-size:22px;font-variant-numeric:tabular-nums}
.tile span{color:var(--muted)}
.summary{padding:4px 24px 12px;overflow-x:auto}
table{border-collapse:collapse;background:var(--card);border:1px solid var(--line)}
th,td{padding:5px 12px;text-align:right;border-bottom:1px solid var(--line);font-variant-numeric:tabular-nums;white-space:nowrap}
th:first-child,td:first-child{text-align:left}
thead th{color:var(--muted);font-weight:600}
tfoot td{font-weight:600;border-bottom:0}
.controls{position:sticky;top:0;z-index:2;display:flex;flex-wrap:wrap;gap:10px 16px;align-items:center;
padding:10px 24px;background:var(--bg);border-bottom:1px solid var(--line)}
.controls label{display:flex;gap:6px;align-items:center}
.controls select,.controls input,.controls button{font:inherit;padding:3px 6px}
.controls input[type=search]{width:280px;max-width:100%}
#shown,#page-at{color:var(--muted)}
#empty{padding:24px;color:var(--muted)}
#cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:14px;padding:16px 24px 40px}
.card{background:var(--card);border:1px solid var(--line);border-top:3px solid var(--st,var(--line));
border-radius:8px;overflow:hidden;display:flex;flex-direction:column;
content-visibility:auto;contain-intrinsic-size:auto 300px auto 380px}
.card.shell{min-height:380px}
.media{height:190px;background:#0b0d10;display:flex;align-items:center;justify-content:center;color:#9aa4ae;
text-align:center;padding:0}
.media video{width:100%;height:100%;object-fit:contain;display:block}
.media .note{padding:8px 16px}
.body{padding:10px 12px 12px;display:flex;flex-direction:column;gap:6px;min-width:0}
.head{display:flex;gap:8px;align-items:center;justify-content:space-between}
.name{margin:0;font-size:15px;font-weight:600;overflow-wrap:anywhere;flex:1;min-width:0}
.name .manifest{color:var(--muted);font-weight:400}
.status{font-size:12px;font-weight:600;border:1px solid currentColor;border-radius:10px;padding:0 8px;
color:var(--st,var(--muted));white-space:nowrap}
.run-mark{font-size:12px;border:1px dashed currentColor;border-radius:10px;padding:0 8px;color:var(--active);
white-space:nowrap}
.spec,.times{margin:0;color:var(--muted);overflow-wrap:anywhere}
.chunks{margin:0;padding-left:20px;overflow-wrap:anywhere;white-space:pre-wrap}
.chunks li+li{margin-top:2px}
.chunks .dur{color:var(--muted);margin-right:6px}
.chunks .kind{color:var(--muted)}
.error{margin:0;padding:6px 8px;border-radius:6px;background:color-mix(in srgb,var(--fail) 12%,transparent);
color:var(--fg);overflow-wrap:anywhere;white-space:pre-wrap}
.links{margin:0;display:flex;gap:12px}
.decision{margin:0;font-weight:600;overflow-wrap:anywhere;white-space:pre-wrap}
.d-approved{color:var(--ok)}.d-rejected{color:var(--fail)}
.s-success{--st:var(--ok)}.s-fail{--st:var(--fail)}.s-uncertain{--st:var(--warn)}
.s-canceled{--st:var(--cancel)}.s-active{--st:var(--active)}
.tile.s-success b,.tile.s-fail b,.tile.s-uncertain b,.tile.s-canceled b,.tile.s-active b{color:var(--st)}
`;
