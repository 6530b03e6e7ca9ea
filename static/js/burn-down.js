/* The budget page's burn-down chart: its figure is the page's "burn-down-data" JSON. */
(function () {
  function draw() {
    var data = document.getElementById("burn-down-data");
    if (!data || !window.fairportalCharts) { return; }
    window.fairportalCharts.draw(document.getElementById("burn-down"), JSON.parse(data.textContent));
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", draw); } else { draw(); }
})();
