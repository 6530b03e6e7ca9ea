/* The budget page's burn-down chart: its figure is the page's "burn-down-data" JSON. */
(function () {
  function draw() {
    var data = document.getElementById("burn-down-data");
    if (!data || !window.Plotly) { return; }
    var figure = JSON.parse(data.textContent);
    Plotly.newPlot("burn-down", figure.data, figure.layout, {displaylogo: false, responsive: true});
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", draw); } else { draw(); }
})();
