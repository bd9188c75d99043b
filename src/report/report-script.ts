// The script of OUT/index.html (its style: report-style.ts), inlined so that the page opens from the
// file system with no server and no network. Plain browser JavaScript kept as a string without
// template literals: tsconfig has no DOM types (they would leak browser globals into the Node code),
// and test/report/html-report.browser.test.ts runs it in a real Chromium instead. Rules it keeps:
// - Data from manifests and the service arrives as JSON (`#reel-data`) and only ever reaches the
//   page as `textContent`, attribute values set through the DOM, or hrefs built in Node from
//   percent-encoded segments (`video`, `record`); never as markup.
// - The DOM stays small, which keeps 2,000 cards fast (built whole, 2,000 cards were ~38,000 elements
//   and ~0.6 s of script and layout): the cards come in pages of 2,000 (a folder of 100,000 jobs is
//   50 pages; only the page shown is in the document), each card starts as one empty element of about
//   its final size that an IntersectionObserver fills within a screen or so of the viewport, and
//   `content-visibility: auto` skips the layout and paint of filled cards out of view.
// - Filtering and sorting match the JSON records, not the DOM, and put the page's cards in place: a
//   card once made is kept, so a video already loaded stays loaded.
// - A card's <video> is made (with its src) only when the card first nears the viewport; until then
//   it holds an empty box, and nothing is fetched for cards never seen.

export const REPORT_JS = `(() => {
  "use strict";
  const byId = (id) => document.getElementById(id);
  // Each job comes as the array of its values, in the order the field names give (embedded-data.ts).
  const data = JSON.parse(byId("reel-data").textContent || "{}");
  const named = (names, values) => {
    const record = {};
    for (let n = 0; n < names.length; n++) record[names[n]] = values[n];
    return record;
  };
  const jobs = (data.rows || []).map((values) => {
    const job = named(data.jobs, values);
    job.chunks = job.chunks.map((chunk) => named(data.chunks, chunk));
    return job;
  });
  const root = byId("cards");
  const statusSelect = byId("filter-status");
  const manifestSelect = byId("filter-manifest");
  const search = byId("filter-text");
  const shown = byId("shown");
  const empty = byId("empty");
  const sortSelect = byId("sort");
  // Only on a page that lists jobs of other runs too (the folder's other manifests).
  const runOnly = byId("filter-run");
  const tiles = Array.from(document.querySelectorAll("button.tile[data-status]"));

  const STATUS_CLASS = { Success: "s-success", Fail: "s-fail", Canceled: "s-canceled", uncertain: "s-uncertain" };
  const statusClass = (status) => STATUS_CLASS[status] || "s-active";

  const el = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  };

  const duration = (seconds) => {
    if (!(seconds >= 0)) return "";
    if (seconds < 60) return (Math.round(seconds * 10) / 10) + " s";
    const s = Math.round(seconds);
    if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s";
    return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
  };
  // Times come as milliseconds since the epoch (null: not yet).
  const between = (from, to) => (from && to ? duration((to - from) / 1000) : "");
  const clock = (ms) => (ms ? new Date(ms).toLocaleString() : "");
  const iso = (ms) => (ms === null || ms === undefined ? "" : new Date(ms).toISOString());

  // Videos: made when their card first nears the viewport, then kept for the life of the page.
  const loadVideo = (box) => {
    const job = jobs[Number(box.parentNode.dataset.i)];
    const video = document.createElement("video");
    video.controls = true;
    video.playsInline = true;
    // "metadata" fetches just enough for the first frame, which the player shows as its poster.
    video.preload = "metadata";
    video.addEventListener("error", () => {
      const code = video.error ? video.error.code : 0;
      box.replaceChildren(el("p", "note", code === 4
        ? "This browser cannot play this video; open the file to watch it."
        : "The video could not be loaded (error " + code + "); open the file to watch it."));
    }, { once: true });
    video.src = job.video;
    box.replaceChildren(video);
  };

  const chunkItem = (chunk) => {
    const item = el("li");
    item.append(el("span", "dur", duration(chunk.duration)));
    const parts = [];
    if (chunk.text !== null) parts.push([null, chunk.text]);
    if (chunk.speech !== null) {
      parts.push([chunk.voice !== null && chunk.voice !== undefined ? "speech, voice " + chunk.voice + ": " : "speech: ", chunk.speech]);
    }
    if (chunk.audio !== null) parts.push(["audio: ", chunk.audio]);
    parts.forEach((part, n) => {
      if (n > 0) item.append(document.createTextNode(" "));
      if (part[0]) item.append(el("span", "kind", part[0]));
      item.append(document.createTextNode(part[1]));
    });
    return item;
  };

  // Fills an empty card (a "shell") with everything it shows; returns its media box if it has a video.
  const fillCard = (card) => {
    const job = jobs[Number(card.dataset.i)];
    card.classList.remove("shell");
    const media = el("div", "media");
    if (!job.video) {
      media.append(el("p", "note", job.status === "Success" ? "video not downloaded yet" : "no video"));
    }
    const body = el("div", "body");
    const head = el("div", "head");
    const name = el("h2", "name");
    name.append(el("span", "manifest", job.manifest + " / "), el("span", "id", job.id));
    if (job.thumb) {
      // A link, as for the videos: the image is read from where it is, never copied into the page.
      const thumb = el("img", "thumb");
      thumb.alt = "source image " + (job.source || "");
      thumb.title = "source: " + (job.source || "");
      thumb.loading = "lazy";
      thumb.decoding = "async";
      thumb.referrerPolicy = "no-referrer";
      thumb.addEventListener("error", () => thumb.remove(), { once: true });
      thumb.src = job.thumb;
      head.append(thumb);
    }
    head.append(name);
    if (runOnly && job.thisRun) head.append(el("span", "run-mark", runOnly.dataset.mark));
    head.append(el("span", "status", job.status));
    body.append(head);
    const spec = [job.model, job.resolution, job.aspectRatio, duration(job.seconds)];
    if (job.seed !== null) spec.push("seed " + job.seed);
    if (job.source !== null) spec.push("source " + job.source);
    body.append(el("p", "spec", spec.filter(Boolean).join(" · ")));
    if (job.decision) {
      // A reviewer's decision (reel approve, reel reject): who, and the note of why.
      const decision = el("p", "decision d-" + job.decision,
        job.decision + " by " + job.reviewer + (job.note ? ": " + job.note : ""));
      decision.title = "decided " + iso(job.decidedAt);
      body.append(decision);
    }
    if (job.chunks.length) {
      const list = el("ol", "chunks");
      for (const chunk of job.chunks) list.append(chunkItem(chunk));
      body.append(list);
    }
    if (job.error !== null) body.append(el("p", "error", job.error));
    const times = [job.attempts === 1 ? "1 attempt" : job.attempts + " attempts"];
    if (job.taskId !== null) times.push("task " + job.taskId);
    if (job.submittedAt) times.push("submitted " + clock(job.submittedAt));
    const took = between(job.submittedAt, job.finishedAt);
    if (took) times.push("generated in " + took);
    const fetched = between(job.finishedAt, job.downloadedAt);
    if (fetched) times.push("downloaded in " + fetched);
    const timesLine = el("p", "times", times.join(" · "));
    timesLine.title = ["created " + iso(job.createdAt), "submitted " + (iso(job.submittedAt) || "-"),
      "finished " + (iso(job.finishedAt) || "-"), "downloaded " + (iso(job.downloadedAt) || "-")].join("\\n");
    body.append(timesLine);
    const links = el("p", "links");
    const record = el("a", "", "record (.json)");
    record.href = job.record;
    links.append(record);
    if (job.video) {
      const file = el("a", "", "video file");
      file.href = job.video;
      links.append(file);
    }
    body.append(links);
    card.append(media, body);
    return job.video ? media : null;
  };

  // Two distances: a card's text is built well before it scrolls in, so scrolling shows no empty
  // cards; its video is fetched only when it is about to be seen.
  const hasObserver = "IntersectionObserver" in window;
  const players = hasObserver
    ? new IntersectionObserver((entries) => {
        for (const entry of entries) {
          if (!entry.isIntersecting) continue;
          players.unobserve(entry.target);
          loadVideo(entry.target);
        }
      }, { rootMargin: "200px 0px" })
    : null;
  const fillers = hasObserver
    ? new IntersectionObserver((entries) => {
        for (const entry of entries) {
          if (!entry.isIntersecting) continue;
          fillers.unobserve(entry.target);
          const media = fillCard(entry.target);
          if (media) players.observe(media);
        }
      }, { rootMargin: "1200px 0px" })
    : null;

  // Cards are made when their page is first shown (empty shells, filled near the viewport), then
  // kept: a card shown again is the same element, its video still loaded. The document holds one
  // page of cards at most, whatever the number of jobs.
  const cards = new Array(jobs.length);
  const cardOf = (i) => {
    if (cards[i]) return cards[i];
    const card = el("article", "card shell " + statusClass(jobs[i].status));
    card.dataset.i = String(i);
    cards[i] = card;
    if (fillers) fillers.observe(card);
    else {
      const media = fillCard(card);
      if (media) loadVideo(media);
    }
    return card;
  };
  // What the search matches, per job: made at the first search.
  let haystacks = null;
  const haystackOf = (i) => {
    if (!haystacks) {
      haystacks = jobs.map((job) => {
        const words = [job.manifest + "/" + job.id];
        if (job.decision) words.push(job.decision, job.reviewer, job.note || "");
        for (const chunk of job.chunks) {
          if (chunk.text !== null) words.push(chunk.text);
          if (chunk.speech !== null) words.push(chunk.speech);
        }
        return words.join("\\n").toLowerCase();
      });
    }
    return haystacks[i];
  };

  // Sorting orders the jobs (a video already loaded stays loaded); "as listed" is the manifests'
  // order. Statuses sort as the totals list them, final outcomes first.
  const STATUS_ORDER = ["Success", "Fail", "Canceled", "uncertain", "Running", "Pending", "PreProcessing", "submitting", "unsent"];
  const statusRank = (status) => {
    const rank = STATUS_ORDER.indexOf(status);
    return rank < 0 ? STATUS_ORDER.length : rank;
  };
  const lastTime = (job) => job.finishedAt || job.submittedAt || job.createdAt || 0;
  let order = jobs.map((_, i) => i);
  const applySort = () => {
    order = jobs.map((_, i) => i);
    const by = sortSelect.value;
    if (by === "status") order.sort((a, b) => statusRank(jobs[a].status) - statusRank(jobs[b].status) || a - b);
    else if (by === "recent") order.sort((a, b) => lastTime(jobs[b]) - lastTime(jobs[a]) || a - b);
    else if (by === "oldest") order.sort((a, b) => lastTime(jobs[a]) - lastTime(jobs[b]) || a - b);
  };

  // Pages of PAGE cards: the jobs that match the filters, in the order chosen.
  const PAGE = 2000;
  const pager = byId("pager");
  const pageAtText = byId("page-at");
  const prevButton = byId("page-prev");
  const nextButton = byId("page-next");
  let matches = [];
  let pageAt = 0;
  const pages = () => Math.max(1, Math.ceil(matches.length / PAGE));

  // Puts the page's cards in the document, touching only what changes: a card already there stays
  // (and its video with it), one no longer shown is taken out.
  const showPage = () => {
    pageAt = Math.min(Math.max(0, pageAt), pages() - 1);
    const shownCards = matches.slice(pageAt * PAGE, (pageAt + 1) * PAGE).map(cardOf);
    const keep = new Set(shownCards);
    for (const child of Array.from(root.children)) if (!keep.has(child)) child.remove();
    let at = root.firstElementChild;
    for (const card of shownCards) {
      if (card === at) at = at.nextElementSibling;
      else root.insertBefore(card, at);
    }
    pager.hidden = matches.length <= PAGE;
    pageAtText.textContent = "page " + (pageAt + 1) + " of " + pages() + " (" +
      (pageAt * PAGE + 1) + "-" + Math.min(matches.length, (pageAt + 1) * PAGE) + ")";
    prevButton.disabled = pageAt === 0;
    nextButton.disabled = pageAt >= pages() - 1;
  };

  const saveFilters = () => {
    const params = new URLSearchParams();
    if (statusSelect.value) params.set("status", statusSelect.value);
    if (manifestSelect.value) params.set("manifest", manifestSelect.value);
    if (search.value) params.set("q", search.value);
    if (sortSelect.value) params.set("sort", sortSelect.value);
    if (runOnly && runOnly.checked) params.set("run", "1");
    if (pageAt > 0) params.set("page", String(pageAt + 1));
    const hash = params.toString();
    try {
      history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
    } catch (_) {
      // Some browsers refuse history changes on file:// pages; the filters still work.
    }
  };
  const restoreFilters = () => {
    const params = new URLSearchParams(location.hash.slice(1));
    const pick = (select, value) => {
      if (value !== null && Array.from(select.options).some((o) => o.value === value)) select.value = value;
    };
    pick(statusSelect, params.get("status"));
    pick(manifestSelect, params.get("manifest"));
    pick(sortSelect, params.get("sort"));
    if (params.get("q") !== null) search.value = params.get("q");
    if (runOnly) runOnly.checked = params.get("run") === "1";
    pageAt = (Number(params.get("page")) || 1) - 1;
  };

  const applyFilters = () => {
    const status = statusSelect.value;
    const manifest = manifestSelect.value;
    const terms = search.value.toLowerCase().split(/\\s+/).filter(Boolean);
    const ownOnly = runOnly !== null && runOnly.checked;
    matches = order.filter((i) => {
      const job = jobs[i];
      return (!status || job.status === status) && (!manifest || job.manifest === manifest) &&
        (!ownOnly || job.thisRun) && (terms.length === 0 || terms.every((term) => haystackOf(i).includes(term)));
    });
    const count = matches.length;
    shown.textContent = count === jobs.length
      ? (count === 1 ? "1 job" : count + " jobs")
      : count + " of " + jobs.length + " jobs shown";
    empty.hidden = count > 0;
    for (const tile of tiles) tile.setAttribute("aria-pressed", String(tile.dataset.status === status));
    showPage();
  };
  // A new filter or order starts at the first page.
  const onFilter = () => {
    pageAt = 0;
    applyFilters();
    saveFilters();
    performance.mark("reel-filtered");
  };
  const turnPage = (by) => {
    pageAt += by;
    showPage();
    saveFilters();
    window.scrollTo(0, root.getBoundingClientRect().top + window.scrollY - byId("controls").offsetHeight);
  };

  restoreFilters();
  applySort();
  applyFilters();
  statusSelect.addEventListener("change", onFilter);
  manifestSelect.addEventListener("change", onFilter);
  search.addEventListener("input", onFilter);
  if (runOnly) runOnly.addEventListener("change", onFilter);
  sortSelect.addEventListener("change", () => {
    applySort();
    pageAt = 0;
    applyFilters();
    saveFilters();
  });
  prevButton.addEventListener("click", () => turnPage(-1));
  nextButton.addEventListener("click", () => turnPage(1));
  // A total is a filter: its status alone (the count of all jobs: every status).
  for (const tile of tiles) {
    tile.addEventListener("click", () => {
      statusSelect.value = tile.dataset.status || "";
      onFilter();
    });
  }
  byId("filter-clear").addEventListener("click", () => {
    statusSelect.value = "";
    manifestSelect.value = "";
    search.value = "";
    if (runOnly) runOnly.checked = false;
    onFilter();
  });

  // Times in the reader's own time zone (the page is written with UTC).
  for (const time of document.querySelectorAll("time[datetime]")) {
    const at = new Date(time.getAttribute("datetime"));
    if (!isNaN(at.getTime())) time.textContent = at.toLocaleString();
  }

  // While a watch runs, the page reloads itself every few seconds to show what the watch wrote
  // (a page read from file:// cannot fetch its own file, so it reloads), keeping the filters (in
  // the address) and the scroll position. Never while a video plays or the search box is in use;
  // the page written when the watch ends has no data-refresh, so the reloads stop with it.
  const SCROLL_KEY = "reel-scroll:" + location.pathname;
  try {
    const saved = sessionStorage.getItem(SCROLL_KEY);
    if (saved !== null) {
      sessionStorage.removeItem(SCROLL_KEY);
      window.scrollTo(0, Number(saved) || 0);
    }
  } catch (_) {
    // No storage (some file:// settings): the page reloads at the top.
  }
  const refresh = Number(document.body.dataset.refresh);
  if (refresh > 0) {
    setInterval(() => {
      if (document.hidden || document.activeElement === search) return;
      if (Array.from(document.querySelectorAll("video")).some((v) => !v.paused && !v.ended)) return;
      try {
        sessionStorage.setItem(SCROLL_KEY, String(window.scrollY));
      } catch (_) {
        // See above.
      }
      location.reload();
    }, refresh * 1000);
  }
  document.body.dataset.ready = "true";
  performance.mark("reel-ready");
})();
`;
