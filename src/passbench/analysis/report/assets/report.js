// passbench HTML report: sortable, filterable task table and per-task detail.
// State lives in the URL fragment (#sort=-rate&outcome=unsolved&task=...), so a view can be
// shared as a link and restored on reload; clicks and form edits go through the same path.
(function () {
  "use strict";
  var table = document.getElementById("task-table");
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var data = JSON.parse(document.getElementById("task-data").textContent);
  var controls = {
    text: document.getElementById("f-text"),
    outcome: document.getElementById("f-outcome"),
    category: document.getElementById("f-category"),
    lib: document.getElementById("f-lib"),
    domain: document.getElementById("f-domain"),
    hard: document.getElementById("f-hard"),
  };
  var state = { sort: "", text: "", outcome: "", category: "", lib: "", domain: "", hard: "", task: "" };

  function readHash() {
    var hash = window.location.hash.replace(/^#/, "");
    Object.keys(state).forEach(function (key) { state[key] = ""; });
    hash.split("&").forEach(function (part) {
      if (!part) return;
      var at = part.indexOf("=");
      var key = decodeURIComponent(at < 0 ? part : part.slice(0, at));
      var value = at < 0 ? "1" : decodeURIComponent(part.slice(at + 1));
      if (key in state) state[key] = value;
    });
  }

  function writeHash() {
    var parts = [];
    Object.keys(state).forEach(function (key) {
      if (state[key]) parts.push(encodeURIComponent(key) + "=" + encodeURIComponent(state[key]));
    });
    var hash = parts.length ? "#" + parts.join("&") : "";
    if (window.location.hash !== hash) {
      history.replaceState(null, "", hash || window.location.pathname + window.location.search);
    }
  }

  function syncControls() {
    controls.text.value = state.text;
    controls.outcome.value = state.outcome;
    controls.category.value = state.category;
    controls.lib.value = state.lib;
    controls.domain.value = state.domain;
    controls.hard.checked = state.hard === "1";
  }

  function outcomeOf(row) {
    var passed = +row.dataset.passed, n = +row.dataset.n;
    return passed === n ? "solved" : passed === 0 ? "unsolved" : "partial";
  }

  function keep(row) {
    if (state.outcome && outcomeOf(row) !== state.outcome) return false;
    if (state.category) {
      var labels = " " + row.dataset.labels + " ";
      var wanted = state.category;
      var hit = labels.indexOf(" " + wanted + " ") >= 0 || labels.indexOf(" " + wanted + ":") >= 0;
      if (!hit) return false;
    }
    if (state.lib && (" " + row.dataset.libs + " ").indexOf(" " + state.lib + " ") < 0) return false;
    if (state.domain && (" " + row.dataset.domains + " ").indexOf(" " + state.domain + " ") < 0) return false;
    if (state.hard === "1" && row.dataset.hard !== "1") return false;
    if (state.text) {
      var needle = state.text.toLowerCase();
      if (row.dataset.search.indexOf(needle) < 0) return false;
    }
    return true;
  }

  function sortKey(row, key) {
    if (key === "task") return +row.dataset.order;
    if (key === "passed" || key === "n") return +row.dataset[key];
    if (key === "rate") return +row.dataset.passed / +row.dataset.n;
    return (row.dataset[key] || "").toLowerCase();
  }

  function apply() {
    var key = state.sort.replace(/^-/, "") || "task";
    var descending = state.sort.charAt(0) === "-";
    var ordered = rows.slice().sort(function (a, b) {
      var x = sortKey(a, key), y = sortKey(b, key);
      var order = x < y ? -1 : x > y ? 1 : 0;
      if (order === 0) order = +a.dataset.order - +b.dataset.order;  // stable by task order
      else if (descending) order = -order;
      return order;
    });
    var shown = 0;
    var fragment = document.createDocumentFragment();
    ordered.forEach(function (row) {
      row.hidden = !keep(row);
      if (!row.hidden) shown += 1;
      fragment.appendChild(row);
    });
    body.appendChild(fragment);
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell) {
      if (cell.dataset.key === key && state.sort) {
        cell.setAttribute("aria-sort", descending ? "descending" : "ascending");
      } else {
        cell.removeAttribute("aria-sort");
      }
    });
    table.dataset.sort = state.sort;
    document.getElementById("shown-count").textContent = shown + " of " + rows.length + " tasks";
    table.dataset.shown = String(shown);
    showDetail(state.task);
    writeHash();
  }

  function element(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  function code(text) {
    var pre = element("pre");
    pre.appendChild(element("code", text));
    return pre;
  }

  function showDetail(taskId) {
    var section = document.getElementById("detail");
    var target = document.getElementById("detail-body");
    rows.forEach(function (row) { row.classList.toggle("selected", row.dataset.task === taskId); });
    var task = taskId ? data[taskId] : null;
    if (!task) { section.hidden = true; target.textContent = ""; return; }
    section.hidden = false;
    if (section.dataset.task === taskId) return;
    section.dataset.task = taskId;
    document.getElementById("detail-title").textContent = taskId;
    target.textContent = "";
    target.appendChild(element("p", task.passed + "/" + task.samples.length + " samples pass; libraries: " +
      (task.libs.join(", ") || "n/a"), "muted"));
    task.samples.forEach(function (sample) {
      var box = element("details");
      if (sample.s !== "pass" || task.samples.length === 1) box.open = sample.i === firstFailing(task);
      var heading = "sample " + sample.i + ": " + sample.s + (sample.l ? " (" + sample.l + ")" : "");
      if (sample.d !== null) heading += ", " + sample.d.toFixed(2) + " s";
      if (sample.f) {
        heading += "; flaky: " + Object.keys(sample.f).map(function (status) {
          return status + " " + sample.f[status];
        }).join(", ") + " over the runs";
      }
      box.appendChild(element("summary", heading, "status-" + sample.s));
      if (sample.m) box.appendChild(element("p", sample.m));
      sample.t.forEach(function (test) {
        box.appendChild(element("div", test[0], "muted"));
        box.appendChild(code(test[1]));
      });
      box.appendChild(element("div", "solution", "muted"));
      box.appendChild(code(task.solutions[sample.sol]));
      target.appendChild(box);
    });
    [["canonical solution", task.canonical], ["tests", task.test]].forEach(function (pair) {
      if (pair[1] === null) return;
      var box = element("details");
      box.appendChild(element("summary", pair[0]));
      box.appendChild(code(pair[1]));
      target.appendChild(box);
    });
  }

  function firstFailing(task) {
    for (var i = 0; i < task.samples.length; i += 1) if (task.samples[i].s !== "pass") return task.samples[i].i;
    return task.samples.length ? task.samples[0].i : -1;
  }

  table.tHead.addEventListener("click", function (event) {
    var cell = event.target.closest("th");
    if (!cell || !cell.dataset.key) return;
    var key = cell.dataset.key;
    state.sort = state.sort === key ? "-" + key : key;
    apply();
  });
  body.addEventListener("click", function (event) {
    var row = event.target.closest("tr");
    if (!row) return;
    state.task = row.dataset.task;
    apply();
    document.getElementById("detail").scrollIntoView({ block: "start" });
  });
  Object.keys(controls).forEach(function (name) {
    var control = controls[name];
    control.addEventListener(name === "text" ? "input" : "change", function () {
      state[name] = name === "hard" ? (control.checked ? "1" : "") : control.value;
      apply();
    });
  });
  window.addEventListener("hashchange", function () { readHash(); syncControls(); apply(); });

  readHash();
  syncControls();
  apply();
})();
