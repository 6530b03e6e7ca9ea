  /* The estimate replays the cluster on the simulator: fetched once the page is drawn, kept across live refreshes. */
  (function () {
    var html = null;
    function fill(tries) {
      var box = document.getElementById("estimate");
      if (!box) { return; }
      if (html !== null) { box.innerHTML = '<div class="label">Estimated start</div>' + html; }
      if (html !== null && html.indexOf("data-estimate-retry") < 0) { return; }
      fetch(box.getAttribute("data-estimate-url"), { credentials: "same-origin" })
        .then(function (r) { if (!r.ok) { throw new Error("HTTP " + r.status); } return r.text(); })
        .then(function (text) {
          html = text;
          box.innerHTML = '<div class="label">Estimated start</div>' + text;
          if (text.indexOf("data-estimate-retry") >= 0 && tries < 10) { setTimeout(function () { html = null; fill(tries + 1); }, 2000); }
        })
        .catch(function () { box.innerHTML = '<div class="label">Estimated start</div><div class="muted">unavailable right now</div>'; });
    }
    document.addEventListener("DOMContentLoaded", function () { fill(0); });
    document.addEventListener("live:updated", function () { fill(0); });
  })();
