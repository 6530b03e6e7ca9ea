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

  // The figures are drawn for a light page; under prefers-color-scheme: dark the dark ink, the
  // grid and the range selector's buttons are swapped for light ones (the series keep their colours).
  var INK = "#172033";
  var DARK = { ink: "#e6e9ef", grid: "#2a3346", button: "#26314a", active: "#3b4a7a", note: "rgba(16,22,34,0.7)" };

  function forScheme(layout) {
    if (!window.matchMedia || !window.matchMedia("(prefers-color-scheme: dark)").matches) { return layout; }
    var dark = JSON.parse(JSON.stringify(layout));
    dark.font = Object.assign({}, dark.font, { color: DARK.ink });
    Object.keys(dark).forEach(function (key) {
      var axis = dark[key];
      if (!/^[xy]axis/.test(key) || !axis) { return; }
      axis.gridcolor = DARK.grid;
      if (axis.rangeselector) {
        axis.rangeselector.bgcolor = DARK.button;
        axis.rangeselector.activecolor = DARK.active;
        axis.rangeselector.font = Object.assign({}, axis.rangeselector.font, { color: DARK.ink });
      }
    });
    (dark.annotations || []).forEach(function (note) {
      if (note.font && note.font.color === INK) { note.font.color = DARK.ink; }
      if (note.bgcolor) { note.bgcolor = DARK.note; }
    });
    (dark.shapes || []).forEach(function (shape) {
      if (shape.line && shape.line.color === INK) { shape.line.color = DARK.ink; }
    });
    return dark;
  }

  function draw(el, figure) {
    if (!el || !window.Plotly || !figure) { return; }
    window.Plotly.react(el, figure.data || [], forScheme(figure.layout || {}), CONFIG).then(function () {
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
