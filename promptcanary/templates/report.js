"use strict";
// Every value from the data block is set with textContent: answers and ids stay text.
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const pairs = data.pairs;
  const rows = data.rows.map(function (r) {
    const pair = pairs[r[0]];
    return {
      suite: pair.suite, model: pair.model, prompt: pair.prompts[r[1]], tags: pair.tags[r[1]],
      probe: r[2], type: r[3], verdict: r[4], baseline: r[5], current: r[6], delta: r[7],
      anchor: "p" + r[0] + "-" + r[1],
    };
  });
  const body = document.querySelector("#comparisons tbody");
  const selects = Array.from(document.querySelectorAll("select[data-filter]"));
  const columns = ["suite", "model", "prompt", "probe", "verdict", "baseline", "current", "delta"];
  const more = document.getElementById("more-rows");
  let sortKey = "delta";
  let ascending = true;
  // Thousands of table rows take Chromium seconds to lay out: the first ones, then on request.
  let limit = 500;

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
    for (const row of shown.slice(0, limit)) {
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
    const drawn = Math.min(shown.length, limit);
    document.getElementById("row-count").textContent = shown.length + " of " + rows.length + " comparisons" +
      (drawn < shown.length ? " (the first " + drawn + " shown)" : "");
    more.hidden = drawn === shown.length;
    more.textContent = "Show all " + shown.length;
  }
  more.addEventListener("click", function () {
    limit = Infinity;
    draw();
  });

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

  // A prompt's side-by-side view is built from the data when it is first opened.
  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // A side is null (no stored answers) or [answers, distinct ones not shown, groups]; a group
  // is [count, text, flag (1 cut, 2 the baseline's text), probe results as name, passes, total].
  function side(label, answers, embedded, names) {
    const column = element("div", "side");
    column.dataset.side = label.toLowerCase();
    column.appendChild(element("h3", "", label + (answers ? " (" + answers[0] + " answers)" : "")));
    if (!answers) {
      column.appendChild(element("p", "muted", "No stored answers."));
      return column;
    }
    for (const group of answers[2]) {
      const box = element("div", "answer");
      const meta = element("p", "muted", "× " + group[0]);
      const probes = group[3];
      for (let i = 0; i < probes.length; i += 3) {
        meta.append(" · ");
        const passed = probes[i + 1] === probes[i + 2];
        meta.appendChild(element("span", passed ? "pass" : "fail", names[probes[i]] + " " + probes[i + 1] + "/" + probes[i + 2]));
      }
      box.appendChild(meta);
      if (group[2] === 2) {
        box.appendChild(element("p", "muted same", "The baseline's answer, word for word (shown on its side)."));
      } else if (embedded) {
        box.appendChild(element("pre", "", group[1]));
        if (group[2] === 1) box.appendChild(element("p", "muted", "Cut to " + data.answerLimit + " characters; the whole answer is in run.json."));
      }
      column.appendChild(box);
    }
    if (answers[1]) {
      column.appendChild(element("p", "muted", answers[1] + " more distinct answers not shown (at most " + data.maxGroups + ")."));
    }
    return column;
  }

  function build(details) {
    const at = /^p(\d+)-(\d+)$/.exec(details.id);
    const pair = at && pairs[Number(at[1])];
    const view = pair && pair.views[Number(at[2])];
    if (!view || details.dataset.built) return;
    details.dataset.built = "1";
    const embedded = view[0] === 1;
    if (!embedded) {
      details.appendChild(element("p", "muted cut", "Answer texts not embedded: the page's answer budget is spent (regressed, then changed prompts come first); they are in run.json."));
    }
    const sides = element("div", "sides");
    sides.appendChild(side("Baseline", view[1], embedded, pair.probes));
    sides.appendChild(side("Today", view[2], embedded, pair.probes));
    details.appendChild(sides);
    if (view[3]) {
      details.appendChild(element("h3", "", "Diff of the most frequent answers"));
      details.appendChild(element("pre", "diff", view[3]));
    }
  }

  for (const details of document.querySelectorAll("details.prompt")) {
    if (details.open) build(details);
    details.addEventListener("toggle", function () {
      if (details.open) build(details);
    });
  }
  draw();
})();
