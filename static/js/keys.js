/* Keyboard help: "/" focuses the page's search (or first filter), "?" opens the shortcuts
 * dialog, "g" then a letter goes to a page, Escape hides a glossary definition. Shortcuts are
 * ignored while typing in a field. Documented in templates/includes/shortcuts.html. */
(function () {
  "use strict";
  var pages = { o: "/", q: "/queues/", w: "/workloads/", b: "/budgets/", a: "/audit/", p: "/playground/" };
  var pendingG = false;

  function typing(target) {
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }
  function dialog() { return document.getElementById("shortcuts"); }
  function toggleHelp() {
    var box = dialog();
    if (!box || !box.showModal) { return; }
    if (box.open) { box.close(); } else { box.showModal(); }
  }

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") {
      var active = document.activeElement;
      if (active && active.closest && active.closest(".term")) { active.blur(); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) { return; }
    if (pendingG) {
      pendingG = false;
      if (pages[event.key]) { event.preventDefault(); location.assign(pages[event.key]); }
      return;
    }
    if (event.key === "/") {
      var field = document.querySelector('main input[type="search"], main form.filters input:not([type="hidden"]), main form.filters select');
      if (field) { event.preventDefault(); field.focus(); }
    } else if (event.key === "?") {
      event.preventDefault();
      toggleHelp();
    } else if (event.key === "g") {
      pendingG = true;
      window.setTimeout(function () { pendingG = false; }, 1500);
    }
  });
  document.addEventListener("click", function (event) {
    if (event.target.closest("[data-shortcuts-open]")) { toggleHelp(); }
  });
})();
