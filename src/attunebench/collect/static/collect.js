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

document.addEventListener("DOMContentLoaded", () => {
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
