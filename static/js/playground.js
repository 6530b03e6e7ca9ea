// The playground's pages: draw the comparison figures, follow a run's progress, mark edited inputs.
(function () {
  "use strict";

  function drawFigures() {
    const data = document.getElementById("pg-figures");
    if (!data || !window.fairportalCharts) return;
    const figures = JSON.parse(data.textContent);
    for (const [id, figure] of Object.entries(figures)) {
      const element = document.getElementById(id);
      if (element) window.fairportalCharts.draw(element, figure);
    }
  }

  function followProgress() {
    const run = document.getElementById("run");
    if (!run || !["queued", "running"].includes(run.dataset.status)) return;
    const bar = document.getElementById("progress-bar");
    const text = document.getElementById("progress-text");
    const status = document.getElementById("run-status");
    async function poll() {
      try {
        const response = await fetch(run.dataset.statusUrl, {headers: {"Accept": "application/json"}});
        if (response.ok) {
          const state = await response.json();
          const percent = Math.round(state.progress * 100);
          if (bar) bar.style.width = percent + "%";
          if (text) text.textContent = percent + "% · " + state.phaseLabel;
          if (status) status.textContent = state.status;
          if (state.done) { window.location.reload(); return; }
        }
      } catch (error) { /* a network hiccup: try again */ }
      window.setTimeout(poll, 700);
    }
    window.setTimeout(poll, 300);
  }

  function markEdits() {
    const editor = document.getElementById("editor");
    if (!editor) return;
    const inputs = editor.querySelectorAll("[data-path]");
    const counter = document.getElementById("change-count");
    function refresh() {
      let changed = 0;
      inputs.forEach(function (input) {
        const edited = input.value.trim() !== input.dataset.initial;
        input.classList.toggle("pg-changed", edited);
        if (edited) changed += 1;
      });
      if (counter) counter.textContent = changed ? changed + " changed" : "";
    }
    inputs.forEach(function (input) { input.addEventListener("input", refresh); input.addEventListener("change", refresh); });
    refresh();
    const filter = document.getElementById("editor-filter");
    if (filter) {
      filter.addEventListener("input", function () {
        const needle = filter.value.trim().toLowerCase();
        editor.querySelectorAll("tr[data-owner]").forEach(function (row) {
          row.hidden = needle !== "" && !row.dataset.owner.toLowerCase().includes(needle);
        });
        if (needle) editor.querySelectorAll("details.pg-group").forEach(function (d) { d.open = true; });
      });
    }
    const focus = editor.dataset.focus;
    if (focus) {
      const target = editor.querySelector('[data-path="' + CSS.escape(focus) + '"]');
      if (target) {
        const group = target.closest("details");
        if (group) group.open = true;
        target.scrollIntoView({block: "center"});
        target.focus();
      }
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    drawFigures();
    followProgress();
    markEdits();
  });
})();
