/* Tables that fit and read: collapsible tree rows and click-to-sort columns, in the page.
 *
 * Tree: rows carry data-node and data-parent; a row's [data-toggle] button hides or shows
 * everything below it. Sorting: a th[data-sort="num"|"text"] sorts the rows by the cell's
 * data-v (or its text), siblings among siblings, so a tree stays a tree (a row's value when it
 * has none of its own is the largest of the rows below it). Collapsed rows and the sort are kept
 * per page in sessionStorage and applied again after a live refresh swaps the table in.
 * Sorting orders the rows of the page shown (long lists are paged on the server). Sortable
 * headers are tab stops: Enter or Space sorts as a click does, and aria-sort says the order.
 */
(function () {
  "use strict";

  function key(name) { return "fp:" + location.pathname + ":" + name; }
  function load(name, fallback) {
    try { return JSON.parse(sessionStorage.getItem(key(name))) || fallback; } catch (err) { return fallback; }
  }
  function save(name, value) { try { sessionStorage.setItem(key(name), JSON.stringify(value)); } catch (err) { /* private mode */ } }

  function rowsOf(table) { return Array.prototype.slice.call(table.tBodies[0] ? table.tBodies[0].rows : []); }

  function applyCollapse(table) {
    var collapsed = load("collapsed", []);
    var hidden = {};
    rowsOf(table).forEach(function (row) {
      var node = row.getAttribute("data-node");
      var parent = row.getAttribute("data-parent");
      var hide = parent && (hidden[parent] || collapsed.indexOf(parent) >= 0);
      row.hidden = !!hide;
      if (node && (hide || collapsed.indexOf(node) >= 0)) { hidden[node] = true; }
      var button = row.querySelector("[data-toggle]");
      if (button) {
        var closed = collapsed.indexOf(node) >= 0;
        button.textContent = closed ? "▸" : "▾";
        button.setAttribute("aria-expanded", closed ? "false" : "true");
      }
    });
  }

  function cellValue(row, index, kind) {
    var cell = row.cells[index];
    if (!cell) { return null; }
    var raw = cell.hasAttribute("data-v") ? cell.getAttribute("data-v") : cell.textContent.trim();
    if (kind === "num") {
      var number = parseFloat(raw);
      return isNaN(number) ? null : number;
    }
    return raw.toLowerCase();
  }

  function applySort(table) {
    var state = load("sort", null);
    if (!state) { return; }
    var header = table.tHead && table.tHead.rows[0].cells[state.column];
    if (!header || !header.hasAttribute("data-sort")) { return; }
    var kind = header.getAttribute("data-sort");
    var rows = rowsOf(table);
    var byNode = {};
    var roots = [];
    rows.forEach(function (row, position) {
      var item = { row: row, position: position, kids: [] };
      var parent = byNode[row.getAttribute("data-parent") || ""];
      if (parent) { parent.kids.push(item); } else { roots.push(item); }
      if (row.getAttribute("data-node")) { byNode[row.getAttribute("data-node")] = item; }
    });
    function value(item) {
      var own = cellValue(item.row, state.column, kind);
      if (own !== null && own !== "") { return own; }
      var best = null;
      item.kids.forEach(function (kid) {
        var v = value(kid);
        if (v !== null && (best === null || v > best)) { best = v; }
      });
      return best;
    }
    function order(items) {
      items.forEach(function (item) { item.value = value(item); });
      items.sort(function (a, b) {
        if (a.value === b.value) { return a.position - b.position; }
        if (a.value === null) { return 1; }
        if (b.value === null) { return -1; }
        var cmp = a.value < b.value ? -1 : 1;
        return state.desc ? -cmp : cmp;
      });
      items.forEach(function (item) { order(item.kids); });
    }
    order(roots);
    var body = table.tBodies[0];
    (function emit(items) { items.forEach(function (item) { body.appendChild(item.row); emit(item.kids); }); })(roots);
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell, index) {
      cell.removeAttribute("aria-sort");
      if (index === state.column) { cell.setAttribute("aria-sort", state.desc ? "descending" : "ascending"); }
    });
  }

  function refresh(root) {
    (root || document).querySelectorAll("table[data-sortable]").forEach(applySort);
    (root || document).querySelectorAll("table[data-tree]").forEach(applyCollapse);
  }

  document.addEventListener("click", function (event) {
    var toggle = event.target.closest("table[data-tree] [data-toggle]");
    if (toggle) {
      var node = toggle.closest("tr").getAttribute("data-node");
      var collapsed = load("collapsed", []);
      var at = collapsed.indexOf(node);
      if (at >= 0) { collapsed.splice(at, 1); } else { collapsed.push(node); }
      save("collapsed", collapsed);
      applyCollapse(toggle.closest("table"));
      return;
    }
    var header = event.target.closest("table[data-sortable] th[data-sort]");
    if (header) { sortBy(header); }
  });
  // Keyboard: a sortable header is a tab stop; Enter or Space sorts by it (again: reverse).
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" && event.key !== " ") { return; }
    var header = event.target.closest && event.target.closest("table[data-sortable] th[data-sort]");
    if (header && event.target === header) { event.preventDefault(); sortBy(header); header.focus(); }
  });

  function sortBy(header) {
    var column = header.cellIndex;
    var current = load("sort", null);
    var desc = current && current.column === column ? !current.desc : header.getAttribute("data-sort") === "num";
    save("sort", { column: column, desc: desc });
    applySort(header.closest("table"));
    applyCollapse(header.closest("table"));
  }

  function focusable(root) {
    (root || document).querySelectorAll("table[data-sortable] th[data-sort]").forEach(function (header) {
      header.tabIndex = 0;
    });
  }

  document.addEventListener("DOMContentLoaded", function () { focusable(document); refresh(document); });
  document.addEventListener("live:updated", function (event) { focusable(event.target); refresh(event.target); });
})();
