// Small progressive enhancements; every page works without this file.
"use strict";

// A slider has no answer until it is moved: its "not answered" box stays ticked till then.
function linkSlider(input, unset, output) {
  const show = () => {
    const text = unset.checked ? "not answered" : input.value;
    output.textContent = text;
    input.setAttribute("aria-valuetext", text);
  };
  input.addEventListener("input", () => {
    unset.checked = false;
    show();
  });
  unset.addEventListener("change", show);
  show();
}

// "Which is strongest?" offers only the emotions ticked above (without this file it offers all,
// and the server refuses one that was not ticked).
function narrowStrongest(select, boxes) {
  const update = () => {
    const ticked = new Set(boxes.filter((box) => box.checked).map((box) => box.value));
    for (const option of select.options) {
      if (!option.value) continue;
      option.hidden = option.disabled = !ticked.has(option.value);
      if (option.disabled && option.selected) select.value = "";
    }
  };
  for (const box of boxes) box.addEventListener("change", update);
  update();
}

// The two replies as they are written (server-sent events from /p/<link>/stream): each piece is
// added to its reply; a reply written again is cleared first; the pick opens once both are
// stored. Without this file the message post waits for the whole replies instead.
function streamReplies(box, fallback) {
  const form = box.querySelector("form");
  const prose = (position) =>
    box.querySelector(`section[aria-label="Reply ${position}"] p.prose`);
  const open = () => {
    fallback.hidden = true;
    box.hidden = false;
    const source = new EventSource(box.dataset.stream);
    const on = (name, handle) =>
      source.addEventListener(name, (event) => handle(JSON.parse(event.data || "{}")));
    on("piece", (data) => {
      prose(data.position).textContent += data.text;
    });
    on("reset", (data) => {
      prose(data.position).textContent = "";
    });
    on("done", (data) => {
      source.close();
      for (const [position, text] of Object.entries(data.replies)) {
        prose(position).textContent = text;
        prose(position).removeAttribute("aria-busy");
      }
      form.querySelector('input[name="step"]').value = data.step;
      for (const part of form.querySelectorAll("fieldset[disabled], button[disabled]")) {
        part.disabled = false;
      }
      delete form.dataset.streaming;
      form.dataset.complete = "1";
    });
    on("failed", () => {
      source.close();
      fallback.hidden = false;
      for (const position of ["A", "B"]) prose(position).textContent = "";
    });
    on("reload", () => {
      source.close();
      window.location.reload();
    });
    // Refused (too many tries in a minute) or cut off for good: offer to try again.
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) fallback.hidden = false;
    };
  };
  // Trying again after a failure opens the stream again: what was answered stays on the page.
  fallback.querySelector("form").addEventListener("submit", (event) => {
    event.preventDefault();
    event.stopImmediatePropagation();
    open();
  });
  open();
}

document.addEventListener("DOMContentLoaded", () => {
  const streamed = document.querySelector(".streamed[data-stream]");
  const fallback = document.querySelector(".not-streamed");
  if (streamed && fallback && window.EventSource) streamReplies(streamed, fallback);
  const message = document.querySelector('form[action$="/message"]');
  if (message && window.EventSource) {
    const ask = document.createElement("input");
    ask.type = "hidden";
    ask.name = "stream";
    ask.value = "1";
    message.appendChild(ask);
  }
  const strongest = document.getElementById("primary");
  if (strongest) {
    narrowStrongest(strongest, [...document.querySelectorAll('input[name="emotions"]')]);
  }
  for (const unset of document.querySelectorAll("input[data-unset-for]")) {
    const name = unset.dataset.unsetFor;
    const input = document.getElementById(name);
    const output = document.querySelector(`output[data-for="${name}"]`);
    if (input && output) linkSlider(input, unset, output);
  }
  // Say so where a table is wider than the page (the style sheet shows the line).
  const tables = [...document.querySelectorAll(".table-scroll")];
  const mark = () => {
    for (const box of tables) box.toggleAttribute("data-overflowing", box.scrollWidth > box.clientWidth);
  };
  if (tables.length) {
    mark();
    window.addEventListener("resize", mark);
  }
  // A page that came back with problems starts at their list.
  const problems = document.getElementById("problems");
  if (problems) problems.focus();
  for (const form of document.querySelectorAll("form")) {
    form.addEventListener("submit", (event) => {
      const question = form.dataset.confirm;
      if (question && !window.confirm(question)) {
        event.preventDefault();
        return;
      }
      // One answer per click: a second submit of the same form is ignored.
      if (form.dataset.sent) {
        event.preventDefault();
        return;
      }
      form.dataset.sent = "1";
      const busy = form.dataset.busy;
      if (busy) {
        const note = document.createElement("p");
        note.className = "busy";
        note.textContent = busy;
        note.setAttribute("role", "status");
        form.appendChild(note);
      }
    });
  }
});
