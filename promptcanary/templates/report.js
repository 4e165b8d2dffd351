"use strict";
// Every value from the data block is set with textContent: answers and ids stay text.
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const rows = data.rows;
  const body = document.querySelector("#comparisons tbody");
  const selects = Array.from(document.querySelectorAll("select[data-filter]"));
  const columns = ["suite", "model", "prompt", "probe", "verdict", "baseline", "current", "delta"];
  let sortKey = "delta";
  let ascending = true;

  for (const select of selects) {
    const key = select.dataset.filter;
    const values = new Set();
    for (const row of rows) {
      for (const value of [].concat(row[key])) values.add(String(value));
    }
    for (const value of Array.from(values).sort()) {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = value;
      select.appendChild(option);
    }
    select.addEventListener("change", draw);
  }

  function matches(row) {
    return selects.every(function (select) {
      const wanted = select.value;
      return wanted === "" || [].concat(row[select.dataset.filter]).map(String).includes(wanted);
    });
  }

  function draw() {
    const shown = rows.filter(matches).sort(function (a, b) {
      const x = a[sortKey];
      const y = b[sortKey];
      const order = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
      return ascending ? order : -order;
    });
    body.replaceChildren();
    for (const row of shown) {
      const tr = document.createElement("tr");
      tr.className = row.verdict;
      tr.dataset.model = row.model;
      tr.dataset.tags = row.tags.join(" ");
      for (const column of columns) {
        const td = document.createElement("td");
        if (column === "prompt") {
          const link = document.createElement("a");
          link.href = "#" + row.anchor;
          link.textContent = row.prompt;
          td.appendChild(link);
        } else {
          td.textContent = typeof row[column] === "number" ? row[column].toFixed(3) : row[column];
        }
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    document.getElementById("row-count").textContent = shown.length + " of " + rows.length + " comparisons";
  }

  for (const button of document.querySelectorAll("button[data-sort]")) {
    button.addEventListener("click", function () {
      ascending = sortKey === button.dataset.sort ? !ascending : true;
      sortKey = button.dataset.sort;
      draw();
    });
  }
  document.addEventListener("click", function (event) {
    const link = event.target.closest("a[href^='#']");
    const target = link && document.getElementById(link.getAttribute("href").slice(1));
    if (target && target.tagName === "DETAILS") target.open = true;
  });
  draw();
})();
