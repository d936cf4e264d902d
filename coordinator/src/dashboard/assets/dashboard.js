// Deep Perft dashboard: fills the page from the JSON API (/api/...) and
// polls it once a second. Counts arrive as decimal strings (they are u128);
// they are shown grouped, never turned into lossy JavaScript numbers.
'use strict';

const POLL_MS = 1000;

function el(id) { return document.getElementById(id); }

// A new element with text content (never HTML: every value is data).
function cell(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function row(cells) {
  const tr = document.createElement('tr');
  for (const c of cells) tr.appendChild(c);
  return tr;
}

// "1234567" -> "1,234,567", exact for any length.
function grouped(digits) {
  if (digits === null || digits === undefined) return '';
  const s = String(digits);
  if (!/^\d+$/.test(s)) return s;
  return s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function rate(perSecond) {
  if (!isFinite(perSecond) || perSecond <= 0) return '-';
  const units = [['T', 1e12], ['G', 1e9], ['M', 1e6], ['k', 1e3]];
  for (const [name, size] of units) {
    if (perSecond >= size) return (perSecond / size).toFixed(2) + ' ' + name + '/s';
  }
  return perSecond.toFixed(0) + ' /s';
}

function duration(seconds) {
  if (seconds === null || seconds === undefined || !isFinite(seconds)) return '-';
  let s = Math.round(seconds);
  const d = Math.floor(s / 86400); s -= d * 86400;
  const h = Math.floor(s / 3600); s -= h * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  if (d > 0) return d + 'd ' + h + 'h ' + m + 'm';
  if (h > 0) return h + 'h ' + m + 'm ' + s + 's';
  if (m > 0) return m + 'm ' + s + 's';
  return s + 's';
}

function percent(fraction) {
  return (Math.max(0, Math.min(1, fraction)) * 100).toFixed(1) + '%';
}

// A moment as "YYYY-MM-DD HH:MM:SS" in the browser's time zone; "unknown"
// for a job from a journal that did not record it.
function when(unixMs) {
  if (unixMs === null || unixMs === undefined) return 'unknown';
  const t = new Date(unixMs);
  const two = (n) => String(n).padStart(2, '0');
  return t.getFullYear() + '-' + two(t.getMonth() + 1) + '-' + two(t.getDate()) + ' ' +
    two(t.getHours()) + ':' + two(t.getMinutes()) + ':' + two(t.getSeconds());
}

// A published count, or the words saying there is none.
function published(count) {
  return count === null || count === undefined ? 'not published' : grouped(count);
}

function eta(job) {
  if (job.state === 'done') return 'done';
  if (job.state !== 'running' && job.state !== 'queued') return '-';
  return duration(job.eta_seconds);
}

// Sets a progress bar: the fill's width, and its label twice, dark over
// the track and light on the fill (the fill clips its copy), so the label
// reads wherever the fill ends.
function setProgress(bar, track, onFill, fraction, label) {
  const text = label === undefined ? percent(fraction) : label;
  bar.style.width = percent(fraction);
  track.textContent = text;
  onFill.textContent = text;
}

// A table cell holding a progress bar labelled `label` (the percentage by
// default).
function progressCell(fraction, label) {
  const td = cell('td', null, 'wide');
  const box = cell('div', null, 'progress small');
  const track = cell('span', null, 'percent');
  const bar = cell('div', null, 'bar');
  const onFill = cell('span', null, 'percent on-fill');
  bar.appendChild(onFill);
  box.appendChild(track);
  box.appendChild(bar);
  setProgress(bar, track, onFill, fraction, label);
  td.appendChild(box);
  return td;
}

function fill(tbody, rows) {
  tbody.replaceChildren(...rows);
}

function setStatus(ok, text) {
  const s = el('status');
  s.textContent = text;
  s.className = 'status ' + (ok ? 'ok' : 'bad');
}

// Fetches JSON from the API; a refusal's one-line text becomes the error.
async function api(path) {
  const response = await fetch(path, { credentials: 'same-origin', cache: 'no-store' });
  if (!response.ok) throw new Error((await response.text()).trim() || response.statusText);
  return response.json();
}

function stateBadge(state) {
  return cell('span', state, 'state ' + state);
}

// Every job, page by page (the API hands out at most 1000 at a time).
async function allJobs() {
  let jobs = [];
  let start = 0;
  for (;;) {
    const page = await api('/api/jobs?limit=1000&start=' + start);
    jobs = jobs.concat(page.jobs);
    if (page.next === null || page.next === undefined) {
      return jobs;
    }
    start = page.next;
  }
}

async function jobsPage() {
  const jobs = await allJobs();
  const rows = jobs.reverse().map((job) => {
    const link = cell('a', job.id);
    link.href = '/jobs/' + encodeURIComponent(job.id);
    const idCell = cell('td');
    idCell.appendChild(link);
    const stateCell = cell('td');
    stateCell.appendChild(stateBadge(job.state));
    return row([
      idCell, cell('td', when(job.submitted_unix_ms), 'submitted'), stateCell,
      cell('td', job.game + (job.convention ? ' (' + job.convention + ')' : '')), cell('td', job.depth, 'num'),
      cell('td', job.verify ? 'yes' : 'no', 'verified'),
      progressCell(job.work_done), cell('td', grouped(job.leaves_done), 'num'),
      cell('td', rate(job.leaves_per_second), 'num'), cell('td', eta(job), 'num'),
    ]);
  });
  fill(el('jobs').tBodies[0], rows);
  el('empty').hidden = rows.length > 0;
}

// The leaves/s chart: a hand-drawn SVG polyline over the job's samples.
function drawChart(svg, points) {
  const ns = 'http://www.w3.org/2000/svg';
  const width = 800, height = 200, left = 70, bottom = 24, top = 10, right = 10;
  const shapes = [];
  const add = (tag, attrs, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    shapes.push(e);
  };
  add('rect', { x: left, y: top, width: width - left - right, height: height - top - bottom, class: 'plot' });
  if (points.length < 2) {
    add('text', { x: width / 2, y: height / 2, class: 'axis', 'text-anchor': 'middle' },
      'the chart fills in while the job runs');
    svg.replaceChildren(...shapes);
    return;
  }
  const t0 = points[0][0], t1 = points[points.length - 1][0];
  const max = Math.max(...points.map((p) => p[1]), 1);
  const x = (t) => left + (t1 > t0 ? (t - t0) / (t1 - t0) : 0) * (width - left - right);
  const y = (v) => height - bottom - (v / max) * (height - top - bottom);
  add('polyline', { points: points.map((p) => x(p[0]).toFixed(1) + ',' + y(p[1]).toFixed(1)).join(' '), class: 'line' });
  add('text', { x: left - 6, y: top + 10, class: 'axis', 'text-anchor': 'end' }, rate(max));
  add('text', { x: left - 6, y: height - bottom, class: 'axis', 'text-anchor': 'end' }, '0');
  add('text', { x: left, y: height - 6, class: 'axis' }, new Date(t0).toLocaleTimeString());
  add('text', { x: width - right, y: height - 6, class: 'axis', 'text-anchor': 'end' }, new Date(t1).toLocaleTimeString());
  svg.replaceChildren(...shapes);
}

function matchMark(matches) {
  if (matches === true) return cell('td', '\u2713 match', 'match yes');
  if (matches === false) return cell('td', '\u2717 differs', 'match no');
  return cell('td', '', 'match');
}

async function jobPage() {
  const id = decodeURIComponent(location.pathname.replace(/^\/jobs\//, ''));
  const data = await api('/api/jobs/' + encodeURIComponent(id));
  const job = data.job;
  document.title = 'Deep Perft: job ' + job.id;
  el('job-id').textContent = job.id;
  const badge = el('job-state');
  badge.textContent = job.state;
  badge.className = 'state ' + job.state;
  el('job-what').textContent = job.game + (job.convention ? ' (' + job.convention + ' convention)' : '') +
    ' depth ' + job.depth + ' from ' + job.position +
    (job.verify ? ' (verified on two machines)' : '');
  el('job-certificate').hidden = job.state !== 'done';
  el('job-certificate-link').href = '/api/jobs/' + encodeURIComponent(job.id) + '/certificate';
  el('job-error').hidden = !job.error;
  el('job-error').textContent = job.error || '';
  setProgress(el('job-bar'), el('job-percent'), el('job-percent-on-fill'), job.work_done);
  el('job-leaves').textContent = grouped(job.leaves_done);
  el('job-rate').textContent = rate(job.leaves_per_second);
  el('job-eta').textContent = eta(job);
  el('job-submitted').textContent = when(job.submitted_unix_ms);
  el('job-elapsed').textContent = duration(job.seconds);
  el('job-units').textContent = grouped(job.units_done) + ' / ' + grouped(job.units_total) +
    ' done, ' + grouped(job.units_leased) + ' leased, ' + grouped(job.units_released) + ' released';
  el('job-published').textContent = published(data.published_total && data.published_total.leaves);
  drawChart(el('chart'), data.chart);

  fill(el('divide').tBodies[0], data.divide.map((line) => {
    const tr = row([
      cell('td', line.move, 'move'),
      progressCell(line.units_total > 0 ? line.units_done / line.units_total : 1,
        grouped(line.units_done) + ' / ' + grouped(line.units_total) + ' units'),
      cell('td', grouped(line.leaves), 'num leaves'),
      cell('td', published(line.published), 'num published'),
      matchMark(line.matches),
    ]);
    if (line.higher !== undefined) tr.children[2].title = grouped(line.higher) + ' of them at game over';
    tr.className = line.units_done === line.units_total ? 'line finished' : 'line';
    return tr;
  }));
  el('divide-units').textContent = grouped(job.units_done) + ' / ' + grouped(job.units_total);
  el('divide-total').textContent = grouped(data.total.leaves);
  el('divide-published').textContent = published(data.published_total && data.published_total.leaves);
  el('divide-match').replaceWith(Object.assign(matchMark(data.total_matches), { id: 'divide-match' }));

  renderKinds(data);

  el('disagreements').hidden = data.disagreements.length === 0;
  el('disagreements-none').hidden = data.disagreements.length > 0;
  fill(el('disagreements').tBodies[0], data.disagreements.map((d) => row([
    cell('td', d.unit_id, 'num'), cell('td', d.position, 'position'),
    cell('td', d.votes.map((v) => v.worker + ': ' + grouped(v.leaves)).join('; ')),
    cell('td', d.decided === null ? 'undecided' : grouped(d.decided), 'num'),
  ])));
  el('serving').hidden = data.workers.length === 0;
  el('serving-none').hidden = data.workers.length > 0;
  fill(el('serving').tBodies[0], data.workers.map((w) => row([
    cell('td', w.name === null ? '(gone)' : w.name), cell('td', w.participant === null ? '(gone)' : w.participant),
    cell('td', w.id, 'mono'), cell('td', w.units, 'num'),
  ])));
  return job.state === 'done' || job.state === 'failed' || job.state === 'cancelled';
}

/** A statistics job's leaves by kind: a row per first move, a column per kind. */
function renderKinds(data) {
  const kinds = data.total.kinds || [];
  el('kinds-section').hidden = kinds.length === 0;
  if (kinds.length === 0) return;
  const table = el('kinds');
  const head = row([cell('th', 'Move')].concat(kinds.map((k) => cell('th', k.kind.replace(/_/g, ' '), 'num'))));
  table.tHead.replaceChildren(head);
  const line = (name, count) => row([cell('td', name, 'move')]
    .concat((count.kinds || []).map((k) => cell('td', grouped(k.count), 'num'))));
  const rows = data.divide.map((l) => line(l.move, l));
  const total = line('Total', data.total);
  total.className = 'total';
  rows.push(total);
  fill(table.tBodies[0], rows);
}

async function workersPage() {
  const data = await api('/api/workers');
  const rows = data.workers.map((w) => {
    const statusCell = cell('td');
    statusCell.appendChild(cell('span', w.status, 'state ' + w.status));
    const seen = w.last_seen_seconds !== null ? duration(w.last_seen_seconds) + ' ago'
      : (w.gone_unix_ms ? 'gone at ' + new Date(w.gone_unix_ms).toLocaleTimeString() : '-');
    const tr = row([
      cell('td', w.name, 'name'), cell('td', w.participant === null ? '-' : w.participant, 'participant'),
      statusCell, cell('td', w.threads, 'num'), cell('td', grouped(w.units_done), 'num units'),
      cell('td', w.leaves_done === null ? '-' : grouped(w.leaves_done), 'num leaves'),
      cell('td', rate(w.leaves_per_second), 'num'),
      cell('td', w.table_hit_rate === null ? '-' : percent(w.table_hit_rate), 'num'),
      cell('td', w.table_fill === null ? '-' : percent(w.table_fill), 'num'),
      cell('td', seen, 'num'),
    ]);
    tr.title = 'session ' + w.id + (w.only_job ? ', only job ' + w.only_job : '');
    return tr;
  });
  fill(el('workers').tBodies[0], rows);
  el('empty').hidden = rows.length > 0;
}

// A participant's standing: what keeps it from leasing, if anything.
function standing(p) {
  if (p.revoked) return 'revoked';
  if (p.quarantined) return 'quarantined';
  if (p.suspended) return 'suspended';
  return 'active';
}

async function participantsPage() {
  const data = await api('/api/participants');
  const rows = data.participants.map((p) => {
    const standingCell = cell('td');
    standingCell.appendChild(cell('span', standing(p), 'state ' + standing(p)));
    const lost = grouped(p.lost_votes) + (p.lost_votes_forgiven !== '0' ? ' (' + grouped(p.lost_votes_forgiven) + ' forgiven)' : '');
    return row([
      cell('td', p.name, 'name'), cell('td', p.role, 'role'), standingCell,
      cell('td', p.machines + ' (' + p.threads + ')', 'num machines'),
      cell('td', grouped(p.units), 'num units'), cell('td', grouped(p.leaves), 'num leaves'),
      cell('td', p.cpu_seconds.toFixed(1), 'num cpu'), cell('td', lost, 'num lost'),
      cell('td', grouped(p.lapses), 'num lapses'),
    ]);
  });
  fill(el('participants').tBodies[0], rows);
  el('empty').hidden = rows.length > 0;
  const order = ['open_jobs', 'open_units', 'sessions', 'streams', 'dashboard_sessions'];
  fill(el('budgets').tBodies[0], data.participants.filter((p) => !p.revoked).map((p) => row(
    [cell('td', p.name)].concat(order.map((resource) => {
      const line = p.budget.find((b) => b.resource === resource);
      if (!line) return cell('td', '-', 'num');
      const limit = line.limit === null ? 'unlimited' : grouped(line.limit);
      return cell('td', grouped(line.used) + ' / ' + limit + (line.overridden ? '*' : ''), 'num');
    })),
  )));
}

const pages = { jobs: jobsPage, job: jobPage, workers: workersPage, participants: participantsPage };

async function poll() {
  const page = pages[document.body.dataset.page];
  try {
    await page();
    document.body.dataset.loaded = 'yes';
    setStatus(true, 'live, updated ' + new Date().toLocaleTimeString());
  } catch (e) {
    setStatus(false, 'cannot update: ' + e.message);
  }
  setTimeout(poll, POLL_MS);
}

document.addEventListener('DOMContentLoaded', poll);
