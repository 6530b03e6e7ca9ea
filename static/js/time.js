/* One time format in the browser too: "2026-11-28 15:04 UTC" (24-hour, the zone named), in the
 * site's time zone that base.html writes on <html data-time-zone>, like core/timefmt.py on the
 * server. window.fairportalTime(date, {seconds: true}) for "15:04:05". */
(function () {
  "use strict";
  var zone = document.documentElement.getAttribute("data-time-zone") || "UTC";
  function format(date, options) {
    var seconds = options && options.seconds;
    var parts = {};
    var spec = { timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
                 hour: "2-digit", minute: "2-digit", timeZoneName: "short" };
    if (seconds) { spec.second = "2-digit"; }
    var formatter;
    try { formatter = new Intl.DateTimeFormat("en-GB", spec); }
    catch (err) { spec.timeZone = "UTC"; formatter = new Intl.DateTimeFormat("en-GB", spec); }
    formatter.formatToParts(date).forEach(function (part) { parts[part.type] = part.value; });
    var name = parts.timeZoneName === "GMT" && zone === "UTC" ? "UTC" : parts.timeZoneName;
    return parts.year + "-" + parts.month + "-" + parts.day + " " + parts.hour + ":" + parts.minute +
      (seconds ? ":" + parts.second : "") + " " + name;
  }
  window.fairportalTime = format;
})();
