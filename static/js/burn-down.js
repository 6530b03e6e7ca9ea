/* The budget page's burn-down chart: its figure is the page's "burn-down-data" JSON. */
(function () {
  function draw() {
    var data = document.getElementById("burn-down-data");
    if (!data || !window.Plotly) { return; }
    var figure = JSON.parse(data.textContent);
    var config = {displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d", "autoScale2d"]};
    Plotly.newPlot("burn-down", figure.data, figure.layout, config);
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", draw); } else { draw(); }
})();
