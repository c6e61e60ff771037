/**
 * The dashboard's page: one HTML file, one stylesheet and one script, written by hand with no
 * framework and served by the dashboard itself, so nothing is fetched from another machine (the
 * Content-Security-Policy forbids it too). The script builds the page from `snapshot` events
 * with textContent only (no HTML from the mesh is ever parsed), and lights states in the charts
 * by the ids the server found: each SVG group's `<title>` is its state's id.
 */
export const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Novox Mesh</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<header>
  <h1>Novox Mesh</h1>
  <span id="live" class="live off">connecting…</span>
  <span id="read-at"></span>
</header>
<div id="errors"></div>
<main>
  <section id="nodes-section">
    <h2>Nodes <span id="node-count" class="count"></span></h2>
    <div id="nodes" class="cards"></div>
  </section>
  <section id="lease-section">
    <h2>Lease</h2>
    <dl id="lease"></dl>
    <div class="chart" id="lease-chart"></div>
  </section>
  <section id="plans-section">
    <h2>Plans</h2>
    <div id="plans"></div>
  </section>
  <section id="tree-section">
    <h2>Supervision tree</h2>
    <ul id="tree" class="tree"></ul>
  </section>
  <section id="reports-section">
    <h2>Recent reports</h2>
    <table id="reports"><thead><tr><th>received</th><th>node</th><th>generation</th><th>version</th><th>outcome</th></tr></thead><tbody></tbody></table>
  </section>
  <section id="refusals-section">
    <h2>Refusals and problems</h2>
    <ul id="refusals"></ul>
  </section>
</main>
</body>
</html>
`;

/** The page shown to a request without a session, and after a login link that does not work. */
export function loginPage(note?: string): string {
  const escaped = (note ?? '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Novox Mesh: log in</title><link rel="stylesheet" href="/app.css"></head>
<body class="login">
<main id="login">
<h1>Novox Mesh</h1>
${escaped === '' ? '' : `<p class="note">${escaped}</p>\n`}<p>This dashboard shows nothing until you log in.</p>
<p>Open the login link that <code>mesh-control dashboard</code> printed when it started. Each link works once; run <code>mesh-control dashboard</code> again for a new one.</p>
</main>
</body>
</html>
`;
}

export const APP_CSS = `
:root { --ink: #1a202c; --muted: #4a5568; --line: #d2d8e0; --lit: #fde68a; --lit-edge: #b45309; --bad: #c53030; --good: #2f855a; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 "DejaVu Sans", Verdana, Helvetica, Arial, sans-serif; color: var(--ink); background: #f7f9fb; }
header { display: flex; gap: 1em; align-items: baseline; padding: .6em 1.2em; background: #1a202c; color: #fff; }
header h1 { margin: 0; font-size: 1.3em; }
#read-at { color: #cbd5e0; font-size: .85em; }
.live { padding: .1em .6em; border-radius: 1em; font-size: .85em; }
.live.on { background: var(--good); }
.live.off { background: var(--bad); }
main { padding: 0 1.2em 2em; display: grid; gap: 1.2em; grid-template-columns: 1fr; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .4em 1em 1em; }
h2 { font-size: 1.1em; margin: .6em 0; }
.count { color: var(--muted); font-weight: normal; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr)); gap: 1em; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: .6em; }
.card h3 { margin: 0 0 .3em; font-size: 1.05em; display: flex; gap: .5em; align-items: baseline; }
.state { padding: 0 .5em; border-radius: 1em; font-size: .85em; background: #e2e8f0; }
.state-enrolled { background: #c6f6d5; }
.state-disconnected { background: #fed7d7; }
.state-released, .state-revoked { background: #e2e8f0; color: var(--muted); }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .1em .8em; margin: .3em 0; font-size: .9em; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
.chart svg { width: 100%; height: auto; max-height: 520px; }
#lease-chart svg { max-height: 420px; }
.chart g.lit > path, .chart g.lit > polygon, .chart g.lit > ellipse { fill: var(--lit); stroke: var(--lit-edge); stroke-width: 3px; }
.chart g.lit-cluster > path, .chart g.lit-cluster > polygon { fill: #fffbeb; stroke: var(--lit-edge); stroke-width: 3px; }
.conditions { margin: .2em 0; padding-left: 1.2em; color: var(--bad); font-size: .9em; }
.tree, .tree ul { list-style: none; padding-left: 1.2em; margin: 0; }
.tree li { margin: .1em 0; }
.tree .id { font-weight: bold; }
.tree .err { color: var(--bad); }
table { border-collapse: collapse; width: 100%; font-size: .9em; }
th, td { text-align: left; padding: .2em .5em; border-bottom: 1px solid var(--line); }
#errors p { margin: .6em 1.2em; padding: .5em 1em; background: #fed7d7; border-radius: 6px; }
.plan { border: 1px solid var(--line); border-radius: 6px; padding: .6em; margin-bottom: 1em; }
.empty { color: var(--muted); }
body.login main { max-width: 40em; margin: 4em auto; display: block; }
body.login .note { color: var(--bad); }
`;

export const APP_JS = `'use strict';
(function () {
  var charts = {};

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function facts(pairs) {
    var dl = el('dl');
    pairs.forEach(function (pair) {
      dl.appendChild(el('dt', '', pair[0]));
      var dd = el('dd', '', pair[1] === null || pair[1] === undefined || pair[1] === '' ? '—' : pair[1]);
      if (pair[2]) dd.dataset.field = pair[2];
      dl.appendChild(dd);
    });
    return dl;
  }

  // Draws chart NAME into CONTAINER with the states IDS lit; left alone when they are lit already.
  function drawChart(container, name, ids) {
    var key = name + ':' + ids.join(' ');
    if (container.dataset.drawn === key || !charts[name]) return;
    var doc = new DOMParser().parseFromString(charts[name], 'image/svg+xml');
    var svg = document.importNode(doc.documentElement, true);
    svg.removeAttribute('width');
    svg.removeAttribute('height');
    svg.querySelectorAll('g.node, g.cluster').forEach(function (group) {
      var title = group.querySelector('title');
      var id = title ? title.textContent : '';
      if (group.classList.contains('cluster')) id = id.replace(/^cluster_/, '');
      if (ids.indexOf(id) >= 0) group.classList.add(group.classList.contains('cluster') ? 'lit-cluster' : 'lit');
    });
    container.replaceChildren(svg);
    container.dataset.drawn = key;
    container.dataset.lit = ids.join(' ');
  }

  function ago(iso) {
    if (!iso) return null;
    return new Date(iso).toLocaleString();
  }

  function renderLease(lease) {
    document.getElementById('lease').replaceChildren.apply(document.getElementById('lease'), Array.prototype.slice.call(facts([
      ['holder', lease.holder, 'holder'],
      ['epoch', lease.epoch, 'epoch'],
      ['since', ago(lease.holder_since)],
      ['this controller', lease.standing],
      ['epoch floor', lease.epoch_floor],
      ['note', lease.note],
    ]).childNodes));
    drawChart(document.getElementById('lease-chart'), 'lease', lease.chart);
  }

  function renderNodes(nodes) {
    var box = document.getElementById('nodes');
    document.getElementById('node-count').textContent = '(' + nodes.length + ')';
    var seen = {};
    nodes.forEach(function (node) {
      seen[node.name] = true;
      var card = box.querySelector('[data-node="' + CSS.escape(node.name) + '"]');
      if (!card) {
        card = el('article', 'card');
        card.dataset.node = node.name;
        card.appendChild(el('h3'));
        card.appendChild(el('div', 'facts'));
        card.appendChild(el('ul', 'conditions'));
        card.appendChild(el('div', 'chart'));
        box.appendChild(card);
      }
      card.dataset.state = node.lifecycle_state;
      var heading = card.querySelector('h3');
      heading.replaceChildren(el('span', '', node.name), el('span', 'state state-' + node.lifecycle_state, node.lifecycle_state));
      card.querySelector('.facts').replaceChildren(facts([
        ['kind', node.host_kind],
        ['version', node.version_running],
        ['address', node.address],
        ['last seen', node.last_seen, 'last-seen'],
        ['disconnected since', ago(node.disconnected_since), 'disconnected-since'],
      ]));
      var list = card.querySelector('.conditions');
      list.replaceChildren.apply(list, node.conditions.map(function (condition) {
        return el('li', '', condition.severity + ': ' + condition.detail + (condition.silenced ? ' (silenced)' : '') + ' — ' + condition.show);
      }));
      drawChart(card.querySelector('.chart'), 'lifecycle', node.chart);
    });
    Array.prototype.slice.call(box.children).forEach(function (card) {
      if (!seen[card.dataset.node]) card.remove();
    });
  }

  function renderPlans(plans) {
    var box = document.getElementById('plans');
    if (plans.length === 0) {
      box.replaceChildren(el('p', 'empty', 'No open plans.'));
      return;
    }
    var keep = {};
    Array.prototype.slice.call(box.querySelectorAll('.plan')).forEach(function (old) { keep[old.dataset.plan] = old; });
    box.replaceChildren.apply(box, plans.map(function (plan) {
      var card = keep[plan.id] || el('article', 'plan');
      if (!keep[plan.id]) {
        card.dataset.plan = String(plan.id);
        card.appendChild(el('h3'));
        card.appendChild(el('div', 'tiers'));
        card.appendChild(el('div', 'chart'));
      }
      card.dataset.state = plan.state;
      card.querySelector('h3').textContent = 'plan ' + plan.id + ': ' + plan.module + ' ' + plan.version + ' (' + plan.policy + '), ' + plan.state + (plan.note ? ' — ' + plan.note : '');
      card.querySelector('.tiers').replaceChildren.apply(card.querySelector('.tiers'), plan.tiers.map(function (tier) {
        return facts([[tier.name, tier.nodes.map(function (n) { return n.node + ' ' + n.status + (n.detail ? ' (' + n.detail + ')' : ''); }).join(', ')]]);
      }));
      drawChart(card.querySelector('.chart'), 'plan', plan.chart);
      return card;
    }));
  }

  function treeItem(node) {
    var item = el('li');
    item.appendChild(el('span', 'id', node.id));
    item.appendChild(document.createTextNode(' ' + node.state + (node.child_state ? ' (' + node.child_state + ')' : '') + (node.restarts ? ', ' + node.restarts + ' restart(s)' : '')));
    if (node.last_error) item.appendChild(el('div', 'err', node.last_error));
    if (node.children.length > 0) {
      var list = el('ul');
      node.children.forEach(function (child) { list.appendChild(treeItem(child)); });
      item.appendChild(list);
    }
    return item;
  }

  function renderTree(tree) {
    var box = document.getElementById('tree');
    box.replaceChildren(tree ? treeItem(tree) : el('li', 'empty', 'not read'));
  }

  function renderReports(reports) {
    var body = document.querySelector('#reports tbody');
    body.replaceChildren.apply(body, reports.map(function (report) {
      var row = el('tr');
      var outcome = report.refused ? 'refused: ' + report.refused : Object.keys(report.outcomes).map(function (key) { return report.outcomes[key] + ' ' + key; }).join(', ');
      [ago(report.received_at), report.node, report.generation, report.version_running, outcome || 'nothing declared'].forEach(function (cell) { row.appendChild(el('td', '', cell)); });
      return row;
    }));
  }

  function renderRefusals(snapshot) {
    var items = [];
    snapshot.problems.forEach(function (problem) { items.push(el('li', '', problem.kind + ' ' + problem.subject + ': ' + problem.detail)); });
    snapshot.refusals.declarations.forEach(function (refusal) { items.push(el('li', '', refusal.node + ' refused generation ' + refusal.generation + ': ' + refusal.refused)); });
    snapshot.refusals.reports.forEach(function (refusal) { items.push(el('li', '', refusal.count + ' report(s) from ' + refusal.node + ' refused as ' + refusal.reason + ', last ' + ago(refusal.last_at))); });
    if (items.length === 0) items.push(el('li', 'empty', 'None.'));
    var box = document.getElementById('refusals');
    box.replaceChildren.apply(box, items);
  }

  function render(snapshot) {
    document.getElementById('read-at').textContent = 'read ' + ago(snapshot.read_at) + (snapshot.controller ? ' from ' + snapshot.controller : '');
    var errors = document.getElementById('errors');
    errors.replaceChildren.apply(errors, snapshot.errors.map(function (error) { return el('p', '', error.what + ' — next: ' + error.next); }));
    renderLease(snapshot.lease);
    renderNodes(snapshot.nodes);
    renderPlans(snapshot.plans);
    renderTree(snapshot.tree);
    renderReports(snapshot.reports);
    renderRefusals(snapshot);
    document.body.dataset.readAt = snapshot.read_at;
  }

  function live(on, text) {
    var badge = document.getElementById('live');
    badge.className = 'live ' + (on ? 'on' : 'off');
    badge.textContent = text;
  }

  Promise.all(['lifecycle', 'plan', 'lease'].map(function (name) {
    return fetch('/charts/' + name + '.svg', { credentials: 'same-origin' }).then(function (response) {
      if (!response.ok) throw new Error('chart ' + name + ': ' + response.status);
      return response.text();
    }).then(function (text) { charts[name] = text; });
  })).then(function () {
    var events = new EventSource('/events');
    events.addEventListener('snapshot', function (event) {
      live(true, 'live');
      render(JSON.parse(event.data));
    });
    events.addEventListener('error', function () { live(false, 'reconnecting…'); });
  }, function (error) {
    live(false, String(error));
  });
})();
`;
