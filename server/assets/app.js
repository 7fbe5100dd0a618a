// gamesolver dashboard: a single page (hash routes #/, #/jobs/ID and #/analyse) over the
// coordinator's HTTP API. Plain JavaScript, no build step, no request outside this coordinator.
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

// A table row saying the table is empty.
function emptyRow(tbody, text, span) {
  const tr = document.createElement('tr');
  const td = cell(text, 'note');
  td.colSpan = span;
  tr.appendChild(td);
  tbody.appendChild(tr);
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
  // Uploaded game modules (POST /v1/games), by name: a job names the module's hash.
  try {
    for (const g of (await apiJson('/v1/games')).games) {
      const o = document.createElement('option');
      o.value = g.game;
      o.textContent = 'module:' + g.name;
      $('f-game').appendChild(o);
    }
  } catch (_) { /* no list (no token yet): the catalogue's games only */ }
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
    // Values as people read them (the API's summary writes every digit of a float).
    tr.appendChild(cell(String(j.summary).replace(/value (-?\d+\.\d{5,}(?:e-?\d+)?)/,
      (_, n) => 'value ' + fmtNum(Number(n), 4))));
    tbody.appendChild(tr);
  }
  if (!body.jobs.length) emptyRow(tbody, 'no jobs yet', 3);
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
  if (!s.workers.length) emptyRow(tbody, 'no workers yet', 5);
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

// ---- answers: per-move scores, the principal variation, MCTS bars ---------------------------
//
// A result's `moves` maps each root move (in the game's notation) to {value} (exact, from the
// root side's view), {lower, upper} (not finished) or {visits, value} (MCTS). Scores are always
// written as text; colours (Okabe-Ito blue for a win, vermillion for a loss, grey for a draw)
// only repeat what the text says, and best moves also carry a star.

const SVG_NS = 'http://www.w3.org/2000/svg';
// Games whose moves map to board cells, so the PV and the scores can be drawn on the board.
const CELL_GAMES = ['connect4', 'othello', 'tictactoe', 'mnk'];

// The position after `moves`, in the game's notation (moves joined as the game reads them).
function extendPosition(game, position, moves) {
  const pos = position || '';
  const sep = game === 'mnk' || (game === 'tictactoe' && pos.includes(',')) ? ',' : '';
  if (!moves.length) return pos;
  return pos + (pos && sep ? sep : '') + moves.join(sep);
}

// Per-move scores of a result, best first: {move, kind, value, lower, upper, visits, best}.
function moveScores(result) {
  const out = [];
  const moves = (result && result.moves) || {};
  for (const [move, m] of Object.entries(moves)) {
    if (m && typeof m.visits === 'number') {
      out.push({ move, kind: 'mcts', visits: m.visits, value: m.value });
    } else if (m && typeof m.value === 'number') {
      out.push({ move, kind: 'exact', value: m.value });
    } else if (m && (m.lower !== undefined || m.upper !== undefined)) {
      out.push({ move, kind: 'bounds', lower: m.lower, upper: m.upper });
    }
  }
  if (!out.length && result && result.visits && typeof result.visits === 'object') {
    for (const [move, n] of Object.entries(result.visits)) out.push({ move, kind: 'mcts', visits: n });
  }
  const key = (m) => (m.kind === 'mcts' ? m.visits : m.kind === 'exact' ? m.value : m.lower);
  out.sort((a, b) => (key(b) ?? -Infinity) - (key(a) ?? -Infinity) || a.kind.localeCompare(b.kind));
  // Best: the top exact score when no unfinished move could beat it; for MCTS the most visited.
  const exact = out.filter((m) => m.kind === 'exact').map((m) => m.value);
  const top = exact.length ? Math.max(...exact) : null;
  const open = out.filter((m) => m.kind === 'bounds').some((m) => m.upper === undefined || m.upper > top);
  for (const m of out) {
    if (m.kind === 'mcts') m.best = m.visits === out[0].visits;
    else m.best = m.kind === 'exact' && m.value === top && !open;
  }
  if (result && result.best_move && out.length && !out.some((m) => m.best)) {
    for (const m of out) m.best = m.move === result.best_move;
  }
  return out;
}

function signed(v) {
  if (typeof v !== 'number') return '?';
  const t = Number.isInteger(v) ? String(v) : v.toFixed(3);
  return v > 0 ? '+' + t : t;
}

// The short score written on the board and in the table.
function scoreText(m) {
  if (m.kind === 'exact') return signed(m.value);
  if (m.kind === 'bounds') return (m.lower ?? '?') + '..' + (m.upper ?? '?');
  return String(m.visits);
}

// 'win', 'draw' or 'loss' (CSS class and colour) for a score from the mover's view.
function outcomeClass(m) {
  const v = m.kind === 'bounds' ? (m.lower > 0 ? 1 : m.upper < 0 ? -1 : null) : m.value;
  if (typeof v !== 'number') return 'open';
  return v > 0 ? 'win' : v < 0 ? 'loss' : 'draw';
}

// What a score means, in words: the game's own words (GET /v1/score-words, the wording of
// `gamesolver analyse` too), fetched once per position and kept; until they come, win, draw
// or loss.
const wordsCache = new Map();
function wordsKey(game, params, position) {
  return game + '|' + JSON.stringify(params || {}) + '|' + (position || '');
}

function scoreMeaning(game, params, position, m) {
  if (m.kind === 'mcts') {
    return fmtNum(m.visits) + ' visits' + (typeof m.value === 'number' ? ', value ' + signed(m.value) : '');
  }
  if (m.kind === 'bounds') return 'not finished: between ' + fmtNum(m.lower) + ' and ' + fmtNum(m.upper);
  const known = wordsCache.get(wordsKey(game, params, position));
  if (known && known[String(m.value)]) return known[String(m.value)];
  return m.value === 0 ? 'draw' : m.value > 0 ? 'win' : 'loss';
}

// Fetches the game's words for the exact scores `values` of a position, then calls `done`.
async function fetchWords(game, params, position, values, done) {
  const key = wordsKey(game, params, position);
  const have = wordsCache.get(key) || {};
  const want = [...new Set(values.filter((v) => Number.isInteger(v) && !(String(v) in have)))].slice(0, 64);
  if (want.length) {
    try {
      const q = new URLSearchParams(params || {});
      q.set('game', game);
      q.set('position', position || '');
      q.set('values', want.join(','));
      const got = await apiJson('/v1/score-words?' + q.toString());
      const next = Object.assign({}, have);
      for (const v of want) next[String(v)] = (got.words || {})[String(v)] || '';
      wordsCache.set(key, next);
    } catch (_) {
      return; // the page keeps win / draw / loss
    }
  }
  done();
}

// The table of per-move scores (every score in text, best first, best moves starred).
function renderMoveTable(box, game, params, position, result) {
  box.innerHTML = '';
  const scores = moveScores(result);
  if (!scores.length) return scores;
  const table = document.createElement('table');
  table.className = 'moves';
  const mcts = scores[0].kind === 'mcts';
  table.innerHTML = '<thead><tr><th>move</th><th>' + (mcts ? 'visits' : 'score') +
    '</th><th>meaning</th></tr></thead><tbody></tbody>';
  const tbody = table.querySelector('tbody');
  for (const m of scores) {
    const tr = document.createElement('tr');
    tr.dataset.move = m.move;
    tr.className = outcomeClass(m) + (m.best ? ' best' : '');
    tr.appendChild(cell((m.best ? '★ ' : '') + m.move));
    const sc = cell(scoreText(m), 'num score');
    if (m.kind === 'exact') sc.dataset.value = m.value;
    tr.appendChild(sc);
    const meaning = cell(scoreMeaning(game, params, position, m) + (m.best ? ' (best)' : ''));
    meaning.className = 'meaning';
    tr.appendChild(meaning);
    tbody.appendChild(tr);
  }
  box.appendChild(table);
  const exact = scores.filter((m) => m.kind === 'exact');
  fetchWords(game, params, position, exact.map((m) => m.value), () => {
    for (const m of exact) {
      const td = table.querySelector('tr[data-move="' + CSS.escape(m.move) + '"] td.meaning');
      if (td) td.textContent = scoreMeaning(game, params, position, m) + (m.best ? ' (best)' : '');
    }
  });
  return scores;
}

// Board geometry from a picture: the first rect is the playing area (viz::board's contract).
function boardGeometry(svg) {
  const r = svg && svg.querySelector('rect');
  if (!r) return null;
  const cols = Number(svg.dataset.cols);
  const rows = Number(svg.dataset.rows);
  if (!(cols > 0 && rows > 0)) return null;
  const x = Number(r.getAttribute('x'));
  const y = Number(r.getAttribute('y'));
  const cw = Number(r.getAttribute('width')) / cols;
  const ch = Number(r.getAttribute('height')) / rows;
  return {
    cols, rows, x, y, cw, ch,
    centre: (c, row) => [x + (c + 0.5) * cw, y + (row + 0.5) * ch],
    cellAt: (px, py) => [Math.floor((px - x) / cw), Math.floor((py - y) / ch)],
  };
}

function columnIndex(params, move) {
  const base = Number(params.base ?? 1);
  const n = parseInt(move, 36);
  return Number.isNaN(n) ? -1 : n - base;
}

function columnMove(params, c) {
  return (c + Number(params.base ?? 1)).toString(36);
}

// The cell [col, row] of a move that names a cell (Othello, tic-tac-toe, m,n,k), else null.
function moveCell(game, g, move) {
  if (game === 'othello') {
    const m = /^([a-z])(\d+)$/i.exec(move);
    return m ? [m[1].toLowerCase().charCodeAt(0) - 97, Number(m[2]) - 1] : null;
  }
  if (game === 'tictactoe' || game === 'mnk') {
    const k = Number(move) - 1;
    return Number.isInteger(k) && k >= 0 ? [k % g.cols, Math.floor(k / g.cols)] : null;
  }
  return null;
}

// The move a click at picture point (px, py) names, or null.
function moveAt(game, params, svg, px, py) {
  const g = boardGeometry(svg);
  if (!g) return null;
  const [c, r] = g.cellAt(px, py);
  if (c < 0 || c >= g.cols) return null;
  if (game === 'connect4') return columnMove(params, c);
  if (r < 0 || r >= g.rows) return null;
  if (game === 'othello') return String.fromCharCode(97 + c) + (r + 1);
  return String(r * g.cols + c + 1);
}

function svgEl(name, attrs, text) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

// Numbers the stones of the principal variation `pv` on a picture of the position after it.
function numberPv(svg, game, params, pv) {
  const g = boardGeometry(svg);
  if (!g) return 0;
  const stones = [...svg.querySelectorAll('.gs-stone')];
  const at = new Map();
  for (const s of stones) {
    const cx = Number(s.getAttribute('cx'));
    const cy = Number(s.getAttribute('cy'));
    if (Number.isNaN(cx)) continue;
    at.set(g.cellAt(cx, cy).join(','), s);
  }
  let height = null;
  if (game === 'connect4') {
    // Heights before the PV: the stones in each column less the PV's moves into it.
    height = new Array(g.cols).fill(0);
    for (const key of at.keys()) height[Number(key.split(',')[0])] += 1;
    for (const mv of pv) height[columnIndex(params, mv)] -= 1;
  }
  let drawn = 0;
  pv.forEach((mv, i) => {
    let c;
    if (game === 'connect4') {
      const col = columnIndex(params, mv);
      if (!(col >= 0 && col < g.cols)) return;
      c = [col, g.rows - 1 - height[col]];
      height[col] += 1;
    } else {
      c = moveCell(game, g, mv);
    }
    if (!c) return;
    const stone = at.get(c.join(','));
    const [x, y] = g.centre(c[0], c[1]);
    // Dark text on light stones, light text on dark ones.
    const dark = game === 'othello' ? stone && stone.dataset.player === '0' : false;
    svg.appendChild(svgEl('text', {
      class: 'gs-pv', 'data-move': mv, 'data-ply': i + 1, x: x.toFixed(1), y: (y + 5).toFixed(1),
      'text-anchor': 'middle', 'font-size': Math.round(Math.min(g.cw, g.ch) * 0.38),
      'font-weight': '700', fill: dark ? '#ffffff' : '#111111',
    }, String(i + 1)));
    drawn += 1;
  });
  return drawn;
}

const SCORE_COLOUR = { win: '#0072B2', loss: '#D55E00', draw: '#555555', open: '#555555' };

// Writes each move's score on the picture: under its column (Connect Four) or on its square.
function drawScores(svg, game, params, scores) {
  const g = boardGeometry(svg);
  if (!g || !scores.length) return 0;
  let extra = 0;
  if (game === 'connect4') {
    extra = 44;
    const vb = svg.viewBox.baseVal;
    const y0 = vb.height;
    vb.height += extra;
    svg.setAttribute('height', vb.height);
    svg.insertBefore(svgEl('rect', { x: 0, y: y0, width: vb.width, height: extra, fill: '#ffffff' }), svg.firstChild.nextSibling);
    for (const m of scores) {
      const col = columnIndex(params, m.move);
      if (!(col >= 0 && col < g.cols)) continue;
      const [x] = g.centre(col, 0);
      if (m.best) {
        svg.appendChild(svgEl('rect', {
          class: 'gs-best', x: (x - g.cw / 2 + 2).toFixed(1), y: g.y, width: (g.cw - 4).toFixed(1),
          height: (y0 + extra - g.y - 2).toFixed(1), fill: 'none', stroke: '#0072B2',
          'stroke-width': 3, 'stroke-dasharray': '6 3', rx: 6,
        }));
      }
      svg.appendChild(svgEl('text', {
        class: 'gs-score ' + outcomeClass(m), 'data-move': m.move, x: x.toFixed(1), y: y0 + 18,
        'text-anchor': 'middle', 'font-size': 16, 'font-weight': m.best ? '700' : '400',
        fill: SCORE_COLOUR[outcomeClass(m)],
      }, scoreText(m)));
      if (m.best) {
        svg.appendChild(svgEl('text', { class: 'gs-star', x: x.toFixed(1), y: y0 + 36, 'text-anchor': 'middle', 'font-size': 14, fill: '#0072B2' }, '★ best'));
      }
    }
    return scores.length;
  }
  let n = 0;
  for (const m of scores) {
    const c = moveCell(game, g, m.move);
    if (!c) continue;
    const [x, y] = g.centre(c[0], c[1]);
    const w = g.cw * 0.8;
    svg.appendChild(svgEl('rect', {
      class: m.best ? 'gs-best' : 'gs-score-box', x: (x - w / 2).toFixed(1), y: (y - 11).toFixed(1),
      width: w.toFixed(1), height: 22, rx: 4, fill: '#ffffff',
      stroke: m.best ? '#0072B2' : '#777777', 'stroke-width': m.best ? 3 : 1,
    }));
    svg.appendChild(svgEl('text', {
      class: 'gs-score ' + outcomeClass(m), 'data-move': m.move, x: x.toFixed(1), y: (y + 5).toFixed(1),
      'text-anchor': 'middle', 'font-size': 14, 'font-weight': m.best ? '700' : '400',
      fill: SCORE_COLOUR[outcomeClass(m)],
    }, (m.best ? '★' : '') + scoreText(m)));
    n += 1;
  }
  return n;
}

// MCTS: one row per root move, a bar of its visits and a bar of its value (both also as text).
function renderMctsBars(box, scores) {
  box.innerHTML = '';
  const rows = scores.filter((m) => m.kind === 'mcts');
  if (!rows.length) return;
  const most = Math.max(1, ...rows.map((m) => m.visits));
  const hasValue = rows.some((m) => typeof m.value === 'number');
  const table = document.createElement('table');
  table.className = 'bars';
  table.innerHTML = '<thead><tr><th>move</th><th>visits</th>' + (hasValue ? '<th>value (−1 loss … +1 win)</th>' : '') +
    '</tr></thead><tbody></tbody>';
  for (const m of rows) {
    const tr = document.createElement('tr');
    tr.dataset.move = m.move;
    tr.appendChild(cell((m.best ? '★ ' : '') + m.move));
    const v = document.createElement('td');
    v.innerHTML = '<div class="bar"><span class="fill visits"></span><span class="label"></span></div>';
    v.querySelector('.fill').style.width = (100 * m.visits / most).toFixed(1) + '%';
    v.querySelector('.label').textContent = fmtNum(m.visits);
    tr.appendChild(v);
    if (hasValue) {
      const q = document.createElement('td');
      q.innerHTML = '<div class="bar diverging"><span class="fill"></span><span class="label"></span></div>';
      const f = q.querySelector('.fill');
      const val = typeof m.value === 'number' ? Math.max(-1, Math.min(1, m.value)) : 0;
      f.className = 'fill ' + (val >= 0 ? 'win' : 'loss');
      f.style.left = (val >= 0 ? 50 : 50 + 50 * val).toFixed(1) + '%';
      f.style.width = (50 * Math.abs(val)).toFixed(1) + '%';
      q.querySelector('.label').textContent = typeof m.value === 'number' ? signed(m.value) : '—';
      tr.appendChild(q);
    }
    table.querySelector('tbody').appendChild(tr);
  }
  const h = document.createElement('h3');
  h.textContent = 'Root moves (MCTS)';
  box.append(h, table);
}

// Fetches and annotates a board: the position after the PV, its stones numbered, the scores
// on it. Returns false when the game has no picture.
async function showAnswerBoard(box, note, game, params, position, result) {
  const scores = moveScores(result).filter((m) => m.kind !== 'mcts');
  // On squares, scores of the root's moves and the PV's stones would cover each other: with
  // scores, the PV is listed in text (Connect Four writes scores under the board, so both).
  const drawPv = CELL_GAMES.includes(game) && (game === 'connect4' || !scores.length);
  const pv = (result && Array.isArray(result.pv) && drawPv) ? result.pv : [];
  const q = new URLSearchParams(params);
  q.set('game', game);
  q.set('position', extendPosition(game, position, pv));
  let ok = await showSvg(box, '/v1/board.svg?' + q.toString(), note);
  if (!ok && pv.length) {
    q.set('position', position || '');
    ok = await showSvg(box, '/v1/board.svg?' + q.toString(), note);
  }
  const svg = box.querySelector('svg.gs-board');
  if (!ok || !svg) return false;
  const numbered = pv.length ? numberPv(svg, game, params, pv) : 0;
  drawScores(svg, game, params, scores);
  if (note && numbered) note.textContent = 'numbered: the principal variation, ' + numbered + (numbered === 1 ? ' move' : ' moves');
  return true;
}

// ---- job page ------------------------------------------------------------------------------
//
// Every figure is written for people: integers with thousands separators, other numbers to a
// few significant digits, times in ms/s/min, sizes in KiB/MiB/GiB, rates with SI prefixes.
// Objects and lists are drawn as small tables or lists, never as JSON text.

// A number for people: integers with thousands separators, others to `digits` significant digits.
function fmtNum(v, digits = 3) {
  if (typeof v !== 'number') return String(v);
  if (!Number.isFinite(v)) return v > 0 ? '∞' : v < 0 ? '−∞' : '—';
  if (Number.isInteger(v) && Math.abs(v) < 1e15) return v.toLocaleString('en-US');
  const a = Math.abs(v);
  if (a >= 1e15 || a < 1e-3) return v.toPrecision(digits);
  return Number(v.toPrecision(digits)).toLocaleString('en-US', { maximumFractionDigits: 12 });
}

// 1234567 -> "1.23 M" (SI prefixes, 3 significant digits).
function fmtSi(v, unit = '') {
  if (typeof v !== 'number' || !Number.isFinite(v)) return fmtNum(v);
  const a = Math.abs(v);
  for (const [p, f] of [['T', 1e12], ['G', 1e9], ['M', 1e6], ['k', 1e3]]) {
    if (a >= f) return Number((v / f).toPrecision(3)) + ' ' + p + unit;
  }
  return fmtNum(v) + (unit ? ' ' + unit : '');
}

function fmtBytes(n) {
  if (typeof n !== 'number') return fmtNum(n);
  for (const [p, f] of [['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]]) {
    if (Math.abs(n) >= f) return Number((n / f).toPrecision(3)) + ' ' + p;
  }
  return fmtNum(n) + ' B';
}

function fmtMs(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return fmtNum(ms);
  if (ms < 1000) return fmtNum(Math.round(ms)) + ' ms';
  if (ms < 60000) return Number((ms / 1000).toPrecision(3)) + ' s';
  const m = Math.floor(ms / 60000);
  if (m < 60) return m + ' min ' + Math.round((ms - m * 60000) / 1000) + ' s';
  return Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
}

// A scalar for people, by what its key says it is.
function fmtScalar(key, v) {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'string') return v.length > 160 ? v.slice(0, 160) + '… (' + fmtNum(v.length) + ' characters)' : v;
  if (typeof v !== 'number') return String(v);
  const k = String(key || '');
  if (/(^|_)ms$/.test(k)) return fmtMs(v);
  if (/bytes$/.test(k)) return fmtBytes(v);
  if (/per_s$|_rate$/.test(k) && !/win_rate/.test(k)) return fmtSi(v, '/s');
  if (k === 'win_rate' || k === 'value' && !Number.isInteger(v)) return fmtNum(v, 3);
  return fmtNum(v, 4);
}

// A bound pair [lower, upper] as text: "0" when closed, "−1 .. 1" while open.
function fmtBounds(b) {
  if (!Array.isArray(b)) return fmtScalar('', b);
  const [lo, hi] = b;
  if (lo !== null && lo !== undefined && lo === hi) return fmtNum(lo);
  return (lo === null || lo === undefined ? '?' : fmtNum(lo)) + ' .. ' + (hi === null || hi === undefined ? '?' : fmtNum(hi));
}

function isScalar(v) {
  return v === null || ['number', 'string', 'boolean', 'undefined'].includes(typeof v);
}

// A small table of rows (objects): the union of their keys as columns, the last `max` rows.
function objectRowsTable(rows, max = 12) {
  const table = document.createElement('table');
  table.className = 'sub';
  const cols = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!cols.includes(k)) cols.push(k);
  // What a row is about first (the round, the stone count, the move).
  const lead = ['round', 'stones', 'move', 'id', 'task'];
  cols.sort((a, b) => (lead.includes(b) ? 1 : 0) - (lead.includes(a) ? 1 : 0));
  const head = document.createElement('tr');
  for (const c of cols) {
    const th = document.createElement('th');
    th.textContent = c.replace(/_/g, ' ');
    head.appendChild(th);
  }
  const thead = document.createElement('thead');
  thead.appendChild(head);
  const tbody = document.createElement('tbody');
  const shown = rows.length > max ? rows.slice(rows.length - max) : rows;
  for (const r of shown) {
    const tr = document.createElement('tr');
    for (const c of cols) {
      const td = document.createElement('td');
      td.className = typeof r[c] === 'number' ? 'num' : '';
      td.appendChild(fmtNode(c, r[c]));
      tr.appendChild(td);
    }
    tbody.appendChild(tr);
  }
  table.append(thead, tbody);
  if (rows.length > max) {
    const wrap = document.createElement('div');
    const note = document.createElement('p');
    note.className = 'note';
    note.textContent = 'the last ' + max + ' of ' + fmtNum(rows.length);
    wrap.append(table, note);
    return wrap;
  }
  return table;
}

// A value of any shape as a DOM node: scalars as text, lists joined, objects as small tables.
function fmtNode(key, v, depth = 0) {
  const text = (t) => document.createTextNode(t);
  if (isScalar(v)) return text(fmtScalar(key, v));
  if (key === 'bounds') {
    if (Array.isArray(v)) return text(fmtBounds(v));
    // Per move (analyse=all): move -> [lower, upper].
    const parts = Object.entries(v).map(([m, b]) => m + ': ' + fmtBounds(b));
    return text(parts.join(' · ') || 'none yet');
  }
  if (key === 'checkpoint') {
    return text('saved' + (v && typeof v.iteration === 'number' ? ' at iteration ' + fmtNum(v.iteration) : '') +
      (v && v.best && typeof v.best.score === 'number' ? ', best ' + fmtNum(v.best.score) : ''));
  }
  if (key === 'visits' && !Array.isArray(v)) {
    const rows = Object.entries(v).filter(([, n]) => typeof n === 'number').sort((a, b) => b[1] - a[1]);
    const total = rows.reduce((t, [, n]) => t + n, 0);
    const top = rows.slice(0, 6).map(([m, n]) => m + ' ' + fmtNum(n));
    return text(fmtNum(total) + ' over ' + rows.length + ' moves (' + top.join(', ') +
      (rows.length > 6 ? ', …' : '') + ')');
  }
  if (Array.isArray(v)) {
    if (!v.length) return text('none');
    if (v.every(isScalar)) {
      const items = v.slice(0, 40).map((x) => fmtScalar(key, x));
      return text(items.join(key === 'pv' || key === 'sequence' ? ' ' : ', ') +
        (v.length > 40 ? ' … (' + fmtNum(v.length) + ' in all)' : ''));
    }
    if (v.every((x) => x && typeof x === 'object' && !Array.isArray(x)) && depth < 2) {
      return objectRowsTable(v);
    }
    if (v.every((x) => Array.isArray(x) && x.every(isScalar))) {
      const items = v.slice(-12).map((x) => '(' + x.map((y) => fmtScalar('', y)).join(', ') + ')');
      return text((v.length > 12 ? '… ' : '') + items.join(' ') + (v.length > 12 ? ' (' + fmtNum(v.length) + ' in all)' : ''));
    }
    return text(fmtNum(v.length) + ' items');
  }
  if (depth >= 2) return text(Object.keys(v).length + ' fields');
  const entries = Object.entries(v);
  if (!entries.length) return text('none');
  if (entries.every(([, x]) => isScalar(x)) && entries.length <= 8) {
    return text(entries.map(([k, x]) => k.replace(/_/g, ' ') + ' ' + fmtScalar(k, x)).join(', '));
  }
  const table = document.createElement('table');
  table.className = 'kv sub';
  for (const [k, x] of entries.slice(0, 40)) {
    const tr = document.createElement('tr');
    const th = document.createElement('th');
    th.textContent = k.replace(/_/g, ' ');
    const td = document.createElement('td');
    td.appendChild(fmtNode(k, x, depth + 1));
    tr.append(th, td);
    table.appendChild(tr);
  }
  return table;
}

// The text of a value (tests and short places).
function fmtValue(v, key) {
  return fmtNode(key || '', v).textContent;
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
  // While it runs, a figure missing from the latest report keeps its last value (a worker's
  // heartbeat carries the kernel's own report only when it made one since the last beat).
  let figures = flatProgress(s.progress);
  if (Object.keys(figures).length) {
    if (s.state === 'running') figures = Object.assign({}, lastFigures, figures);
    lastFigures = figures;
  } else {
    figures = lastFigures;
  }
  const tbody = $('job-progress').querySelector('tbody');
  tbody.innerHTML = '';
  for (const [k, v] of Object.entries(figures)) {
    // The best line is drawn on the board; a checkpoint is for resuming, not for reading.
    if (k === 'best_sequence') continue;
    // Figures of a finished stage (null, an empty list) say nothing.
    if (v === null || v === undefined || (Array.isArray(v) && !v.length)) continue;
    const tr = document.createElement('tr');
    tr.dataset.key = k;
    const th = document.createElement('th');
    th.textContent = k.replace(/_per_s$/, '/s').replace(/_ms$/, '').replace(/_/g, ' ');
    const td = document.createElement('td');
    td.className = typeof v === 'number' ? 'num' : '';
    td.appendChild(fmtNode(k, v));
    tr.append(th, td);
    tbody.appendChild(tr);
  }
  if (!Object.keys(figures).length) emptyRow(tbody, s.state === 'queued' ? 'waiting for a worker' : 'no figures reported', 2);
  const t = s.tasks || {};
  // Every task once, by its real state: an obsolete probe is cancelled, not done.
  $('job-tasks').textContent = fmtNum(t.total || 0) + ' tasks: ' +
    ['queued', 'running', 'done', 'cancelled', 'failed'].map((k) => fmtNum(t[k] || 0) + ' ' + k).join(', ');
  $('job-result').textContent = s.result ? JSON.stringify(s.result, null, 2) : '(none yet)';
  renderAnswer(s);
  renderScores(s);
  refreshTasks(s);
  setError($('job-error'), s.error || '');
  $('job-cancel').hidden = ['done', 'failed', 'cancelled'].includes(s.state);
}

// A player's share of a vector value (multi-player games): "player 1 0.5, player 2 0.25".
function fmtVector(v) {
  return v.map((x, i) => 'player ' + (i + 1) + ' ' + fmtScalar('value', x)).join(', ');
}

// The job's answer in words: value, best move, principal variation, bounds, why it stopped;
// a retrograde build's databases and a lookup box.
function renderAnswer(s) {
  const box = $('job-answer');
  box.innerHTML = '';
  const r = s.result;
  const spec = s.job || {};
  if (!r) {
    emptyRow(box, s.state === 'failed' ? 'no answer: the job failed' :
      s.state === 'cancelled' ? 'no answer: the job was cancelled' : 'no answer yet', 2);
    renderDatabases(null, spec);
    return;
  }
  const value = r.value === null || r.value === undefined ? null
    : Array.isArray(r.value) ? fmtVector(r.value)
      : typeof r.value === 'number' ? (Number.isInteger(r.value) ? String(r.value) : fmtScalar('value', r.value))
        : r.value;
  const seq = Array.isArray(r.sequence) ? r.sequence : typeof r.sequence === 'string' && r.sequence ? r.sequence.split(/\n/) : null;
  const dbs = Array.isArray(r.databases) ? r.databases : null;
  const work = [];
  // Playouts or rollouts are the node count of MCTS and NRPA: said once.
  const counted = ['playouts', 'rollouts', 'iterations'].filter((k) => typeof r[k] === 'number');
  if (typeof r.nodes === 'number' && !counted.some((k) => r[k] === r.nodes)) {
    work.push(fmtNum(r.nodes) + (dbs ? ' entries written' : ' nodes'));
  }
  for (const k of counted) work.push(fmtNum(r[k]) + ' ' + k);
  if (typeof r.elapsed_ms === 'number') work.push('in ' + fmtMs(r.elapsed_ms));
  const rows = [
    ['value', value],
    ['meaning', typeof r.value === 'number' && Number.isInteger(r.value) && CELL_GAMES.includes(spec.game)
      ? scoreMeaning(spec.game, spec.game_params || {}, spec.position || '', { kind: 'exact', value: r.value }) : null],
    ['best move', r.best_move],
    ['principal variation', Array.isArray(r.pv) && r.pv.length ? r.pv.map((m, i) => (i + 1) + '. ' + m).join('  ') : null],
    ['bounds', Array.isArray(r.bounds) ? fmtBounds(r.bounds) : null],
    ['outcome', r.outcome],
    ['win rate', typeof r.win_rate === 'number' ? fmtNum(r.win_rate, 3) : null],
    ['best sequence', seq ? fmtNum(seq.length) + ' moves: ' + seq.slice(0, 12).join(' ') + (seq.length > 12 ? ' …' : '') : null],
    ['set name', dbs ? r.name : null],
    ['databases', dbs ? (dbs.length ? '0 to ' + (dbs.length - 1) + ' stones, ' +
      fmtNum(dbs.reduce((t, d) => t + (d.positions || 0), 0)) + ' positions, ' +
      fmtBytes(dbs.reduce((t, d) => t + (d.bytes || 0), 0)) : 'none') : null],
    ['work', work.length ? work.join(' ') : null],
    ['stopped by', r.stopped],
  ];
  for (const [k, v] of rows) {
    if (v === null || v === undefined || v === '') continue;
    const tr = document.createElement('tr');
    tr.dataset.key = k;
    const th = document.createElement('th');
    th.textContent = k;
    tr.append(th, cell(typeof v === 'string' ? v : fmtValue(v, k), 'num'));
    box.appendChild(tr);
  }
  if (!box.children.length) emptyRow(box, 'the job ended without a value', 2);
  const row = box.querySelector('tr[data-key="meaning"]');
  if (row) {
    const m = { kind: 'exact', value: r.value };
    fetchWords(spec.game, spec.game_params || {}, spec.position || '', [r.value], () => {
      row.cells[1].textContent = scoreMeaning(spec.game, spec.game_params || {}, spec.position || '', m);
    });
  }
  renderDatabases(dbs, spec, r.name);
}

// ---- retrograde builds: the databases, an Awari board, a lookup box -----------------------

let lookupFor = '';
function renderDatabases(dbs, spec, name) {
  const box = $('job-databases');
  if (!dbs) {
    box.hidden = true;
    lookupFor = '';
    return;
  }
  box.hidden = false;
  const tbody = $('job-db-table').querySelector('tbody');
  tbody.innerHTML = '';
  for (const d of dbs) {
    const tr = document.createElement('tr');
    tr.dataset.stones = d.stones;
    tr.appendChild(cell(String(d.stones), 'num'));
    tr.appendChild(cell(fmtNum(d.positions), 'num'));
    // Won, drawn and lost for the side to move (their share of the positions on hover).
    for (const k of ['won', 'drawn', 'lost']) {
      const n = d[k];
      const c = cell(typeof n === 'number' ? fmtNum(n) : '—', 'num');
      if (typeof n === 'number' && d.positions) c.title = fmtNum(100 * n / d.positions, 3) + '% of the positions ' + k;
      tr.appendChild(c);
    }
    tr.appendChild(cell(d.rounds === null || d.rounds === undefined ? '—' : fmtNum(d.rounds), 'num'));
    tr.appendChild(cell(fmtBytes(d.bytes), 'num'));
    const sum = cell(typeof d.sha256 === 'string' ? d.sha256.slice(0, 16) + '…' : '—', 'mono');
    sum.title = d.sha256 || '';
    tr.appendChild(sum);
    tbody.appendChild(tr);
  }
  if (!dbs.length) emptyRow(tbody, 'no databases', 8);
  const key = String(name) + '/' + dbs.length;
  if (lookupFor === key) return;
  lookupFor = key;
  const pits = Number((spec.game_params || {}).pits || 6);
  $('lookup-position').value = sampleBoard(pits, Math.max(0, dbs.length - 1));
  $('lookup-form').dataset.name = name || '';
  $('lookup-form').dataset.pits = pits;
  lookup();
}

// A board of `stones` stones on `pits` pits a side, spread from the side to move's first pit.
function sampleBoard(pits, stones) {
  const b = new Array(2 * pits).fill(0);
  for (let i = 0; i < stones; i++) b[(i * 5) % (2 * pits)] += 1;
  return b.join(',');
}

async function lookup(ev) {
  if (ev) ev.preventDefault();
  const form = $('lookup-form');
  const name = form.dataset.name;
  const position = $('lookup-position').value.trim();
  const out = $('lookup-answer');
  setError($('lookup-error'), '');
  out.textContent = '';
  renderLine(null);
  if (!name) {
    setError($('lookup-error'), 'this build has no set name to look up');
    return;
  }
  try {
    const q = new URLSearchParams({ position });
    const a = await apiJson('/v1/tables/' + encodeURIComponent(name) + '/lookup?' + q.toString());
    const best = a.best && a.best.length ? 'best ' + a.best.join(', ') : 'the game is over';
    out.textContent = 'score ' + signed(a.score) + ' for the side to move (' + a.stones +
      ' stones: the stones it captures from here on minus the opponent\'s); ' + best;
    out.dataset.score = a.score;
    renderLine(a.line);
    const b = new URLSearchParams({ game: 'awari', pits: form.dataset.pits, position });
    await showSvg($('job-board'), '/v1/board.svg?' + b.toString(), $('job-board-note'));
    const svg = $('job-board').querySelector('svg.gs-board');
    if (svg) {
      for (const mv of a.best || []) {
        const pit = svg.querySelector('[data-pit="' + mv + '"]');
        if (pit) pit.classList.add('gs-best-pit');
      }
      $('job-board-note').textContent = 'looked up: ' + position + (a.best && a.best.length ? ' (best pits outlined)' : '');
    }
  } catch (e) {
    setError($('lookup-error'), e.message);
  }
}

// One position of the line drawn on the board, the move played from it outlined.
async function drawLinePosition(m, n) {
  const q = new URLSearchParams({ game: 'awari', pits: $('lookup-form').dataset.pits, position: m.position });
  await showSvg($('job-board'), '/v1/board.svg?' + q.toString(), $('job-board-note'));
  const svg = $('job-board').querySelector('svg.gs-board');
  const pit = svg && svg.querySelector('[data-pit="' + m.move + '"]');
  if (pit) pit.classList.add('gs-best-pit');
  $('job-board-note').textContent = 'move ' + n + ' of the line: ' + m.move + ' from ' + m.position;
}

// The principal line of a lookup: each move with the position it is played in, its value for
// the mover and the stones it captures; then how the line ends and the last value.
function renderLine(line) {
  const list = $('lookup-line');
  const end = $('lookup-line-end');
  list.innerHTML = '';
  list.hidden = !line;
  end.hidden = !line;
  if (!line) return;
  const moves = line.moves || [];
  moves.forEach((m, i) => {
    const li = document.createElement('li');
    li.dataset.move = m.move;
    li.dataset.value = m.value;
    li.dataset.captures = m.captures;
    li.dataset.position = m.position;
    // Who plays: the side to move at the lookup's board, or the other one.
    const who = i % 2 === 0 ? 'side to move' : 'opponent';
    li.textContent = who + ' plays ' + m.move + ' from ' + m.position + ' (worth ' + signed(m.value) + ')' +
      (m.captures ? ', captures ' + m.captures : '');
    li.title = 'draw this position';
    li.addEventListener('click', () => drawLinePosition(m, i + 1));
    list.appendChild(li);
  });
  const ends = { 'game over': 'the game is over', repetition: 'the position repeats: the stones left count for nobody', 'ply limit': 'the line stops here (longer lines are not shown)' };
  const captured = moves.reduce((t, m, i) => t + (i % 2 === 0 ? m.captures : -m.captures), 0);
  const sign = moves.length % 2 === 0 ? 1 : -1;
  end.dataset.end = line.end;
  end.textContent = (moves.length ? moves.length + ' moves, then ' : '') + (ends[line.end] || line.end) + ' at ' + line.position +
    ', worth ' + signed(line.value) + ' to the side to move there; captured along the line: ' + signed(captured) +
    ' for the side to move at the start, in all ' + signed(captured + sign * line.value);
}

// ---- tasks ---------------------------------------------------------------------------------

let tasksAt = 0;
let tasksTimer = null;
let tasksJob = null;
let tasksStatus = null;
// At most one fetch per POLL_MS while statuses stream in (a timer set for the rest of the
// interval is kept, not pushed back by every status), and one at the end.
function refreshTasks(latest) {
  tasksStatus = latest;
  const ended = ['done', 'failed', 'cancelled'].includes(latest.state);
  const run = async () => {
    const s = tasksStatus;
    tasksAt = Date.now();
    tasksTimer = null;
    try {
      const page = await apiJson('/v1/jobs/' + s.id + '/tasks?limit=200');
      if (String(s.id) !== $('job-id').textContent) return;
      // More than a page: the tasks in flight and the latest finished ones (the status's list).
      const many = page.next_after !== null && page.next_after !== undefined;
      renderTasks(many ? (s.task_list || []) : (page.tasks || []), s.task_list || [], many);
    } catch (_) { /* the status still shows the counts */ }
  };
  if (tasksJob !== latest.id) {
    tasksJob = latest.id;
    tasksAt = 0;
  }
  const wait = POLL_MS - (Date.now() - tasksAt);
  if (ended || wait <= 0) {
    clearTimeout(tasksTimer);
    run();
  } else if (!tasksTimer) {
    tasksTimer = setTimeout(run, wait);
  }
}

function renderTasks(tasks, live, more) {
  const tbody = $('job-task-table').querySelector('tbody');
  tbody.innerHTML = '';
  const running = new Map(live.filter((t) => t.progress).map((t) => [t.id, t.progress]));
  for (const t of tasks) {
    const tr = document.createElement('tr');
    tr.dataset.task = t.id;
    tr.appendChild(cell(String(t.id), 'num'));
    tr.appendChild(cell(t.what));
    const st = document.createElement('td');
    st.appendChild(stateBadge(t.state));
    tr.appendChild(st);
    const w = cell((t.workers || []).map((id) => id.length > 14 ? id.slice(0, 12) + '…' : id).join(', ') || '—');
    w.title = (t.workers || []).join(', ');
    tr.appendChild(w);
    tr.appendChild(cell(fmtNum(t.attempts), 'num'));
    // Run time: of the latest lease, to its end, or so far while the task runs.
    const p = running.get(t.id);
    const ran = typeof t.run_ms === 'number' ? t.run_ms : null;
    const time = t.state === 'running'
      ? (p && typeof p.elapsed_ms === 'number' ? p.elapsed_ms : ran)
      : t.state === 'queued' ? null : ran;
    const tc = cell(time === null ? '—' : fmtMs(time) + (t.state === 'running' ? ' so far' : ''), 'num');
    tc.dataset.ms = time === null ? '' : time;
    tr.appendChild(tc);
    const err = cell(t.last_error || '');
    err.className = t.last_error ? 'error-text' : '';
    tr.appendChild(err);
    tbody.appendChild(tr);
  }
  if (!tasks.length) emptyRow(tbody, 'no tasks yet', 7);
  $('job-tasks-more').hidden = !more;
}

// The board: while running the job's position (or best sequence); once there is a result, a
// game with cells shows the principal variation numbered and the moves' scores.
let boardShows = '';
let boardAt = 0;
async function refreshBoard(id, s) {
  const spec = s.job || {};
  // A retrograde build has no position: its board is the lookup box's.
  if (spec.algorithm === 'retrograde') {
    if (!s.result && boardShows !== 'build') {
      boardShows = 'build';
      $('job-board').innerHTML = '';
      $('job-board-note').textContent = 'a board can be looked up once the databases are built';
    }
    return;
  }
  const withResult = Boolean(s.result) && CELL_GAMES.includes(spec.game);
  const want = s.result ? 'result' : 'position';
  // A running single-player job's picture is its best line so far: redrawn as it improves.
  const live = !s.result && s.state === 'running' && Date.now() - boardAt >= POLL_MS &&
    Boolean(flatProgress(s.progress).best_sequence || flatProgress(s.progress).sequence);
  if (boardShows === want && !live) return;
  boardShows = want;
  boardAt = Date.now();
  if (withResult) {
    await showAnswerBoard($('job-board'), $('job-board-note'), spec.game, spec.game_params || {},
      spec.position || '', s.result);
  } else {
    await showSvg($('job-board'), '/v1/jobs/' + id + '/board.svg', $('job-board-note'));
    if (live && $('job-board').innerHTML) $('job-board-note').textContent = 'the best line so far';
  }
}

function renderScores(s) {
  const spec = s.job || {};
  const live = flatProgress(s.progress);
  let source = s.result;
  if (!source && live.visits) source = { visits: live.visits };
  if (!source && live.bounds && typeof live.bounds === 'object' && !Array.isArray(live.bounds)) {
    // A running analysis: each move's bounds so far ([lower, upper], null before any proof).
    const moves = {};
    for (const [mv, b] of Object.entries(live.bounds)) {
      if (Array.isArray(b)) moves[mv] = b[0] === b[1] ? { value: b[0] } : { lower: b[0], upper: b[1] };
    }
    source = { moves };
  }
  const scores = renderMoveTable($('job-moves'), spec.game, spec.game_params || {}, spec.position || '',
    source && source.moves ? source : null);
  $('job-moves-h').hidden = !scores.length;
  renderMctsBars($('job-mcts'), moveScores(source));
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
      refreshBoard(id, status);
      if (event === 'end') {
        await Promise.all([refreshPlot(id, true), refreshBoard(id, status)]);
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
  boardShows = '';
  boardAt = 0;
  tasksJob = null;
  clearTimeout(tasksTimer);
  tasksTimer = null;
  lookupFor = '';
  $('job-task-table').querySelector('tbody').innerHTML = '';
  let first;
  try {
    first = await apiJson('/v1/jobs/' + id);
    renderJob(first);
    globalError(null);
  } catch (e) {
    globalError(e);
    return;
  }
  await Promise.all([refreshPlot(id, true), refreshBoard(id, first)]);
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

// ---- analysis board ------------------------------------------------------------------------
//
// #/analyse?game=G&params=P&position=S: a start position, the line played from it by clicking
// the board, and a cursor along the line. Each position shown is analysed by an exact
// alpha-beta job with analyse=all (answers are kept per position, so stepping back and forth
// asks again only for positions not seen yet). A click on the board tries the move; the
// game itself says when it is illegal.

const AB_GAMES = ['connect4', 'othello', 'tictactoe', 'mnk'];
const AB_POLL_MS = 300;
const ab = { game: 'connect4', params: {}, start: '', line: [], cursor: 0, answers: new Map(), shown: '' };

function abPosition(upTo) {
  return extendPosition(ab.game, ab.start, ab.line.slice(0, upTo ?? ab.cursor));
}

function abKey(position) {
  return ab.game + '|' + JSON.stringify(ab.params) + '|' + position;
}

function abSetState(state, text) {
  document.body.dataset.abState = state;
  $('ab-status').textContent = text;
}

// Keeps the page's address in step with what it shows (a link reopens the same line).
function abRemember() {
  const q = new URLSearchParams({ game: ab.game, position: abPosition() });
  const params = Object.entries(ab.params).map(([k, v]) => k + '=' + v).join(',');
  if (params) q.set('params', params);
  history.replaceState(null, '', '#/analyse?' + q.toString());
}

function abRenderLine() {
  const box = $('ab-line');
  box.innerHTML = '';
  const start = document.createElement('button');
  start.type = 'button';
  start.textContent = ab.start ? 'start: ' + ab.start : 'start';
  start.className = ab.cursor === 0 ? 'current' : '';
  start.addEventListener('click', () => abGo(0));
  box.appendChild(start);
  ab.line.forEach((mv, i) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = (i + 1) + '. ' + mv;
    b.dataset.ply = i + 1;
    b.className = ab.cursor === i + 1 ? 'current' : '';
    b.addEventListener('click', () => abGo(i + 1));
    box.appendChild(b);
  });
  $('ab-back').disabled = ab.cursor === 0;
  $('ab-first').disabled = ab.cursor === 0;
  $('ab-forward').disabled = ab.cursor >= ab.line.length;
  $('ab-last').disabled = ab.cursor >= ab.line.length;
}

async function abGo(cursor) {
  ab.cursor = Math.max(0, Math.min(ab.line.length, cursor));
  abRemember();
  abRenderLine();
  await abShow();
}

// Draws the current position, then its analysis (from the cache or a new job).
async function abShow() {
  const position = abPosition();
  ab.shown = position;
  setError($('ab-error'), '');
  $('ab-moves').innerHTML = '';
  const q = new URLSearchParams(ab.params);
  q.set('game', ab.game);
  q.set('position', position);
  if (!(await showSvg($('ab-board'), '/v1/board.svg?' + q.toString(), $('ab-board-note')))) {
    abSetState('error', 'cannot show this position');
    return;
  }
  let answer = ab.answers.get(abKey(position));
  if (!answer) {
    abSetState('analysing', 'analysing…');
    try {
      answer = await abAnalyse(position);
    } catch (e) {
      if (ab.shown === position) {
        setError($('ab-error'), e.message);
        abSetState('error', 'the analysis failed');
      }
      return;
    }
    ab.answers.set(abKey(position), answer);
  }
  if (ab.shown !== position) return; // the user moved on meanwhile
  abDrawAnswer(position, answer);
}

// Submits analyse=all for `position` and waits for its result.
async function abAnalyse(position) {
  const made = await apiJson('/v1/jobs', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      game: ab.game, game_params: ab.params, position, algorithm: 'alphabeta',
      options: { analyse: 'all' }, limits: {},
    }),
  });
  if (ab.shown === position) {
    $('ab-status').textContent = 'analysing… (job ' + made.id + ')';
    $('ab-job').href = '#/jobs/' + made.id;
    $('ab-job').textContent = 'job ' + made.id;
  }
  for (;;) {
    const s = await apiJson('/v1/jobs/' + made.id);
    if (s.state === 'done') return { job: made.id, result: s.result };
    if (s.state === 'failed' || s.state === 'cancelled') {
      throw new Error('job ' + made.id + ' ' + s.state + (s.error ? ': ' + s.error : ''));
    }
    await new Promise((ok) => setTimeout(ok, AB_POLL_MS));
  }
}

function abDrawAnswer(position, answer) {
  const svg = $('ab-board').querySelector('svg.gs-board');
  const scores = renderMoveTable($('ab-moves'), ab.game, ab.params, position, answer.result);
  if (svg) drawScores(svg, ab.game, ab.params, scores);
  $('ab-job').href = '#/jobs/' + answer.job;
  $('ab-job').textContent = 'job ' + answer.job;
  const r = answer.result || {};
  abSetState('done', scores.length
    ? 'value ' + signed(r.value) + ' for the side to move; best ' + scores.filter((m) => m.best).map((m) => m.move).join(', ')
    : 'game over (value ' + signed(r.value) + ')');
  document.body.dataset.abPosition = position;
}

// A click on the board: the move under the pointer, played if the game accepts it.
async function abClick(ev) {
  const svg = $('ab-board').querySelector('svg.gs-board');
  if (!svg || !svg.contains(ev.target)) return;
  const m = svg.getScreenCTM();
  if (!m) return;
  const p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(m.inverse());
  const mv = moveAt(ab.game, ab.params, svg, p.x, p.y);
  if (mv === null) return;
  await abPlay(mv);
}

async function abPlay(mv) {
  const next = ab.line.slice(0, ab.cursor).concat([mv]);
  const position = extendPosition(ab.game, ab.start, next);
  // The game's own check: the picture of an illegal position is refused with the reason.
  const q = new URLSearchParams(ab.params);
  q.set('game', ab.game);
  q.set('position', position);
  try {
    await api('/v1/board.svg?' + q.toString());
  } catch (e) {
    setError($('ab-error'), 'move ' + mv + ': ' + e.message);
    return;
  }
  // Playing the move that comes next on the line keeps the rest of the line.
  if (ab.line[ab.cursor] !== mv) ab.line = next;
  await abGo(ab.cursor + 1);
}

async function showAnalyse(query) {
  $('analyse-view').hidden = false;
  const q = new URLSearchParams(query || '');
  const game = q.get('game') || $('ab-game').value || 'connect4';
  let params;
  try {
    params = parseSettings(q.get('params') ?? $('ab-params').value, 'game parameters');
  } catch (e) {
    setError($('ab-error'), e.message);
    return;
  }
  const position = q.get('position') ?? $('ab-position').value;
  const same = game === ab.game && JSON.stringify(params) === JSON.stringify(ab.params) &&
    position === abPosition();
  if (!same) {
    Object.assign(ab, { game, params, start: position, line: [], cursor: 0 });
  }
  $('ab-game').value = ab.game;
  $('ab-params').value = Object.entries(ab.params).map(([k, v]) => k + '=' + v).join(', ');
  $('ab-position').value = ab.start;
  await abGo(ab.cursor);
}

// The form: a new game, parameters or start position starts a new line.
function abRestart(ev) {
  if (ev) ev.preventDefault();
  let params;
  try {
    params = parseSettings($('ab-params').value, 'game parameters');
  } catch (e) {
    setError($('ab-error'), e.message);
    return;
  }
  Object.assign(ab, { game: $('ab-game').value, params, start: $('ab-position').value.trim(), line: [], cursor: 0 });
  abGo(0);
}

// ---- routing -------------------------------------------------------------------------------

function route() {
  clearInterval(pollTimer);
  pollTimer = null;
  if (streamAbort) streamAbort.abort();
  streamAbort = null;
  $('home-view').hidden = true;
  $('job-view').hidden = true;
  $('analyse-view').hidden = true;
  globalError(null);
  const m = location.hash.match(/^#\/jobs\/(\d+)$/);
  const a = location.hash.match(/^#\/analyse(?:\?(.*))?$/);
  if (m) {
    document.body.dataset.view = 'job';
    showJob(m[1]);
  } else if (a) {
    document.body.dataset.view = 'analyse';
    showAnalyse(a[1]);
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
$('lookup-form').addEventListener('submit', lookup);
$('ab-form').addEventListener('submit', abRestart);
$('ab-game').addEventListener('change', () => {
  $('ab-params').value = '';
  $('ab-position').value = '';
  abRestart();
});
$('ab-board').addEventListener('click', abClick);
$('ab-first').addEventListener('click', () => abGo(0));
$('ab-back').addEventListener('click', () => abGo(ab.cursor - 1));
$('ab-forward').addEventListener('click', () => abGo(ab.cursor + 1));
$('ab-last').addEventListener('click', () => abGo(ab.line.length));
for (const g of AB_GAMES) {
  const o = document.createElement('option');
  o.value = o.textContent = g;
  $('ab-game').appendChild(o);
}
if (token()) showTokenForm('');
route();
