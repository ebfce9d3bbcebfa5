// Optional: adds a blank question block to the editor. Without it the form still offers blank blocks.
(function () {
  "use strict";
  var button = document.getElementById("add-question");
  var template = document.getElementById("question-block-template");
  var blocks = document.getElementById("question-blocks");
  var total = document.getElementById("id_q-TOTAL_FORMS");
  if (!button || !template || !blocks || !total) {
    return;
  }
  var max = parseInt(button.getAttribute("data-max"), 10) || 30;

  function blockCount() {
    return blocks.querySelectorAll("[data-question-block]").length;
  }

  function refresh() {
    button.disabled = blockCount() >= max;
  }

  button.hidden = false;
  refresh();
  button.addEventListener("click", function () {
    var index = parseInt(total.value, 10);
    if (blockCount() >= max) {
      return;
    }
    var html = template.innerHTML
      .replace(/__prefix__/g, String(index))
      .replace(/__number__/g, String(index + 1));
    var holder = document.createElement("div");
    holder.innerHTML = html;
    var block = holder.querySelector("[data-question-block]");
    blocks.appendChild(block);
    total.value = String(index + 1);
    refresh();
    var first = block.querySelector("textarea, input[type=text]");
    if (first) {
      first.focus();
    }
  });
})();
