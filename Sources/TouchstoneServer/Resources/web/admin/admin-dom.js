// The admin console's page helpers and its activity chart: no network and no admin key (admin.js holds both, in its
// closure). Loaded before admin.js, which takes what it needs from window.TouchstoneAdminDOM.
"use strict";

window.TouchstoneAdminDOM = (() => {
  const $ = (id) => document.getElementById(id);

  function status(message, isError = false) {
    $("status").textContent = message;
    $("status").className = isError ? "error" : "";
  }

  function element(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) {
      if (key === "class") node.className = value;
      else if (key.startsWith("data-")) node.setAttribute(key, value);
      else node[key] = value;
    }
    for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    return node;
  }

  function when(text) {
    if (!text) return "never";
    const date = new Date(text);
    return date.toLocaleString();
  }

  const SVG = "http://www.w3.org/2000/svg";

  function svg(tag, attributes) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
    return node;
  }

  // A stacked bar per bucket: successes below, failures on top, from the server's own counts.
  function drawChart(stats) {
    const width = 720, height = 220, left = 36, bottom = 24, top = 8;
    const totals = stats.buckets.map((bucket) => {
      let success = 0, failure = 0;
      for (const outcomes of Object.values(bucket.signIns)) {
        success += outcomes.success || 0;
        failure += outcomes.failure || 0;
      }
      return { start: bucket.start, success, failure };
    });
    const maximum = Math.max(1, ...totals.map((t) => t.success + t.failure));
    const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", id: "chart-svg" });
    const plotHeight = height - bottom - top;
    const slot = (width - left) / totals.length;
    for (const fraction of [0, 0.5, 1]) {
      const y = top + plotHeight * (1 - fraction);
      chart.append(svg("line", { x1: left, x2: width, y1: y, y2: y }));
      const label = svg("text", { x: 2, y: y + 3 });
      label.textContent = String(Math.round(maximum * fraction));
      chart.append(label);
    }
    totals.forEach((total, index) => {
      const x = left + index * slot + slot * 0.15;
      const barWidth = slot * 0.7;
      const successHeight = (total.success / maximum) * plotHeight;
      const failureHeight = (total.failure / maximum) * plotHeight;
      const successBar = svg("rect", { class: "success", x, width: barWidth, y: top + plotHeight - successHeight, height: successHeight });
      const failureBar = svg("rect", { class: "failure", x, width: barWidth, y: top + plotHeight - successHeight - failureHeight, height: failureHeight });
      const title = svg("title", {});
      title.textContent = `${when(total.start)}: ${total.success} succeeded, ${total.failure} failed`;
      successBar.append(title);
      chart.append(successBar, failureBar);
      if (index % Math.ceil(totals.length / 6) === 0) {
        const label = svg("text", { x, y: height - 6 });
        const date = new Date(total.start);
        label.textContent = date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
        chart.append(label);
      }
    });
    $("chart").replaceChildren(chart);
    $("chart").dataset.total = String(totals.reduce((sum, t) => sum + t.success + t.failure, 0));
  }

  return Object.freeze({ $, status, element, when, drawChart });
})();
