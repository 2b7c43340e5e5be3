// Progressive enhancement only: every page works without this file.
"use strict";

// Copy buttons: <button data-copy="ID"> copies the value (or text) of element ID.
for (const button of document.querySelectorAll("button[data-copy]")) {
  button.hidden = false;
  button.addEventListener("click", async () => {
    const source = document.getElementById(button.dataset.copy);
    const text = source.value !== undefined ? source.value : source.textContent;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      source.select?.();
      button.textContent = "Press Ctrl+C to copy";
    }
  });
}

// Try it: the most the pasted URLs can cost, updated as they are typed.
const urls = document.getElementById("try-urls");
const window_ = document.getElementById("try-window");
const estimate = document.getElementById("try-estimate");
if (urls && window_ && estimate) {
  const update = () => {
    const count = urls.value.split(/\s+/).filter((line) => line.length > 0).length;
    const price = Number(window_.value) === 0 ? 1 : 0.5;
    estimate.textContent = `${count} URL${count === 1 ? "" : "s"}: at most ${count * price} credits ` +
      `(${price} per company returned; nothing for URLs that cannot be resolved).`;
  };
  urls.addEventListener("input", update);
  window_.addEventListener("change", update);
  update();
}
