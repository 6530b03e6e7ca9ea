/* Every Plotly chart of the site is drawn here, from a figure {data, layout, summary} that the
 * server built (queues/ui/charts.py and friends). Time charts of one page carry the page's one
 * window in layout.meta.window: a zoom on one of them (drag, range selector button) moves all
 * the others, and "all" or a double-click brings every one back to the window. The figure's
 * summary is written into the chart's caption (the element with data-chart-summary="ID"), so
 * the text alternative follows live refreshes. No inline script: the CSP stays strict.
 */
(function () {
  "use strict";

  var CONFIG = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["lasso2d", "select2d", "autoScale2d"] };
  var syncing = false;

  function windowOf(el) {
    var meta = el.layout && el.layout.meta;
    return meta && meta.window ? meta.window.slice() : null;
  }

  function windowed() {
    return Array.prototype.filter.call(document.querySelectorAll(".js-plotly-plot"), function (el) {
      return windowOf(el) !== null;
    });
  }

  function sync(source, event) {
    if (syncing || !event) { return; }
    var range = null;
    if (event["xaxis.range[0]"] !== undefined && event["xaxis.range[1]"] !== undefined) {
      range = [event["xaxis.range[0]"], event["xaxis.range[1]"]];
    } else if (Array.isArray(event["xaxis.range"])) {
      range = event["xaxis.range"].slice();
    } else if (event["xaxis.autorange"]) {
      range = windowOf(source);  // "all" and double-click: the page's window, not Plotly's autorange
    }
    if (!range) { return; }
    syncing = true;
    var updates = windowed().map(function (el) {
      return window.Plotly.relayout(el, { "xaxis.range": range.slice(), "xaxis.autorange": false });
    });
    Promise.all(updates).catch(function () {}).then(function () { syncing = false; });
  }

  function draw(el, figure) {
    if (!el || !window.Plotly || !figure) { return; }
    window.Plotly.react(el, figure.data || [], figure.layout || {}, CONFIG).then(function () {
      if (!el.hasAttribute("data-zoom-sync") && windowOf(el)) {
        el.setAttribute("data-zoom-sync", "");
        el.on("plotly_relayout", function (event) { sync(el, event); });
      }
    });
    var caption = document.querySelector('[data-chart-summary="' + el.id + '"]');
    if (caption && typeof figure.summary === "string") { caption.textContent = figure.summary; }
  }

  window.fairportalCharts = { draw: draw };
})();
