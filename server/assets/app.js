// gamesolver dashboard: a single page (hash routes #/ and #/jobs/ID) over the coordinator's
// HTTP API. Plain JavaScript, no build step, no request outside this coordinator.
//
// The API token (GAMESOLVER_API_TOKEN), when the coordinator requires one, is asked for after
// the first 401 and kept in sessionStorage. Because EventSource cannot send an Authorization
// header, the job's event stream is read with fetch() and parsed here; pictures are fetched
// the same way and inlined (so they are part of the DOM).
'use strict';

const TOKEN_KEY = 'gamesolver-api-token';
const POLL_MS = 2000;
const PLOT_REFRESH_MS = 700;

const $ = (id) => document.getElementById(id);
let pollTimer = null;
let streamAbort = null;
let meta = null;

function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

function showTokenForm(note) {
  // Fill the field only when the form appears: a 401 from a request still in flight with the
  // old token must not overwrite what the user is typing.
  if ($('token-form').hidden) $('token').value = token();
  $('token-form').hidden = false;
  $('token-note').textContent = note || '';
}

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// fetch with the token; throws ApiError with the API's one-line message on 4xx/5xx.
async function api(path, init = {}) {
  const headers = Object.assign({}, init.headers || {});
  const sent = token();
  if (sent) headers['Authorization'] = 'Bearer ' + sent;
  const r = await fetch(path, Object.assign({}, init, { headers }));
  // A 401 for a token that has since been replaced says nothing about the new one.
  if (r.status === 401 && sent === token()) {
    showTokenForm('this coordinator needs its API token');
  }
  if (!r.ok) {
    let message = r.status + ' ' + r.statusText;
    try {
      const body = await r.json();
      if (body && body.error && body.error.message) message = body.error.message;
    } catch (_) { /* not JSON */ }
    throw new ApiError(r.status, message);
  }
  return r;
}

async function apiJson(path, init) {
  return (await api(path, init)).json();
}

function setError(el, message) {
  el.textContent = message || '';
  el.hidden = !message;
}

function globalError(e) {
  setError($('global-error'), e ? String(e.message || e) : '');
}

// "a=1, b=2" (commas, semicolons or new lines) -> {a: "1", b: "2"}.
function parseSettings(text, what) {
  const out = {};
  for (const raw of text.split(/[,;\n]/)) {
    const item = raw.trim();
    if (!item) continue;
    const eq = item.indexOf('=');
    if (eq <= 0) throw new Error(what + ": '" + item + "' is not KEY=VALUE");
    out[item.slice(0, eq).trim()] = item.slice(eq + 1).trim();
  }
  return out;
}

function cell(text, cls) {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

function stateBadge(state) {
  const s = document.createElement('span');
  s.className = 'state ' + state;
  s.textContent = state;
  return s;
}

function agoText(ms) {
  if (ms == null) return 'never';
  return ms < 1000 ? 'just now' : Math.round(ms / 1000) + ' s ago';
}

// Puts an SVG answer into `box` (or the API's error into `note`).
async function showSvg(box, path, note) {
  try {
    const r = await api(path);
    if (r.status === 204) {
      box.innerHTML = '';
      if (note) note.textContent = 'no picture for this game';
      return false;
    }
    box.innerHTML = await r.text();
    if (note) note.textContent = '';
    return true;
  } catch (e) {
    box.innerHTML = '';
    if (note) note.textContent = e.message;
    return false;
  }
}

// ---- home: form, jobs, workers -------------------------------------------------------------

async function loadMeta() {
  if (meta) return meta;
  meta = await (await fetch('/assets/meta.json')).json();
  const fill = (sel, names, pick) => {
    sel.innerHTML = '';
    for (const n of names) {
      const o = document.createElement('option');
      o.value = o.textContent = n;
      sel.appendChild(o);
    }
    if (names.includes(pick)) sel.value = pick;
  };
  fill($('f-game'), meta.games, 'connect4');
  fill($('f-algorithm'), meta.algorithms, 'alphabeta');
  await loadOptionFields();
  return meta;
}

// The form's option fields, built from GET /v1/options (the declared specs of the chosen
// game and algorithm): a number field with the spec's bounds, a checkbox, or a text field;
// the default is the placeholder. A field left empty sends nothing.
let fieldsFor = '';
async function loadOptionFields() {
  const game = $('f-game').value;
  const algorithm = $('f-algorithm').value;
  const key = game + '/' + algorithm;
  if (key === fieldsFor) return;
  fieldsFor = key;
  const box = $('f-fields');
  for (const old of box.querySelectorAll('label')) old.remove();
  let list;
  try {
    const q = new URLSearchParams({ game, algorithm });
    list = await apiJson('/v1/options?' + q.toString());
  } catch (_) {
    box.hidden = true; // not a pair the registry runs: submitting says why
    return;
  }
  if (fieldsFor !== key) return;
  for (const o of list.options) {
    const label = document.createElement('label');
    label.title = o.description + (o.why ? ' (bound: ' + o.why + ')' : '');
    label.append((o.param ? 'game ' : '') + o.name + ' ');
    const input = document.createElement(o.type === 'boolean' ? 'select' : 'input');
    if (o.type === 'boolean') {
      for (const v of ['', 'true', 'false']) {
        const opt = document.createElement('option');
        opt.value = v;
        opt.textContent = v || 'default (' + o.default + ')';
        input.appendChild(opt);
      }
    } else {
      input.placeholder = o.default;
      if (o.type === 'integer' || o.type === 'number') {
        input.type = 'number';
        input.min = o.minimum;
        if (o.maximum < Number.MAX_SAFE_INTEGER) input.max = o.maximum;
        input.step = o.type === 'integer' ? '1' : 'any';
      }
    }
    input.dataset.name = o.name;
    input.dataset.param = o.param ? '1' : '';
    label.appendChild(input);
    box.appendChild(label);
  }
  box.hidden = !list.options.length;
}

// Values of the option fields, added to `job` where the free-text settings do not name them.
function addFieldValues(job) {
  for (const input of $('f-fields').querySelectorAll('[data-name]')) {
    const v = input.value.trim();
    if (!v) continue;
    const into = input.dataset.param ? job.game_params : job.options;
    if (!(input.dataset.name in into)) into[input.dataset.name] = v;
  }
}

async function refreshJobs() {
  const body = await apiJson('/v1/jobs?limit=50');
  const tbody = $('jobs').querySelector('tbody');
  tbody.innerHTML = '';
  for (const j of body.jobs) {
    const tr = document.createElement('tr');
    tr.dataset.job = j.id;
    const id = document.createElement('td');
    const a = document.createElement('a');
    a.href = '#/jobs/' + j.id;
    a.textContent = j.id;
    id.appendChild(a);
    tr.appendChild(id);
    const st = document.createElement('td');
    st.appendChild(stateBadge(j.state));
    tr.appendChild(st);
    tr.appendChild(cell(j.summary));
    tbody.appendChild(tr);
  }
  if (!body.jobs.length) {
    const tr = document.createElement('tr');
    const td = cell('no jobs yet', 'note');
    td.colSpan = 3;
    tr.appendChild(td);
    tbody.appendChild(tr);
  }
}

async function refreshStatus() {
  const s = await apiJson('/v1/status');
  const jobs = Object.entries(s.jobs || {}).map(([k, v]) => v + ' ' + k).join(', ') || 'no jobs';
  $('status-line').textContent = 'queue ' + s.queue_depth + ', running ' + s.running + ', ' + jobs +
    ', ' + s.throughput.tasks_last_minute + ' tasks in the last minute';
  const tbody = $('workers').querySelector('tbody');
  tbody.innerHTML = '';
  for (const w of s.workers) {
    const tr = document.createElement('tr');
    tr.dataset.worker = w.id;
    tr.appendChild(cell(w.id));
    tr.appendChild(cell(w.host));
    tr.appendChild(cell(String(w.threads), 'num'));
    tr.appendChild(cell(agoText(w.last_seen_ago_ms)));
    const doing = (w.current || []).map((c) => 'job ' + c.job + ' task ' + c.task + ' (' + c.what + ')');
    tr.appendChild(cell(doing.length ? doing.join('; ') : 'idle'));
    tbody.appendChild(tr);
  }
  if (!s.workers.length) {
    const tr = document.createElement('tr');
    const td = cell('no workers yet', 'note');
    td.colSpan = 5;
    tr.appendChild(td);
    tbody.appendChild(tr);
  }
  await showSvg($('status-plot'), '/v1/status/plot.svg');
}

async function pollHome() {
  try {
    await Promise.all([refreshJobs(), refreshStatus()]);
    globalError(null);
  } catch (e) {
    globalError(e);
  }
}

let previewTimer = null;
function schedulePreview() {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(preview, 250);
}

async function preview() {
  const note = $('preview-note');
  let params;
  try {
    params = parseSettings($('f-params').value, 'game parameters');
  } catch (e) {
    $('preview').innerHTML = '';
    note.textContent = e.message;
    return;
  }
  const q = new URLSearchParams(params);
  q.set('game', $('f-game').value);
  q.set('position', $('f-position').value);
  await showSvg($('preview'), '/v1/board.svg?' + q.toString(), note);
}

async function submitJob(ev) {
  ev.preventDefault();
  const err = $('submit-error');
  setError(err, '');
  let job;
  try {
    job = {
      game: $('f-game').value,
      game_params: parseSettings($('f-params').value, 'game parameters'),
      position: $('f-position').value,
      algorithm: $('f-algorithm').value,
      options: parseSettings($('f-options').value, 'options'),
      limits: {},
    };
    addFieldValues(job);
    for (const [id, key] of [['f-time', 'time_ms'], ['f-nodes', 'node_limit']]) {
      const v = $(id).value.trim();
      if (v) job.limits[key] = Number(v);
    }
  } catch (e) {
    setError(err, e.message);
    return;
  }
  $('f-submit').disabled = true;
  try {
    const made = await apiJson('/v1/jobs', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(job),
    });
    location.hash = '#/jobs/' + made.id;
  } catch (e) {
    setError(err, e.message);
  } finally {
    $('f-submit').disabled = false;
  }
}

async function showHome() {
  $('home-view').hidden = false;
  try {
    await loadMeta();
  } catch (e) {
    globalError(e);
  }
  preview();
  await pollHome();
  pollTimer = setInterval(pollHome, POLL_MS);
}

// ---- job page ------------------------------------------------------------------------------

function fmtValue(v) {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function flatProgress(p) {
  const out = {};
  for (const [k, v] of Object.entries(p || {})) {
    if (k === 'kernel' && v && typeof v.report === 'object' && v.report) {
      for (const [rk, rv] of Object.entries(v.report)) if (!(rk in out)) out[rk] = rv;
    } else {
      out[k] = v;
    }
  }
  return out;
}

let lastFigures = {};
let lastPlot = 0;
let plotPending = null;
function refreshPlot(id, now) {
  const run = () => {
    lastPlot = Date.now();
    plotPending = null;
    return showSvg($('job-plot'), '/v1/jobs/' + id + '/plot.svg');
  };
  if (now || Date.now() - lastPlot >= PLOT_REFRESH_MS) {
    clearTimeout(plotPending);
    return run();
  }
  if (!plotPending) plotPending = setTimeout(run, PLOT_REFRESH_MS);
  return null;
}

function renderJob(s) {
  const badge = $('job-state');
  badge.className = 'state ' + s.state;
  badge.textContent = s.state;
  document.body.dataset.jobState = s.state;
  const spec = s.job || {};
  const params = Object.entries(spec.game_params || {}).map(([k, v]) => k + '=' + v).join(', ');
  const opts = Object.entries(spec.options || {}).map(([k, v]) => k + '=' + v).join(', ');
  $('job-what').textContent = spec.game + (params ? ' (' + params + ')' : '') + ', position "' +
    (spec.position || '') + '", ' + spec.algorithm + (opts ? ' (' + opts + ')' : '');
  // A finished job has no live progress any more: keep showing the last figures seen.
  let figures = flatProgress(s.progress);
  if (Object.keys(figures).length) lastFigures = figures;
  else figures = lastFigures;
  const tbody = $('job-progress').querySelector('tbody');
  tbody.innerHTML = '';
  for (const [k, v] of Object.entries(figures)) {
    const tr = document.createElement('tr');
    const th = document.createElement('th');
    th.textContent = k.replace(/_/g, ' ');
    tr.appendChild(th);
    tr.appendChild(cell(fmtValue(v), 'num'));
    tbody.appendChild(tr);
  }
  const t = s.tasks || {};
  // Every task once, by its real state: an obsolete probe is cancelled, not done.
  $('job-tasks').textContent = (t.total || 0) + ' tasks: ' +
    ['queued', 'running', 'done', 'cancelled', 'failed'].map((k) => (t[k] || 0) + ' ' + k).join(', ');
  $('job-result').textContent = s.result ? JSON.stringify(s.result, null, 2) : '(none yet)';
  setError($('job-error'), s.error || '');
  $('job-cancel').hidden = ['done', 'failed', 'cancelled'].includes(s.state);
}

// Reads the job's Server-Sent Events with fetch (so the token can be sent) until `end`.
async function follow(id, signal) {
  const r = await api('/v1/jobs/' + id + '/events', { signal, headers: { Accept: 'text/event-stream' } });
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return false;
    buf += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let event = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (!data.length) continue;
      const status = JSON.parse(data.join('\n'));
      renderJob(status);
      if (event === 'end') {
        await refreshPlot(id, true);
        return true;
      }
      refreshPlot(id, false);
    }
  }
}

async function showJob(id) {
  $('job-view').hidden = false;
  $('job-id').textContent = id;
  $('job-plot').innerHTML = '';
  $('job-board').innerHTML = '';
  $('job-result').textContent = '(none yet)';
  document.body.dataset.jobState = '';
  lastFigures = {};
  const ctl = new AbortController();
  streamAbort = ctl;
  try {
    renderJob(await apiJson('/v1/jobs/' + id));
    globalError(null);
  } catch (e) {
    globalError(e);
    return;
  }
  await Promise.all([
    refreshPlot(id, true),
    showSvg($('job-board'), '/v1/jobs/' + id + '/board.svg', $('job-board-note')),
  ]);
  // Follow until the end; reconnect after a dropped connection.
  while (!ctl.signal.aborted) {
    try {
      if (await follow(id, ctl.signal)) break;
    } catch (e) {
      if (ctl.signal.aborted) break;
      globalError(e);
      if (e instanceof ApiError && e.status < 500) break;
    }
    await new Promise((ok) => setTimeout(ok, POLL_MS));
  }
}

// ---- routing -------------------------------------------------------------------------------

function route() {
  clearInterval(pollTimer);
  pollTimer = null;
  if (streamAbort) streamAbort.abort();
  streamAbort = null;
  $('home-view').hidden = true;
  $('job-view').hidden = true;
  globalError(null);
  const m = location.hash.match(/^#\/jobs\/(\d+)$/);
  if (m) {
    document.body.dataset.view = 'job';
    showJob(m[1]);
  } else {
    document.body.dataset.view = 'home';
    showHome();
  }
}

window.addEventListener('hashchange', route);
$('submit-form').addEventListener('submit', submitJob);
for (const id of ['f-game', 'f-params', 'f-position']) {
  $(id).addEventListener('input', schedulePreview);
  $(id).addEventListener('change', schedulePreview);
}
for (const id of ['f-game', 'f-algorithm']) {
  $(id).addEventListener('change', loadOptionFields);
}
$('token-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const t = $('token').value.trim();
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
  $('token-note').textContent = t ? 'token set' : 'token cleared';
  route();
});
$('job-cancel').addEventListener('click', async () => {
  const id = $('job-id').textContent;
  try {
    renderJob(await apiJson('/v1/jobs/' + id + '/cancel', { method: 'POST' }));
  } catch (e) {
    globalError(e);
  }
});
if (token()) showTokenForm('');
route();
