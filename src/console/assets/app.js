/*
 * The fleet console's page: no framework, no external file. The fleet table is built once from
 * the server's snapshot and then patched cell by cell from its Server-Sent Events, so a fleet of
 * a thousand terminals costs the browser little while updates flow. Everything from the server
 * is put in the page as text (textContent), never as HTML.
 */
// biome-ignore lint/suspicious/noRedundantUseStrict: a classic <script> (index.html), not a module: Biome takes every .js for a module because package.json says type: module
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const el = (tag, props, ...children) => {
    const e = document.createElement(tag);
    if (props)
      for (const [k, v] of Object.entries(props)) {
        if (k === 'class') e.className = v;
        else if (k === 'text') e.textContent = v;
        else if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v === true ? '' : String(v));
      }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  };

  // ---------- formatting ----------
  let skew = 0; // server time - page time
  const now = () => Date.now() + skew;
  function dur(sec) {
    if (sec === null || sec === undefined || !Number.isFinite(sec)) return '–';
    sec = Math.max(0, sec);
    if (sec < 60) return `${Math.round(sec)} s`;
    if (sec < 7200) return `${Math.round(sec / 60)} min`;
    if (sec < 172800) return `${Math.round(sec / 3600)} h`;
    return `${Math.round(sec / 86400)} days`;
  }
  // Every time on the page in one zone, the console's (console.timeZone, else the terminals' as the CLI), named in the header.
  let zone = 'UTC';
  let zoneFormat = null;
  function at(iso) {
    const t = typeof iso === 'number' ? iso : Date.parse(iso);
    if (!Number.isFinite(t)) return '–';
    zoneFormat ??= new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    return zoneFormat.format(t).replace(',', '');
  }
  const ago = (t) => (t === null || t === undefined ? '–' : `${dur((now() - t) / 1000)} ago`);
  const num = (v, unit) => (v === null || v === undefined ? '–' : `${Math.round(v * 10) / 10}${unit ? ` ${unit}` : ''}`);
  const disk = (mb) =>
    mb === null || mb === undefined
      ? '–'
      : mb >= 10240
        ? `${Math.round(mb / 1024)} GB`
        : mb >= 1024
          ? `${Math.round(mb / 102.4) / 10} GB`
          : `${Math.round(mb)} MB`;
  const oldestNow = (r) =>
    r.oldestSec === null || !r.pending ? null : r.oldestSec + (r.metricsAt ? Math.max(0, (now() - r.metricsAt) / 1000) : 0);
  const STATE_RANK = { lost: 0, degraded: 1, offline: 2, online: 3 };

  // ---------- the fleet table ----------
  // The columns that matter on a wall, first; the rest is on the terminal's page. `opt` ones leave a phone's screen.
  const stateText = (r) => (r.state ?? 'unknown') + (r.reasons?.length ? `: ${r.reasons.join('; ')}` : '');
  const clockText = (r) => r.clockState ?? (r.clock === null || r.clock === undefined ? '–' : r.clock ? 'trusted' : 'unsynchronized');
  const COLUMNS = [
    { key: 'terminal', cls: 'name', value: (r) => r.terminal },
    { key: 'state', value: (r) => STATE_RANK[r.state] ?? 4, text: stateText },
    {
      key: 'since',
      value: (r) => (r.since === null ? null : -r.since),
      text: (r) => (r.since === null ? '–' : `${r.sinceExact ? '' : '~'}${dur((now() - r.since) / 1000)}`),
      live: true,
    },
    { key: 'lastSeen', opt: true, value: (r) => (r.lastSeen === null ? null : -r.lastSeen), text: (r) => ago(r.lastSeen), live: true },
    { key: 'pending', cls: 'num', opt: true, value: (r) => r.pending, text: (r) => num(r.pending) },
    { key: 'oldest', cls: 'num', opt: true, value: oldestNow, text: (r) => dur(oldestNow(r)), live: true },
    { key: 'dead', cls: 'num', opt: true, value: (r) => r.dead, text: (r) => num(r.dead) },
    {
      key: 'scanners',
      opt: true,
      value: (r) => (r.scanners === null ? null : r.scannersReady - r.scanners),
      text: (r) => (r.scanners === null ? '–' : r.scanners === 0 ? 'none' : `${r.scannersReady}/${r.scanners} ready`),
    },
    { key: 'clock', opt: true, value: (r) => ({ synchronized: 2, assumed: 1, unsynchronized: 0 })[r.clockState] ?? null, text: clockText },
    {
      key: 'alerts',
      cls: 'num',
      value: (r) => r.alerts,
      text: (r) => (r.alerts ? `${r.alerts} ${r.severity === 'critical' ? 'critical' : 'warning'}` : '–'),
    },
  ];
  const table = $('fleet');
  const rows = new Map(); // key -> {r, tr, cells, texts, site}
  const groups = new Map(); // site -> {tbody, head, keys: Set, dirty}
  let sort = { key: 'terminal', dir: 1 };
  let filterText = '';
  let filterState = '';
  let consoleInfo = { commands: { enabled: false, reason: '' }, loginRequired: false, mqttConnected: false };

  function rowClass(r) {
    return `state-${r.state ?? 'unknown'}${r.severity ? ` alert-${r.severity}` : ''}`;
  }

  function makeRow(r) {
    // Roles stated: the rows are laid out as grids (app.css), which must not cost the table its semantics.
    const tr = el('tr', { class: rowClass(r), 'data-key': r.key, role: 'row' });
    const cells = COLUMNS.map((c, i) => {
      if (i === 0) {
        const th = el('th', { scope: 'row', class: 'name', role: 'rowheader' });
        th.append(el('a', { href: `#/t/${encodeURIComponent(r.site)}/${encodeURIComponent(r.terminal)}`, text: r.terminal }));
        return th;
      }
      return el('td', { class: `${c.cls ?? ''}${c.opt ? ' opt' : ''} c-${c.key}`.trim(), role: 'cell' });
    });
    tr.append(...cells);
    const tile = el(
      'a',
      { class: 'tile', href: `#/t/${encodeURIComponent(r.site)}/${encodeURIComponent(r.terminal)}`, 'data-key': r.key },
      el('span', { class: 'tile-name', text: r.terminal }),
      el('span', { class: 'tile-state' }),
    );
    const row = { r, tr, cells, texts: [], site: r.site, tile, tileText: '' };
    paint(row, false);
    return row;
  }

  function paint(row, liveOnly) {
    const r = row.r;
    for (let i = 1; i < COLUMNS.length; i++) {
      const c = COLUMNS[i];
      if (liveOnly && !c.live) continue;
      const t = c.text(r);
      if (row.texts[i] !== t) {
        row.texts[i] = t;
        row.cells[i].textContent = t;
      }
    }
    if (!liveOnly) {
      const cls = rowClass(r);
      if (row.tr.className !== cls) row.tr.className = cls;
      // The tile: its colour and its word (never colour alone), the reasons on hover and for screen readers.
      const tileCls = `tile state-${r.state ?? 'unknown'}`;
      if (row.tile.className !== tileCls) row.tile.className = tileCls;
      const word = r.state ?? 'unknown';
      if (row.tileText !== word) {
        row.tileText = word;
        row.tile.lastChild.textContent = word;
      }
      const title = `${r.terminal}: ${stateText(r)}`;
      if (row.tile.title !== title) row.tile.title = title;
    }
  }

  function group(site) {
    let g = groups.get(site);
    if (!g) {
      const tbody = el('tbody', { 'data-site': site, role: 'rowgroup' });
      const head = el('th', { scope: 'rowgroup', colspan: COLUMNS.length, class: 'site', role: 'rowheader' });
      tbody.append(el('tr', { class: 'site-row', role: 'row' }, head));
      const tiles = el('div', { class: 'tiles', role: 'list' });
      const siteHead = el('h3', { class: 'site-name', text: site });
      const box = el('section', { class: 'site-tiles', 'data-site': site }, siteHead, tiles);
      g = { site, tbody, head, keys: new Set(), dirty: true, resort: true, box, tiles, siteHead };
      groups.set(site, g);
      const sites = [...groups.keys()].sort((a, b) => a.localeCompare(b));
      const next = sites[sites.indexOf(site) + 1];
      table.insertBefore(tbody, next ? groups.get(next).tbody : null);
      $('overview').insertBefore(box, next ? groups.get(next).box : null);
    }
    return g;
  }

  function matches(r) {
    if (filterState === 'alerting' ? !r.alerts : filterState && r.state !== filterState) return false;
    if (!filterText) return true;
    return `${r.site}/${r.terminal} ${r.version ?? ''} ${r.state ?? ''}`.toLowerCase().includes(filterText);
  }

  function compare(a, b) {
    const col = COLUMNS.find((c) => c.key === sort.key);
    const va = col.value(a.r);
    const vb = col.value(b.r);
    if (va === null || va === undefined) return vb === null || vb === undefined ? a.r.terminal.localeCompare(b.r.terminal) : 1;
    if (vb === null || vb === undefined) return -1;
    const d = typeof va === 'string' ? va.localeCompare(vb) : va - vb;
    return d !== 0 ? d * sort.dir : a.r.terminal.localeCompare(b.r.terminal);
  }

  function order(g) {
    const list = [...g.keys].map((k) => rows.get(k));
    if (g.resort) {
      list.sort(compare);
      let i = 1; // after the site heading
      let same = true;
      for (const row of list) {
        if (g.tbody.rows[i] !== row.tr) {
          same = false;
          break;
        }
        i++;
      }
      if (!same) {
        const frag = document.createDocumentFragment();
        for (const row of list) frag.append(row.tr);
        g.tbody.append(frag);
      }
      // Tiles stay in name order whatever the table's sort.
      const byName = [...list].sort((a, b) => a.r.terminal.localeCompare(b.r.terminal));
      if (byName.some((row, k) => g.tiles.children[k] !== row.tile.parentNode)) {
        g.tiles.replaceChildren(...byName.map((row) => el('div', { role: 'listitem' }, row.tile)));
      }
      g.resort = false;
    }
    let shown = 0;
    let lost = 0;
    let alerting = 0;
    for (const row of list) {
      const m = matches(row.r);
      if (row.tr.hidden === m) row.tr.hidden = !m;
      if (m) shown++;
      if (row.r.state === 'lost') lost++;
      if (row.r.alerts) alerting++;
    }
    const parts = [g.site, `${list.length} terminal${list.length === 1 ? '' : 's'}`];
    if (lost) parts.push(`${lost} lost`);
    if (alerting) parts.push(`${alerting} with alerts`);
    if (shown !== list.length) parts.push(`${shown} shown`);
    const text = parts.join(' · ');
    if (g.head.textContent !== text) g.head.textContent = text;
    if (g.siteHead.textContent !== text) g.siteHead.textContent = text;
    g.tbody.hidden = shown === 0;
    g.dirty = false;
  }

  let orderQueued = false;
  function queueOrder() {
    if (orderQueued) return;
    orderQueued = true;
    requestAnimationFrame(() => {
      orderQueued = false;
      for (const g of groups.values()) if (g.dirty) order(g);
      summarize();
    });
  }

  function summarize() {
    let online = 0;
    let lost = 0;
    let offline = 0;
    let degraded = 0;
    let shown = 0;
    for (const row of rows.values()) {
      if (row.r.state === 'online') online++;
      else if (row.r.state === 'lost') lost++;
      else if (row.r.state === 'offline') offline++;
      else if (row.r.state === 'degraded') degraded++;
      if (!row.tr.hidden) shown++;
    }
    const parts = [`${rows.size} terminal${rows.size === 1 ? '' : 's'}`, `${online} online`];
    if (degraded) parts.push(`${degraded} degraded`);
    if (offline) parts.push(`${offline} offline`);
    parts.push(`${lost} lost`);
    $('summary').textContent = parts.join(' · ');
    $('shown').textContent = shown === rows.size ? '' : `Showing ${shown} of ${rows.size}`;
    $('empty').hidden = rows.size > 0;
  }

  function upsert(r) {
    const old = rows.get(r.key);
    if (old) {
      const col = COLUMNS.find((c) => c.key === sort.key);
      const moved = col.value(old.r) !== col.value(r);
      old.r = r;
      paint(old, false);
      const g = group(r.site);
      g.dirty = true;
      // Rows move only when the sorted column's value changed.
      if (moved) g.resort = true;
      if (current && current.key === r.key) refreshTerminalSoon();
      return;
    }
    const row = makeRow(r);
    rows.set(r.key, row);
    const g = group(r.site);
    g.keys.add(r.key);
    g.tbody.append(row.tr);
    g.dirty = true;
    g.resort = true;
  }

  function remove(key) {
    const row = rows.get(key);
    if (!row) return;
    rows.delete(key);
    row.tr.remove();
    row.tile.parentNode?.remove();
    const g = groups.get(row.site);
    g.keys.delete(key);
    g.dirty = true;
    if (g.keys.size === 0) {
      g.tbody.remove();
      g.box.remove();
      groups.delete(row.site);
    }
  }

  function snapshot(s) {
    for (const g of groups.values()) {
      g.tbody.remove();
      g.box.remove();
    }
    rows.clear();
    groups.clear();
    applyConsole(s.console);
    for (const r of s.terminals) upsert(r);
    for (const g of groups.values()) order(g);
    summarize();
    renderAlerts(s.alerts);
    if (!document.body.dataset.ready) {
      // Marked once the frame with every row has been produced (read by tests and the benchmark).
      requestAnimationFrame(() =>
        setTimeout(() => {
          window.__firstFullView = performance.now();
          document.body.dataset.ready = 'true';
        }),
      );
    }
  }

  function applyConsole(c) {
    if (!c) return;
    consoleInfo = c;
    if (typeof c.now === 'number') skew = c.now - Date.now();
    if (c.timeZone && c.timeZone !== zone) {
      zone = c.timeZone;
      zoneFormat = null;
    }
    $('zone').textContent = `Times in ${zone}`;
    $('logout').hidden = !c.loginRequired;
    setLink();
  }

  let streamUp = false;
  function setLink() {
    const text = !streamUp
      ? 'Reconnecting to the console…'
      : consoleInfo.mqttConnected
        ? 'Live'
        : 'Live, but the console has lost the broker: figures may be old';
    const e = $('link');
    if (e.textContent !== text) e.textContent = text;
    e.className = `link ${streamUp && consoleInfo.mqttConnected ? 'ok' : 'bad'}`;
  }

  // ---------- alerts ----------
  const MAX_ALERTS_SHOWN = 50;
  function renderAlerts(alerts) {
    const ul = $('alerts');
    ul.replaceChildren(
      ...alerts
        .slice(0, MAX_ALERTS_SHOWN)
        .map((a) =>
          el(
            'li',
            { class: `alert ${a.severity}`, 'data-code': a.code, 'data-terminal': `${a.site}/${a.terminal}` },
            el('span', { class: 'severity', text: a.severity }),
            ' ',
            el('strong', { text: a.code }),
            ' ',
            el('a', { href: `#/t/${encodeURIComponent(a.site)}/${encodeURIComponent(a.terminal)}`, text: `${a.site}/${a.terminal}` }),
            `: ${a.message} `,
            el('span', { class: 'since', text: `(since ${at(a.since)})` }),
            el('div', { class: 'hint', text: a.hint }),
          ),
        ),
    );
    $('no-alerts').hidden = alerts.length > 0;
    const more = $('more-alerts');
    more.hidden = alerts.length <= MAX_ALERTS_SHOWN;
    more.textContent = `and ${alerts.length - MAX_ALERTS_SHOWN} more: choose "with alerts" in the state filter to see those terminals.`;
    lastAlerts = alerts;
    if (current) renderTerminalAlerts();
  }
  let lastAlerts = [];

  // ---------- sorting and filtering ----------
  table.querySelector('thead').addEventListener('click', (ev) => {
    const b = ev.target.closest('button[data-sort]');
    if (!b) return;
    const key = b.dataset.sort;
    sort = { key, dir: sort.key === key ? -sort.dir : 1 };
    for (const th of table.querySelectorAll('thead th')) {
      const k = th.querySelector('button').dataset.sort;
      if (k === key) th.setAttribute('aria-sort', sort.dir === 1 ? 'ascending' : 'descending');
      else th.removeAttribute('aria-sort');
    }
    for (const g of groups.values()) g.dirty = g.resort = true;
    queueOrder();
  });
  $('filter').addEventListener('input', (ev) => {
    filterText = ev.target.value.trim().toLowerCase();
    for (const g of groups.values()) g.dirty = true;
    queueOrder();
  });
  $('state-filter').addEventListener('change', (ev) => {
    filterState = ev.target.value;
    for (const g of groups.values()) g.dirty = true;
    queueOrder();
  });

  // Ages move on their own: repaint the time cells every few seconds.
  setInterval(() => {
    for (const row of rows.values()) paint(row, true);
  }, 5000);

  // ---------- live updates ----------
  let source = null;
  function connect() {
    source = new EventSource('/api/events');
    source.addEventListener('open', () => {
      streamUp = true;
      setLink();
    });
    source.addEventListener('snapshot', (e) => snapshot(JSON.parse(e.data)));
    source.addEventListener('rows', (e) => {
      const list = JSON.parse(e.data);
      for (const r of list) upsert(r);
      // Read by the benchmark: how many row updates the page applied.
      window.__rowsApplied = (window.__rowsApplied || 0) + list.length;
      queueOrder();
    });
    source.addEventListener('remove', (e) => {
      for (const k of JSON.parse(e.data)) remove(k);
      queueOrder();
    });
    source.addEventListener('alerts', (e) => {
      const d = JSON.parse(e.data);
      applyConsole(d.console);
      renderAlerts(d.alerts);
    });
    source.addEventListener('logout', () => location.assign('/login?expired'));
    source.addEventListener('error', () => {
      streamUp = false;
      setLink();
      // A session that ended makes the stream fail for good: ask once what the server says.
      fetch('/api/fleet', { credentials: 'same-origin' }).then(
        (r) => {
          if (r.status === 401) location.assign('/login?expired');
        },
        () => undefined,
      );
    });
  }

  // ---------- a terminal's page ----------
  let current = null; // {key, site, terminal}
  let refreshTimer = null;
  let refreshQueued = null;

  function refreshTerminalSoon() {
    if (refreshQueued) return;
    refreshQueued = setTimeout(() => {
      refreshQueued = null;
      loadTerminal();
    }, 1000);
  }

  function route() {
    const m = /^#\/t\/([^/]+)\/([^/]+)$/.exec(location.hash);
    clearInterval(refreshTimer);
    if (m) {
      const site = decodeURIComponent(m[1]);
      const terminal = decodeURIComponent(m[2]);
      current = { key: `${site}/${terminal}`, site, terminal };
      $('fleet-view').hidden = true;
      $('terminal-view').hidden = false;
      $('terminal-title').textContent = `${terminal} (site ${site})`;
      document.title = `${terminal} · Fleet console`;
      // Nothing of the terminal shown before stays while this one loads.
      $('terminal-state').className = 'terminal-state';
      $('terminal-state').textContent = 'Loading…';
      for (const id of ['facts', 't-alerts', 'answer', 'dead-list', 'charts', 'errors', 'transitions']) $(id).replaceChildren();
      $('dead-summary').textContent = '';
      $('raw').textContent = '';
      loadTerminal(true);
      refreshTimer = setInterval(loadTerminal, 15000);
    } else {
      current = null;
      $('terminal-view').hidden = true;
      $('fleet-view').hidden = false;
      document.title = 'Fleet console · edge-agent';
    }
  }

  async function loadTerminal(focus) {
    if (!current) return;
    const key = current.key;
    const res = await fetch(`/api/terminal?key=${encodeURIComponent(key)}`, { credentials: 'same-origin' });
    if (res.status === 401) return location.assign('/login?expired');
    const body = await res.json();
    if (!current || current.key !== key) return;
    if (!res.ok) {
      $('terminal-state').textContent = body.error ? body.error.message : `HTTP ${res.status}`;
      return;
    }
    renderTerminal(body);
    if (focus) $('terminal-title').focus();
  }

  function renderTerminal(d) {
    skew = d.now - Date.now();
    const t = d.table;
    const state = $('terminal-state');
    state.className = `terminal-state state-${t.state ?? 'unknown'}`;
    state.textContent = `${t.state ?? 'state unknown'}${t.reasons?.length ? ` (${t.reasons.join('; ')})` : ''}${t.since ? ` for ${t.sinceExact ? '' : '~'}${dur((now() - t.since) / 1000)}` : ''} · last seen ${ago(t.lastSeen)}`;
    const facts = [
      ['Queue', num(t.pending)],
      ['Oldest pending', dur(d.oldestPendingAgeNowSec)],
      ['Dead letters', num(t.dead)],
      ['Last delivery', t.lastDelivery ? ago(t.lastDelivery) : 'never'],
      ['Last punch', d.row.lastPunchAt ? ago(Date.parse(d.row.lastPunchAt)) : '–'],
      [
        'Scanners',
        d.row.scanners.length ? d.row.scanners.map((s) => `${s.key} (${s.family ?? '?'}): ${s.status}`).join(', ') : 'none reported',
      ],
      ['Identification p95', num(t.idP95, 'ms')],
      ['Capture to punch p95', num(t.capP95, 'ms')],
      ['Clock', clockText(t)],
      ['CPU temperature', num(t.temp, '°C')],
      ['Free disk', disk(t.disk)],
      ['Agent memory', num(d.row.rssMb, 'MB')],
      ['Version', t.version ?? '–'],
    ];
    $('facts').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]));
    renderTerminalAlerts();
    renderCommands(d.commands);
    $('dead-summary').textContent =
      t.dead === null
        ? 'Not reported yet.'
        : t.dead === 0
          ? 'None.'
          : `${t.dead} dead letter(s): punches an upstream refused for good.${d.commands.enabled ? '' : ' Listing them is a command: it needs a console login and an ops key.'}`;
    $('load-dead').hidden = !(d.commands.enabled && t.dead);
    renderCharts(d.history);
    $('errors').replaceChildren(
      ...(d.errors.length
        ? d.errors.map((e) => el('li', {}, el('time', { datetime: e.at, text: at(e.at) }), ` ${e.message}`))
        : [el('li', { text: 'None reported since the console started.' })]),
    );
    $('transitions').replaceChildren(
      ...(d.transitions.length
        ? [...d.transitions].reverse().map((x) => el('li', {}, el('time', { datetime: x.at, text: at(x.at) }), ` ${x.state ?? 'cleared'}`))
        : [el('li', { text: 'None yet.' })]),
    );
    $('raw').textContent = JSON.stringify({ info: d.info, metrics: d.metrics }, null, 2);
  }

  function renderTerminalAlerts() {
    if (!current) return;
    const mine = lastAlerts.filter((a) => `${a.site}/${a.terminal}` === current.key);
    $('t-alerts').replaceChildren(
      ...(mine.length
        ? mine.map((a) =>
            el(
              'li',
              { class: `alert ${a.severity}` },
              el('strong', { text: a.code }),
              `: ${a.message}`,
              el('div', { class: 'hint', text: a.hint }),
            ),
          )
        : [el('li', { text: 'No alerts.' })]),
    );
  }

  function renderCommands(c) {
    $('commands').hidden = !c.enabled;
    $('commands-off').hidden = c.enabled;
    $('commands-off').textContent = c.enabled ? '' : `Commands are off: ${c.reason}.`;
  }

  // Small charts: one SVG polyline per run of known values.
  function renderCharts(h) {
    const box = $('charts');
    if (!h) {
      box.replaceChildren(el('p', { text: 'No metrics received yet.' }));
      return;
    }
    const W = 320;
    const H = 64;
    const NS = 'http://www.w3.org/2000/svg';
    box.replaceChildren(
      ...h.series.map((s) => {
        const known = s.values.filter((v) => v !== null);
        const min = known.length ? Math.min(...known) : 0;
        const max = known.length ? Math.max(...known) : 0;
        const last = known.length ? known[known.length - 1] : null; // the worst of the latest bucket
        const unit = s.unit ? ` ${s.unit}` : '';
        const step = Math.round(h.stepMs / 60000);
        const summary = known.length
          ? `highest ${num(max)}${unit}, lowest ${num(min)}${unit}, latest ${num(last)}${unit} (each point the worst of ${step} min)`
          : 'no data';
        const svg = document.createElementNS(NS, 'svg');
        svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
        svg.setAttribute('role', 'img');
        svg.setAttribute('aria-label', `${s.label} over the last 24 hours: ${summary}`);
        svg.setAttribute('class', 'chart');
        const span = max - min || 1;
        let pts = [];
        const flushLine = () => {
          if (pts.length) {
            const line = document.createElementNS(NS, pts.length === 1 ? 'circle' : 'polyline');
            if (pts.length === 1) {
              const [x, y] = pts[0].split(',');
              line.setAttribute('cx', x);
              line.setAttribute('cy', y);
              line.setAttribute('r', '1.5');
            } else line.setAttribute('points', pts.join(' '));
            svg.append(line);
          }
          pts = [];
        };
        s.values.forEach((v, i) => {
          if (v === null) {
            flushLine();
            return;
          }
          const x = (i / (s.values.length - 1)) * (W - 2) + 1;
          const y = H - 2 - ((v - min) / span) * (H - 4);
          pts.push(`${x.toFixed(1)},${y.toFixed(1)}`);
        });
        flushLine();
        return el('figure', { class: 'chart-box' }, svg, el('figcaption', {}, el('strong', { text: s.label }), el('br'), summary));
      }),
    );
  }

  async function send(command, args) {
    if (!current) return;
    if (command === 'restart' && !window.confirm(`Restart the agent on ${current.key}? Punches are kept; it is back in a few seconds.`))
      return;
    const answer = $('answer');
    answer.replaceChildren(el('p', { text: `Sending ${command} to ${current.key}…` }));
    for (const b of document.querySelectorAll('#commands button, #load-dead')) b.disabled = true;
    try {
      const res = await fetch('/api/command', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ site: current.site, terminal: current.terminal, command, args }),
      });
      if (res.status === 401) return location.assign('/login?expired');
      const body = await res.json();
      if (!res.ok) {
        answer.replaceChildren(el('p', { class: 'bad', text: `${command}: ${body.error.code}: ${body.error.message}` }));
        return body;
      }
      const ok = body.status === 'ok';
      answer.replaceChildren(
        el('p', {
          class: ok ? 'ok' : 'bad',
          'data-command': command,
          'data-status': body.status,
          text: ok
            ? `${command}: ok (transaction ${body.transaction})`
            : `${command}: ${body.error.code}: ${body.error.message}${body.error.hint ? ` (${body.error.hint})` : ''}`,
        }),
        el('pre', { text: JSON.stringify(ok ? body.result : body.error, null, 2) }),
      );
      return body;
    } catch (err) {
      answer.replaceChildren(el('p', { class: 'bad', text: `${command}: the console did not answer (${err.message})` }));
    } finally {
      for (const b of document.querySelectorAll('#commands button, #load-dead')) b.disabled = false;
    }
  }

  $('commands').addEventListener('click', (ev) => {
    const b = ev.target.closest('button[data-command]');
    if (!b) return;
    const command = b.dataset.command;
    const args = command === 'set-log-level' ? { level: $('log-level').value, module: $('log-module').value.trim() || '*' } : {};
    send(command, args).then(() => (command === 'retry-dead' ? loadTerminal() : undefined));
  });

  $('load-dead').addEventListener('click', async () => {
    const body = await send('queue-list', { dead: true, limit: 50 });
    if (body?.status !== 'ok') return;
    const events = body.result.events;
    const list = $('dead-list');
    if (!events.length) return list.replaceChildren(el('p', { text: 'No dead letters.' }));
    const head = el('tr', {}, ...['Punch', 'Employee', 'Direction', 'Local time', 'Why'].map((h) => el('th', { scope: 'col', text: h })));
    const body2 = events.map((e) =>
      el(
        'tr',
        {},
        el('td', { class: 'mono', text: e.id }),
        el('td', { text: e.employeeCode }),
        el('td', { text: e.direction }),
        el('td', { text: e.localTime }),
        el('td', {
          text: (e.deliveries || [])
            .filter((x) => x.state === 'dead')
            .map((x) => `${x.sink}: ${x.lastStatus ?? ''} ${x.lastError ?? ''}`.trim())
            .join('; '),
        }),
      ),
    );
    list.replaceChildren(
      el(
        'table',
        { class: 'dead' },
        el('caption', { text: `The first ${events.length} dead letters of ${current.key}` }),
        el('thead', {}, head),
        el('tbody', {}, ...body2),
      ),
    );
  });

  // ---------- wall mode: dark, large, no controls (?kiosk=1, or the button; remembered) ----------
  const kioskButton = $('kiosk');
  function setKiosk(on) {
    document.body.classList.toggle('kiosk', on);
    kioskButton.setAttribute('aria-pressed', String(on));
    kioskButton.textContent = on ? 'Leave wall mode' : 'Wall mode';
    try {
      localStorage.setItem('console.kiosk', on ? '1' : '0');
    } catch {
      // a browser without storage keeps it for this page only
    }
  }
  const asked = new URLSearchParams(location.search).get('kiosk');
  let stored = null;
  try {
    stored = localStorage.getItem('console.kiosk');
  } catch {
    stored = null;
  }
  setKiosk(asked !== null ? asked === '1' || asked === 'true' : stored === '1');
  kioskButton.addEventListener('click', () => setKiosk(!document.body.classList.contains('kiosk')));

  window.addEventListener('hashchange', route);
  route();
  connect();
})();
