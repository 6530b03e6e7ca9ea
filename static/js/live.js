/* Live pages: poll the page's own URL with ?live=1 and swap in the fresh fragments and charts.
 *
 * Markup: an element with data-live-url (and data-live-interval in seconds) whose JSON answer is
 * {"fragments": {elementId: html}, "figures": {elementId: plotlyFigure}}. On first load, charts are
 * drawn from the <script type="application/json" id="figure-data-ELEMENTID"> blocks Django's
 * json_script filter writes. Polling pauses
 * while the tab is hidden and with the Pause button; nothing is loaded from the internet.
 */
(function () {
  "use strict";

  function drawFigure(id, figure) {
    var el = document.getElementById(id);
    if (el && window.fairportalCharts) { window.fairportalCharts.draw(el, figure); }
  }

  function drawInitialFigures() {
    var prefix = "figure-data-";
    document.querySelectorAll('script[type="application/json"][id^="' + prefix + '"]').forEach(function (node) {
      var target = node.id.slice(prefix.length);
      try { drawFigure(target, JSON.parse(node.textContent)); }
      catch (err) { console.error("figure", target, err); }
    });
  }

  // The state word ("live", "paused", "refresh failed, retrying") sits in an aria-live region and
  // changes only when the state does; the time of the last refresh is written beside it, outside
  // the region, so screen readers are not interrupted every few seconds.
  function setStatus(state, text, at) {
    document.querySelectorAll("[data-live-status]").forEach(function (el) {
      el.classList.remove("paused", "error");
      if (state) { el.classList.add(state); }
      var label = el.querySelector("[data-live-text]");
      if (label && label.textContent !== text) { label.textContent = text; }
      var when = el.querySelector("[data-live-at]");
      if (when && at) { when.textContent = "updated " + (window.fairportalTime ? window.fairportalTime(at, { seconds: true }) : at.toISOString()); }
    });
  }

  function startPolling(root) {
    var url = root.getAttribute("data-live-url");
    var seconds = parseInt(root.getAttribute("data-live-interval") || "10", 10);
    var paused = false;
    var busy = false;

    function refresh() {
      if (paused || busy || document.hidden) { return; }
      busy = true;
      fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
        .then(function (response) {
          if (response.redirected || !response.ok) { throw new Error("HTTP " + response.status); }
          return response.json();
        })
        .then(function (data) {
          Object.keys(data.fragments || {}).forEach(function (id) {
            var el = document.getElementById(id);
            if (el) {
              el.innerHTML = data.fragments[id];
              el.dispatchEvent(new CustomEvent("live:updated", { bubbles: true }));
            }
          });
          Object.keys(data.figures || {}).forEach(function (id) { drawFigure(id, data.figures[id]); });
          setStatus("", "live", new Date(data.at || Date.now()));
        })
        .catch(function () { setStatus("error", "refresh failed, retrying"); })
        .finally(function () { busy = false; });
    }

    document.querySelectorAll("[data-live-toggle]").forEach(function (button) {
      button.addEventListener("click", function () {
        paused = !paused;
        button.textContent = paused ? "Resume" : "Pause";
        setStatus(paused ? "paused" : "", paused ? "paused" : "live");
        if (!paused) { refresh(); }
      });
    });
    document.addEventListener("visibilitychange", function () { if (!document.hidden) { refresh(); } });
    window.setInterval(refresh, Math.max(2, seconds) * 1000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    drawInitialFigures();
    document.querySelectorAll("[data-live-url]").forEach(startPolling);
  });
})();
