// Small progressive enhancements; every page works without this file.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // Show each slider's value next to it.
  for (const output of document.querySelectorAll("output[data-for]")) {
    const input = document.getElementById(output.dataset.for);
    if (!input) continue;
    const show = () => { output.textContent = input.value; };
    input.addEventListener("input", show);
    show();
  }
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
        form.appendChild(note);
      }
    });
  }
});
