// Optional: adds a blank question block to the editor. Without it the form still offers blank blocks.

const button = document.getElementById("add-question");
const template = document.getElementById("question-block-template");
const blocks = document.getElementById("question-blocks");
const total = document.getElementById("id_q-TOTAL_FORMS");

if (button && template && blocks && total) {
  const max = Number.parseInt(button.dataset.max, 10) || 30;
  const blockCount = () => blocks.querySelectorAll("[data-question-block]").length;
  const refresh = () => (button.disabled = blockCount() >= max);

  button.hidden = false;
  refresh();
  button.addEventListener("click", () => {
    if (blockCount() >= max) return;
    const index = Number.parseInt(total.value, 10);
    const holder = document.createElement("div");
    // The template is the server's own markup (an empty form); no user text is in it.
    holder.innerHTML = template.innerHTML.replace(/__prefix__/g, String(index)).replace(/__number__/g, String(index + 1));
    const block = holder.querySelector("[data-question-block]");
    blocks.appendChild(block);
    total.value = String(index + 1);
    refresh();
    block.querySelector("textarea, input[type=text]")?.focus();
  });
}

// A question changed since it was checked is a new question once saved: its verdict no longer applies.
for (const verdict of document.querySelectorAll("[data-question-block] .check-verdict")) {
  const block = verdict.closest("[data-question-block]");
  const stale = () => {
    if (verdict.dataset.verdict === "edited") return;
    verdict.dataset.verdict = "edited";
    verdict.replaceChildren(Object.assign(document.createElement("p"), {
      className: "hint",
      textContent: gettext("Edited since it was checked: save the round, then check it again."),
    }));
  };
  block.addEventListener("input", stale);
  block.addEventListener("change", stale);
}

// Each block shows the fields of its kind of question (the server reads only those; without this script every
// field shows, and the others are ignored).
function showKindFields(block) {
  const select = block.querySelector("select[name$='-kind']");
  if (!select) return;
  for (const group of block.querySelectorAll("[data-for-kinds]")) {
    group.hidden = !group.dataset.forKinds.split(" ").includes(select.value);
  }
}
document.addEventListener("change", (event) => {
  if (event.target.matches?.("select[name$='-kind']")) showKindFields(event.target.closest("[data-question-block]"));
});
for (const block of document.querySelectorAll("[data-question-block]")) showKindFields(block);
new MutationObserver(() => {
  for (const block of document.querySelectorAll("[data-question-block]")) showKindFields(block);
}).observe(document.getElementById("question-blocks") || document.body, { childList: true });
