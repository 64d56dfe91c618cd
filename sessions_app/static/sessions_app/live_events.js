// The session page's live events panel (sessions_app/templates/sessions_app/live_events.html): a file, not an
// inline script, so the site's Content-Security-Policy can forbid inline script (issue 41 D).
(function () {
  "use strict";
  var panel = document.getElementById("live-events");
  var status = panel.querySelector(".cz-live-status");
  var rows = panel.querySelector("tbody");
  var previewLength = Number(panel.dataset.previewLength);
  var lastShown = Number(panel.dataset.afterVersion);

  // The same summary as services.event_preview, for rows the server never rendered.
  function preview(event) {
    var pieces = [];
    ((event.content || {}).parts || []).forEach(function (part) {
      var call = part.function_call || part.functionCall;
      var response = part.function_response || part.functionResponse;
      if (part.text) {
        pieces.push(part.text);
      } else if (call) {
        pieces.push("→ " + call.name + "(" + JSON.stringify(call.args || {}) + ")");
      } else if (response) {
        pieces.push("← " + response.name + ": " + JSON.stringify(response.response));
      }
    });
    var delta = (event.actions || {}).state_delta;
    if (!pieces.length && delta && Object.keys(delta).length) {
      pieces.push("state: " + JSON.stringify(delta));
    }
    var text = pieces.join(" ").split(/\s+/).filter(Boolean).join(" ");
    return text.length <= previewLength ? text : text.slice(0, previewLength - 1) + "…";
  }

  function when(timestamp) {
    return typeof timestamp === "number" ? new Date(timestamp * 1000).toISOString().replace("Z", "+00:00") : "";
  }

  function cell(row, text) {
    row.insertCell().textContent = text;
  }

  var source = new EventSource(panel.dataset.streamUrl + "?after_version=" + lastShown);
  source.onopen = function () {
    status.textContent = "live: listening for new events";
  };
  source.onerror = function () {
    // EventSource retries by itself, resuming after the Last-Event-ID it saw; CLOSED means it gave up.
    status.textContent = source.readyState === EventSource.CLOSED ? "closed (reload the page)" : "reconnecting…";
  };
  source.addEventListener("event", function (message) {
    var item = JSON.parse(message.data);
    if (item.version <= lastShown) {
      return;  // versions only grow: anything at or below the last row is a replay
    }
    lastShown = item.version;
    var waiting = rows.querySelector(".cz-live-empty");
    if (waiting) {
      waiting.remove();
    }
    var row = rows.insertRow();
    row.className = "cz-live-event";
    row.dataset.version = item.version;
    cell(row, String(item.version));
    cell(row, when(item.event.timestamp));
    cell(row, item.event.author || "");
    cell(row, preview(item.event));
  });
})();
