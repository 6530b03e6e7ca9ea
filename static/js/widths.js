/* Widths drawn from data (meters, progress bars, tree indents): the server writes them as
   data-width="42%" and this sets them through the DOM, since the Content-Security-Policy refuses
   inline style attributes. Runs at load and after live refreshes. */
(function () {
  var valid = /^[0-9]+(\.[0-9]+)?(%|px)$/;
  function apply(root) {
    var nodes = (root || document).querySelectorAll("[data-width]");
    for (var i = 0; i < nodes.length; i++) {
      var width = nodes[i].getAttribute("data-width");
      if (valid.test(width)) { nodes[i].style.width = width; }
    }
  }
  window.fairportalWidths = apply;
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", function () { apply(); }); } else { apply(); }
  document.addEventListener("live:updated", function () { apply(); });
})();
