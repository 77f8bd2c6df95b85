// Long tables of the report: a filter box, sortable columns and pages, all offline.
// A table is enhanced when its wrapper carries class "jp-long"; without this script
// (for example in Jupyter) it simply shows flat.
(function () {
  "use strict";
  function key(cell) {
    var text = (cell.getAttribute("data-sort") || cell.textContent).trim();
    var num = Number(text.replace(/[,$%\u2212+]/g, function (c) { return c === "\u2212" ? "-" : ""; }));
    if (text !== "" && text !== "\u2013" && !isNaN(num)) { return [0, num]; }
    return [1, text.toLowerCase()];
  }
  function compare(a, b) {
    if (a[0] !== b[0]) { return a[0] - b[0]; }
    return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
  }
  function enhance(box) {
    var table = box.querySelector("table");
    if (!table || !table.tBodies.length) { return; }
    var body = table.tBodies[0];
    var all = Array.prototype.slice.call(body.rows);
    var size = parseInt(box.getAttribute("data-page-size") || "10", 10);
    var shown = all.slice();
    var page = 0;
    var tools = document.createElement("div");
    tools.className = "jp-table-tools";
    var input = document.createElement("input");
    input.type = "search";
    input.placeholder = "filter rows";
    input.setAttribute("aria-label", "filter rows");
    var prev = document.createElement("button");
    prev.type = "button"; prev.textContent = "\u2039 previous";
    var next = document.createElement("button");
    next.type = "button"; next.textContent = "next \u203a";
    var count = document.createElement("span");
    count.className = "jp-count";
    tools.appendChild(input); tools.appendChild(prev); tools.appendChild(next);
    tools.appendChild(count);
    box.insertBefore(tools, box.firstChild);
    function draw() {
      var pages = Math.max(1, Math.ceil(shown.length / size));
      page = Math.min(page, pages - 1);
      all.forEach(function (r) { r.style.display = "none"; });
      shown.slice(page * size, (page + 1) * size).forEach(function (r) {
        r.style.display = "";
        body.appendChild(r);
      });
      count.textContent = shown.length + " of " + all.length + " rows, page " + (page + 1) +
        " of " + pages;
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
    }
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase();
      shown = all.filter(function (r) { return r.textContent.toLowerCase().indexOf(q) >= 0; });
      page = 0;
      draw();
    });
    prev.addEventListener("click", function () { page -= 1; draw(); });
    next.addEventListener("click", function () { page += 1; draw(); });
    var heads = table.tHead ? table.tHead.rows[table.tHead.rows.length - 1].cells : [];
    Array.prototype.forEach.call(heads, function (th, col) {
      th.classList.add("jp-sortable");
      th.addEventListener("click", function () {
        var asc = !th.classList.contains("jp-asc");
        Array.prototype.forEach.call(heads, function (h) {
          h.classList.remove("jp-asc", "jp-desc");
        });
        th.classList.add(asc ? "jp-asc" : "jp-desc");
        shown.sort(function (a, b) {
          var c = compare(key(a.cells[col]), key(b.cells[col]));
          return asc ? c : -c;
        });
        all.sort(function (a, b) {
          var c = compare(key(a.cells[col]), key(b.cells[col]));
          return asc ? c : -c;
        });
        page = 0;
        draw();
      });
    });
    // a link to one row (claims.html#ID) opens the page of the table that shows it
    function reveal() {
      var id = decodeURIComponent(window.location.hash.slice(1));
      var at = id ? shown.findIndex(function (r) { return r.id === id; }) : -1;
      if (at < 0) { return; }
      page = Math.floor(at / size);
      draw();
      all[all.indexOf(shown[at])].scrollIntoView();
    }
    window.addEventListener("hashchange", reveal);
    draw();
    reveal();
  }
  function start() {
    Array.prototype.forEach.call(document.querySelectorAll(".jp-long"), enhance);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
