// compaction-audit HTML report: draw the charts and keep the round panels in step.
// Reads the inert JSON block #ca-data; writes text with textContent only (never HTML).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("ca-data").textContent);
  var views = {};
  window.caViews = views;

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  // a number as the panel shows it: a mean of 1,000 or more to one decimal, a smaller
  // one to 4 significant digits; zeros are trimmed only after a decimal point
  // (adv69 #1: 1399.5 printed "14", 2129.5 "213")
  function fmt(v) {
    if (v === null || v === undefined) return "unknown";
    if (typeof v !== "number" || Number.isInteger(v)) return String(v);
    var s = Math.abs(v) >= 1000 ? v.toFixed(1) : v.toPrecision(4);
    return s.indexOf(".") < 0 || s.indexOf("e") >= 0 ? s : s.replace(/0+$/, "").replace(/\.$/, "");
  }
  window.caFormat = fmt;  // for the browser tests

  // the row of the lookup table covering round r (rows sorted by round)
  function rowFor(table, r) {
    var rows = table.rows, lo = 0, hi = rows.length - 1, best = -1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (rows[mid][0] <= r) { best = mid; lo = mid + 1; } else { hi = mid - 1; }
    }
    return best >= 0 ? rows[best] : null;
  }

  function show(section, r) {
    var panel = document.getElementById(section.id + "-panel-body");
    var input = document.getElementById(section.id + "-round");
    if (!panel) return;
    if (input && String(input.value) !== String(r)) input.value = r;
    panel.replaceChildren();
    var row = rowFor(section.rounds, r);
    panel.setAttribute("data-round", String(r));
    // a round past a bucket's end lies in the gap before the next bucket (rounds may
    // skip), except past the last one: no such round (adv70 #4: it showed the last)
    var rows = section.rounds.rows;
    if (!row || row[1] < r && (!section.rounds.bucketed || row === rows[rows.length - 1])) {
      panel.appendChild(el("p", "No round " + r + (data.kind === "diff" ? " in either run."
        : " in this trace."), "dim"));
      return;
    }
    var cols = section.rounds.columns;
    var start = row[0], end = row[1], line = row[2];
    // the file the line is in, when the trace's lines are in several files (Cline)
    var files = cols[3] === "line_file";
    var of = files && row[3] !== null ? " of " + row[3] : "";
    var at = line === null ? "" : " (line " + line + of + ")";
    var head = start === end ? "Round " + start + at
      : "Rounds " + start + "-" + end + " (means" + (line === null ? "" : "; from line " + line + of) + ")";
    panel.appendChild(el("h3", head));
    var values = el("p", null, "values");
    for (var i = files ? 4 : 3; i < cols.length; i++) {
      var item = el("span");
      item.appendChild(el("b", cols[i] + " "));
      item.appendChild(document.createTextNode(fmt(row[i])));
      values.appendChild(item);
    }
    panel.appendChild(values);
    var hits = section.items.filter(function (f) { return f.first <= end && f.last >= start; });
    var list = el("ul");
    list.className = "findings";
    hits.slice(0, 50).forEach(function (f) {
      var li = el("li"), a = el("a", f.code + " " + f.rule);
      a.href = "#" + f.anchor;
      li.appendChild(el("span", f.severity.toUpperCase() + " ", "sev-" + f.severity));
      li.appendChild(a);
      li.appendChild(el("span", "  " + (f.side ? f.side + " " : "") + f.where + ": ", "dim"));
      li.appendChild(el("span", f.text));
      list.appendChild(li);
    });
    var what = data.kind === "diff" ? " finding unit(s) spanning this round" : " finding episode(s) here";
    panel.appendChild(el("p", hits.length ? hits.length + what +
      (hits.length > 50 ? " (first 50 shown)" : "") + ":" : "No findings at this round.", "dim"));
    panel.appendChild(list);
  }

  function hook(section, view) {
    try {
      view.addSignalListener("pick", function (_name, value) {
        if (value && value.round && value.round.length) show(section, value.round[0]);
      });
    } catch (e) { /* a chart without the selection */ }
  }

  // a chart wider than its box (a phone) is drawn again with its legends below the
  // plot, then each view narrower by what still spills over (at least MIN_WIDTH):
  // drawn at its own size, not scaled, so pointing at it picks the round under the
  // pointer (usertest18 #11: at 390 px the charts and the diff's legend were cut off)
  var MIN_WIDTH = 160;
  function narrower(spec, by) {
    function less(view) {
      if (typeof view.width !== "number") return view;
      return Object.assign({}, view, { width: Math.max(MIN_WIDTH, Math.floor(view.width - by)) });
    }
    var out = spec.vconcat ? Object.assign({}, spec, { vconcat: spec.vconcat.map(less) }) : less(spec);
    // legends below the plot, one above another, each a column of entries
    var legend = { orient: "bottom", direction: "vertical", columns: 1, labelLimit: MIN_WIDTH,
                   layout: { bottom: { direction: "vertical", anchor: "start" } } };
    out.config = Object.assign({}, spec.config, { legend: Object.assign({}, (spec.config || {}).legend, legend) });
    return out;
  }

  // step 0: as specified; 1: legends below; 2: each view narrower by what still spills
  function embed(cid, spec, opts, step) {
    var box = document.getElementById(cid);
    return vegaEmbed("#" + cid, spec, opts).then(function (res) {
      var svg = box.querySelector("svg"), style = getComputedStyle(box);
      var room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      var over = svg ? svg.getBoundingClientRect().width - room : 0;
      if (step === 2 || !(over > 0)) return res;
      res.view.finalize();
      return embed(cid, narrower(spec, step ? over : 0), opts, (step || 0) + 1);
    });
  }

  var pending = [];
  data.sections.forEach(function (section) {
    var form = document.getElementById(section.id + "-form");
    if (form) {
      form.addEventListener("submit", function (ev) {
        ev.preventDefault();
        var v = parseInt(document.getElementById(section.id + "-round").value, 10);
        if (!isNaN(v)) { show(section, v); return; }
        // an empty box: the panel as the page opened, not the last round's answer
        // (it kept showing a round no longer asked for)
        var panel = document.getElementById(section.id + "-panel-body");
        if (panel) { panel.replaceChildren(); panel.removeAttribute("data-round"); }
      });
    }
    Object.keys(section.charts).forEach(function (cid) {
      var opts = { renderer: "svg", actions: false, ast: true, tooltip: { theme: "light" } };
      pending.push(embed(cid, section.charts[cid], opts).then(function (res) {
        views[cid] = res.view;
        hook(section, res.view);
      }));
    });
  });
  window.caShow = function (sectionId, r) {
    data.sections.forEach(function (s) { if (s.id === sectionId) show(s, r); });
  };
  window.caReady = Promise.all(pending).then(function () {
    document.body.setAttribute("data-ready", "yes");
  }, function (err) { console.error("chart failed: " + err); throw err; });
})();
