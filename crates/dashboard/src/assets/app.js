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

// Try it: the most the pasted URLs can cost, updated as they are typed. The price of each freshness window is
// the server's, in the option's data-price attribute; this script keeps no price of its own.
const urls = document.getElementById("try-urls");
const window_ = document.getElementById("try-window");
const estimate = document.getElementById("try-estimate");
// What each line is: page URLs and domains are words, a name is a whole line (it may hold spaces).
const kind = document.getElementById("try-kind");
if (urls && window_ && estimate) {
  const update = () => {
    const option = window_.selectedOptions[0];
    if (!option || option.dataset.price === undefined) {
      return;
    }
    const price = Number(option.dataset.price);
    const what = kind ? kind.value : "url";
    const entries = what === "name" ? urls.value.split("\n") : urls.value.split(/\s+/);
    const count = entries.map((entry) => entry.trim()).filter((entry) => entry.length > 0).length;
    const noun = { url: "URL", domain: "domain", name: "name" }[what] || "URL";
    // Prices are in thousandths at most: round away binary fractions.
    const most = Math.round(count * price * 1000) / 1000;
    estimate.textContent = `${count} ${noun}${count === 1 ? "" : "s"}: at most ${most} credits ` +
      `(${option.dataset.price} per company returned; nothing for lines that cannot be resolved).`;
  };
  urls.addEventListener("input", update);
  window_.addEventListener("change", update);
  if (kind) {
    kind.addEventListener("change", update);
  }
  update();
}

// Jobs: a chosen file's text goes into the box it names (data-fills); the server picks the page URLs out of it.
for (const input of document.querySelectorAll("input[type=file][data-fills]")) {
  input.addEventListener("change", async () => {
    const target = document.getElementById(input.dataset.fills);
    const file = input.files?.[0];
    if (target && file) {
      target.value = await file.text();
    }
  });
}

// A page that follows work in progress (data-refresh="<seconds>") reloads itself until the work ends.
const refreshing = document.querySelector("[data-refresh]");
if (refreshing) {
  setTimeout(() => window.location.reload(), Number(refreshing.dataset.refresh) * 1000);
}
