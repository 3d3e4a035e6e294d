/* vcost harness: editor, countdown, Run, autosave and the activity log (content-blind).
 * The server's clock is authoritative: the countdown only displays the remaining time the
 * server sent, counted down with the browser's monotonic clock, and re-synchronised. */
(function () {
  "use strict";
  var csrf = (document.querySelector('meta[name="csrf"]') || {}).content || "";
  var t0 = performance.now();
  // The server's numbers (time left, time used) were true when its response began to arrive,
  // not when this script runs after the editor bundle loads (seconds on a slow phone): count
  // from the navigation's responseStart, on the same monotonic clock as performance.now().
  var nav = performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
  var since = nav && nav.responseStart > 0 && nav.responseStart <= t0 ? nav.responseStart : t0;
  var bar = document.getElementById("taskbar");
  var form = document.getElementById("main-form");
  var itemId = bar ? bar.dataset.item : (form ? form.dataset.item : null);
  var timed = bar || document.getElementById("screening-bar");  // an item, or the screening
  var elapsedAtLoad = bar ? Number(bar.dataset.elapsedMs) : 0;
  var remainingAtLoad = timed ? Number(timed.dataset.remainingMs) : 0;
  var loadId = Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
  var counter = 0;
  function offset() { return Math.round(elapsedAtLoad + (performance.now() - since)); }

  // ---- editors (CodeMirror 6, vendored) -----------------------------------------------
  // Each editor is named by its <label for=...> (the visible label's text) and described by
  // the keyboard hint (#editor-hint: Tab indents; Esc then Tab moves focus on).
  var editors = {};
  // a server with a nonce-based CSP names its nonce here, for the editor's <style> elements
  var nonce = (document.querySelector('meta[name="csp-nonce"]') || {}).content || null;
  document.querySelectorAll("textarea[data-editor]").forEach(function (area) {
    if (!window.VcostEditor) return;
    var holder = document.createElement("div");
    holder.className = "editor";
    holder.id = area.id + "-editor";
    area.parentNode.insertBefore(holder, area);
    area.style.display = "none";
    var label = document.querySelector('label[for="' + area.id + '"]');
    var hint = document.getElementById("editor-hint");
    var view = window.VcostEditor.create(holder, area.value, function (u) {
      area.value = u.state.doc.toString();
      dirty = true;
    }, false, { label: label ? label.textContent.replace(/\s+/g, " ").trim() : area.name,
                describedBy: hint ? hint.id : null, nonce: nonce });
    editors[area.dataset.editor] = view;
    // Esc always arms CodeMirror's escape (the next Tab moves focus on), even when the Esc
    // also closes a completion list, so the hint's "Esc, then Tab" holds every time.
    holder.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && view.setTabFocusMode) view.setTabFocusMode(2000);
    }, true);
    if (label) label.addEventListener("click", function () { view.focus(); });
  });
  function value(name) {
    var area = document.querySelector('textarea[data-editor="' + name + '"]');
    return area ? area.value : null;
  }
  var dirty = false;
  // ---- drafts: every 5 s, on page hide (a beacon survives the page), in the last seconds -
  // The code and own tests go to /api/save; the server keeps them only while the item is
  // open, and grades a capped do item on the last draft it kept.
  var isTask = !!(bar && form && (form.getAttribute("action") || "").indexOf("/task/") === 0);
  var lastSave = 0;
  function sendBeacon(url, body) {  // false when the browser refuses: the caller fetches
    try {
      return !!(navigator.sendBeacon &&
        navigator.sendBeacon(url, new Blob([body], { type: "application/json" })));
    } catch (e) { return false; }
  }
  if (isTask) form.addEventListener("submit", function () { dirty = false; });  // it carries the code
  var inflight = null;  // one save at a time, so an older draft never lands after a newer one
  function saveDraft(useBeacon) {
    if (!isTask || !dirty || (inflight && !useBeacon)) return inflight;
    dirty = false;
    lastSave = performance.now();
    var body = JSON.stringify({ csrf: csrf, item_id: itemId, code: value("code"), tests: value("tests") });
    if (useBeacon && sendBeacon("/api/save", body)) return inflight;
    inflight = fetch("/api/save", { method: "POST", body: body, keepalive: body.length < 60000,
      headers: { "Content-Type": "application/json" }, credentials: "same-origin" })
      .then(function (r) { if (r.status >= 500) dirty = true; })
      .catch(function () { dirty = true; })
      .then(function () { inflight = null; });
    return inflight;
  }

  // ---- activity log ---------------------------------------------------------------------
  var counts = { keys: 0, mouse: 0, scroll: 0, paste: 0 };
  var queue = [];
  var lastActivity = performance.now();
  var IDLE_MS = 5000;
  function push(kind, extra) {
    var e = { id: loadId + "-" + (counter++), kind: kind, t: offset(), wall_ms: Date.now(),
              mono_ms: Math.round(performance.now() - t0) };
    for (var k in extra || {}) e[k] = extra[k];
    queue.push(e);
  }
  function active() {
    var now = performance.now();
    if (now - lastActivity >= IDLE_MS) push("idle", { gap_ms: Math.round(now - lastActivity) });
    lastActivity = now;
  }
  function drain() {
    for (var k in counts) { if (counts[k] > 0) { push(k, { n: counts[k] }); counts[k] = 0; } }
  }
  var pendingKey = itemId ? "vcost-pending-" + itemId : null;
  function pending() {
    if (!pendingKey) return [];
    try { return JSON.parse(localStorage.getItem(pendingKey) || "[]"); } catch (e) { return []; }
  }
  function savePending(list) {
    if (!pendingKey) return;
    try { localStorage.setItem(pendingKey, JSON.stringify(list)); } catch (e) { /* full */ }
  }
  function makeBatch() {
    drain();
    if (!queue.length) return null;
    var batch = { batch: loadId + "-b" + (counter++), item_id: itemId, events: queue.splice(0, 400) };
    var list = pending(); list.push(batch); savePending(list);
    return batch;
  }
  function send(batch) {
    var body = JSON.stringify(Object.assign({ csrf: csrf }, batch));
    return fetch("/api/events", { method: "POST", body: body, keepalive: true,
      headers: { "Content-Type": "application/json" }, credentials: "same-origin" })
      .then(function (r) {
        if (r.ok || r.status === 404 || r.status === 400) {
          savePending(pending().filter(function (b) { return b.batch !== batch.batch; }));
        }
      }).catch(function () { /* kept in localStorage; resent later */ });
  }
  function flush() {
    if (!itemId || itemId === "screening") return;
    makeBatch();
    pending().forEach(send);
  }
  function beacon() {
    if (!itemId || itemId === "screening") return;
    makeBatch();
    pending().forEach(function (batch) {
      var body = JSON.stringify(Object.assign({ csrf: csrf }, batch));
      if (!sendBeacon("/api/events", body)) send(batch);
    });
  }
  if (bar) {
    document.addEventListener("keydown", function () { counts.keys++; active(); }, true);
    document.addEventListener("mousemove", function () { counts.mouse++; active(); }, true);
    document.addEventListener("wheel", function () { counts.scroll++; active(); }, { capture: true, passive: true });
    document.addEventListener("scroll", function () { counts.scroll++; active(); }, { capture: true, passive: true });
    document.addEventListener("paste", function () { counts.paste++; active(); }, true);
    window.addEventListener("focus", function () { push("focus"); });
    window.addEventListener("blur", function () { push("blur"); });
    document.addEventListener("visibilitychange", function () {
      push(document.visibilityState === "hidden" ? "hidden" : "visible");
      if (document.visibilityState === "hidden") { saveDraft(true); beacon(); }
    });
    window.addEventListener("pagehide", function () { saveDraft(true); beacon(); });
    push("load");
    setInterval(drain, 1000);
    setInterval(flush, 5000);
    flush();
  }

  // ---- countdown ------------------------------------------------------------------------
  // The visible countdown is a role=timer with aria-live off (a screen reader does not read
  // every second); #countdown-announce (polite) speaks only at 5 min, 1 min and 30 s left.
  var countdown = document.getElementById("countdown");
  var announcer = document.getElementById("countdown-announce");
  var MARKS = [[300000, "5 minutes left"], [60000, "1 minute left"], [30000, "30 seconds left"]];
  var nextMark = 0;
  var finishing = false;
  var FINAL_MS = 10000;  // in the last 10 s the draft is saved at most every 0.5 s while typing
  function remaining() { return remainingAtLoad - (performance.now() - since); }
  function finish() {
    if (finishing) return;
    finishing = true;
    if (announcer) announcer.textContent = "Time is up";
    if (!bar && form && itemId === "screening") {  // submitted as it is, at 0:00
      HTMLFormElement.prototype.submit.call(form);  // (form.submit is the Submit button)
      return;
    }
    // the save in flight, then whatever was typed after it
    var saved = Promise.resolve(saveDraft(false)).then(function () { return saveDraft(false); });
    flush();
    var tries = 0;
    function poll() {
      fetch("/api/state?item_id=" + encodeURIComponent(itemId), { credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (s) { if (s.ended || tries++ > 20) { window.location.href = "/"; } else { setTimeout(poll, 1000); } })
        .catch(function () { setTimeout(poll, 2000); });
    }
    saved.then(poll, poll);
  }
  function tick() {
    if (!countdown) return;
    var ms = Math.max(0, remaining());
    var sec = Math.ceil(ms / 1000);
    countdown.textContent = Math.floor(sec / 60) + ":" + ("0" + (sec % 60)).slice(-2);
    countdown.classList.toggle("low", ms < 60000);
    while (nextMark < MARKS.length && ms <= MARKS[nextMark][0]) {
      if (announcer && ms > MARKS[nextMark][0] - 5000) announcer.textContent = MARKS[nextMark][1];
      nextMark++;
    }
    if (ms > 0 && ms <= FINAL_MS && performance.now() - lastSave >= 500) saveDraft(false);
    if (ms <= 0) finish();
  }
  if (timed && countdown) {
    tick();
    setInterval(tick, 250);
  }
  if (bar) {
    setInterval(function () {  // re-synchronise with the server's clock
      fetch("/api/state?item_id=" + encodeURIComponent(itemId), { credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (s) {
          if (s.ended) { finish(); return; }
          if (typeof s.remaining_ms === "number") {
            remainingAtLoad = s.remaining_ms + (performance.now() - since);
          }
        }).catch(function () {});
    }, 15000);
  }

  // ---- Run and autosave -----------------------------------------------------------------
  var out = document.getElementById("run-output");
  function esc(s) { var d = document.createElement("div"); d.textContent = s == null ? "" : String(s); return d.innerHTML; }
  function show(r) {
    var html = "";
    if (r.error && !r.examples && r.answer === undefined) { out.innerHTML = '<p class="err">' + esc(r.error) + "</p>"; return; }
    if (r.examples && r.examples.length) {
      html += "<h4>Worked examples</h4><table><tr><th>call</th><th>expected</th><th>got</th><th></th></tr>";
      r.examples.forEach(function (e) {
        html += "<tr><td><code>" + esc(e.call) + "</code></td><td><code>" + esc(e.expected) +
          "</code></td><td><code>" + esc(e.got !== null ? e.got : e.error) + "</code></td><td>" +
          (e.matches ? "same" : "differs") + "</td></tr>";
      });
      html += "</table>";
    }
    if (r.tests) {
      html += "<h4>Your tests</h4><pre>" + esc(r.tests.stdout) + "</pre>";
      if (r.tests.error) html += '<pre class="err">' + esc(r.tests.error) + "</pre>";
    }
    if (r.answer !== undefined) {
      html += "<h4>answer</h4><pre>" + esc(r.answer) + "</pre>";
      if (r.stdout) html += "<h4>output</h4><pre>" + esc(r.stdout) + "</pre>";
      if (r.error) html += '<pre class="err">' + esc(r.error) + "</pre>";
    }
    out.innerHTML = html || "<p>(nothing to show)</p>";
  }
  document.querySelectorAll("[data-run]").forEach(function (button) {
    button.addEventListener("click", function () {
      button.disabled = true;
      out.innerHTML = "<p>Running...</p>";
      var body = { csrf: csrf, item_id: itemId, code: value("code"), tests: value("tests") || "" };
      fetch("/api/run", { method: "POST", body: JSON.stringify(body), credentials: "same-origin",
        headers: { "Content-Type": "application/json" } })
        .then(function (r) { return r.json().then(function (j) { return [r.status, j]; }); })
        .then(function (x) {
          if (x[0] === 409 && x[1].ended) { finish(); return; }
          if (x[0] !== 200) { out.innerHTML = '<p class="err">' + esc(x[1].error || "error") + "</p>"; return; }
          show(x[1]);
        })
        .catch(function () { out.innerHTML = '<p class="err">The server did not answer: try again.</p>'; })
        .then(function () { button.disabled = false; });
    });
  });
  setInterval(function () { saveDraft(false); }, 5000);
  function set(name, text) {  // used by tests and tools that paste a whole file
    var view = editors[name];
    if (view) view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    var area = document.querySelector('textarea[data-editor="' + name + '"]');
    if (area) area.value = text;
  }
  // ---- code that scrolls sideways can be scrolled from the keyboard ----------------------
  document.querySelectorAll(".prose pre, .answer pre").forEach(function (pre) {
    if (pre.scrollWidth > pre.clientWidth) pre.tabIndex = 0;
  });

  // ---- confirmations (no inline handlers, so a strict CSP holds) ------------------------
  document.addEventListener("click", function (e) {
    var el = e.target.closest ? e.target.closest("[data-confirm]") : null;
    if (!el) return;
    if (!window.confirm(el.getAttribute("data-confirm"))) e.preventDefault();
  });
  window.vcostHarness = { flush: flush, pending: pending, offset: offset, set: set, save: saveDraft,
                          remaining: remaining };
})();
