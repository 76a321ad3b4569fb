// knowmind explorer: everything here goes through the MCP endpoint with the
// signed-in token (tools/list, tools/call), so the page can see and do only
// what an agent holding the token could. The DOM is built with textContent
// only: stored content never becomes markup.
'use strict';
(() => {
  const TOKEN_KEY = 'knowmind.token';
  const MCP_PATH = '/api/mcp/v1';
  const SLIDER_MAX = 1000;
  const $ = (id) => document.getElementById(id);
  // What to do when the token cannot do something: the commands an operator runs.
  const OUT_OF_REACH = 'This token cannot do that. Ask whoever runs knowmind for a token that can, e.g. ' +
    '`knowmind token create --tenant TENANT --scopes read,write --toolsets all`.';

  const state = {
    token: null,
    tools: new Set(),
    selected: null,    // the memory_id asked for (the centre may be another version of it)
    shown: null,       // the last explore result
    asOf: null,        // Date, or null for now
    range: null,       // {min, max} in ms for the time slider
    query: '',
    cy: null,
    busy: 0,
  };

  class HTTPError extends Error {
    constructor(status, message) { super(message); this.status = status; }
  }

  // --- MCP over Streamable HTTP: one-shot JSON-RPC requests, JSON answers.
  let rpcID = 0;
  async function rpc(method, params) {
    busy(+1);
    try {
      const res = await fetch(MCP_PATH, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Accept': 'application/json',
          'Authorization': 'Bearer ' + state.token,
          // Every toolset the token reaches, not only the default list: the page uses what it may.
          'X-Knowmind-Toolsets': 'all',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcID, method, params }),
        cache: 'no-store',
        credentials: 'omit',
      });
      let body = null;
      try { body = await res.json(); } catch (_) { /* not JSON */ }
      if (res.status === 401) {
        throw new HTTPError(401, 'This token was not accepted (HTTP 401): it is unknown, revoked or expired.');
      }
      if (body && body.error) {
        let message = body.error.message + ' (code ' + body.error.code + ')';
        if (body.error.code === -32002 || res.status === 403) message += ' ' + OUT_OF_REACH;
        throw new HTTPError(res.status, message);
      }
      if (!res.ok || !body) {
        throw new HTTPError(res.status, 'The service answered HTTP ' + res.status + '.');
      }
      return body.result;
    } finally {
      busy(-1);
    }
  }

  async function callTool(name, args) {
    const result = await rpc('tools/call', { name, arguments: args });
    if (result.isError) {
      const text = (result.content || []).map((c) => c.text || '').join(' ');
      throw new Error(text || name + ' failed');
    }
    return result.structuredContent;
  }

  function busy(delta) {
    state.busy += delta;
    document.body.dataset.busy = String(state.busy);
  }

  // --- small DOM helpers
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (k === 'class') e.className = v;
        else if (k === 'text') e.textContent = v;
        else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
        else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : v);
      }
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  function fmtTime(s) {
    if (!s) return '';
    const d = (s instanceof Date) ? s : new Date(s);
    return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace('Z', ' UTC');
  }
  function showError(err) {
    const box = $('app-error');
    box.textContent = err ? String(err.message || err) : '';
    box.hidden = !err;
    if (err && err.status === 401 && state.token) {
      signOut('Your token is no longer accepted (HTTP 401). Sign in again.');
    }
  }

  // --- sign in / out
  async function signIn(token, quiet) {
    const msg = $('signin-error');
    msg.hidden = true;
    token = token.trim();
    // A kmt_ API token, or a JWT / OAuth access token (three base64url parts).
    if (!token.startsWith('kmt_') && !/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token)) {
      msg.textContent = 'Paste a knowmind token (kmt_…) or a JWT from your identity provider.';
      msg.hidden = false;
      return;
    }
    state.token = token;
    try {
      const list = await rpc('tools/list', {});
      state.tools = new Set((list.tools || []).map((t) => t.name));
    } catch (err) {
      state.token = null;
      sessionStorage.removeItem(TOKEN_KEY);
      if (!quiet) {
        msg.textContent = err.message;
        msg.hidden = false;
      }
      return;
    }
    if (!state.tools.has('knowmind_recall') || !state.tools.has('knowmind_explore')) {
      state.token = null;
      // tools/list shows every tool the token may call (X-Knowmind-Toolsets: all): read tools of
      // other toolsets mean the scope is there and the memory toolset is not.
      const reads = [...state.tools].some((n) => n !== 'knowmind_health');
      msg.textContent = reads
        ? 'This token\'s toolsets leave out memory, which the explorer reads (knowmind_recall, knowmind_explore). ' +
          'Use a token that includes it: `knowmind token create --tenant TENANT --scopes read --toolsets memory` ' +
          '(or add memory to the toolsets it has).'
        : 'This token has no read scope: the explorer needs a token with scope read ' +
          '(`knowmind token create --tenant TENANT --scopes read`).';
      msg.hidden = false;
      return;
    }
    sessionStorage.setItem(TOKEN_KEY, token);
    $('token').value = '';
    $('signin-view').hidden = true;
    $('app-view').hidden = false;
    $('signout').hidden = false;
    $('who').textContent = canWrite() ? 'signed in · read and write' : 'signed in · read-only';
    showReach();
    document.body.dataset.mode = canWrite() ? 'write' : 'read';
    $('query').focus();
    loadRecent();
  }

  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    Object.assign(state, { token: null, tools: new Set(), selected: null, shown: null, asOf: null, range: null, query: '' });
    if (state.cy) { state.cy.destroy(); state.cy = null; }
    for (const id of ['hits', 'recent', 'd-tags', 'd-props', 'd-entities', 'd-chunks', 'd-versions', 'd-edges', 'write-slot']) $(id).replaceChildren();
    $('details').hidden = true;
    $('query').value = '';
    $('search-status').textContent = '';
    $('graph-status').textContent = 'Search, then pick a memory to see its neighbourhood.';
    resetSlider();
    $('app-view').hidden = true;
    $('signout').hidden = true;
    $('who').textContent = '';
    delete document.body.dataset.mode;
    $('signin-view').hidden = false;
    $('app-error').hidden = true;
    $('reach').hidden = true;
    const msg = $('signin-error');
    msg.textContent = message || '';
    msg.hidden = !message;
    $('token').focus();
  }

  function canWrite() { return state.tools.has('knowmind_update_fact'); }

  // showReach says what the token leaves out and how to get it: notes (a toolset) are hidden
  // from search and the graph, updating facts needs scope write.
  function showReach() {
    const lines = [];
    if (!state.tools.has('knowmind_get_note')) {
      lines.push('Notes are not shown: this token\'s toolsets leave out notes. A token made with ' +
        '`knowmind token create --tenant TENANT --scopes read --toolsets memory,notes` sees them here too.');
    }
    if (!canWrite()) {
      lines.push('Read-only: updating a fact needs scope write (`--scopes read,write`).');
    }
    $('reach').textContent = lines.join(' ');
    $('reach').hidden = lines.length === 0;
  }

  // --- search and recent
  async function search() {
    state.query = $('query').value.trim();
    if (!state.query) return;
    const status = $('search-status');
    status.textContent = 'Searching…';
    try {
      const args = { query: state.query, k: 10 };
      let res;
      if (state.asOf) {
        args.as_of = state.asOf.toISOString();
        res = await callTool('knowmind_recall_at_time', args);
      } else {
        res = await callTool('knowmind_recall', args);
      }
      renderHits(res.hits || []);
      status.textContent = (res.hits || []).length + ' hits in ' + res.elapsed_ms + ' ms' +
        (state.asOf ? ' · as of ' + fmtTime(state.asOf) : '') + (res.rerank && res.rerank !== 'none' ? ' · reranked by ' + res.rerank : '');
      showError(null);
    } catch (err) {
      status.textContent = '';
      showError(err);
    }
  }

  function renderHits(hits) {
    $('hits').replaceChildren(...hits.map((h) => el('li', null,
      el('button', { type: 'button', 'data-id': h.memory_id, onclick: () => select(h.memory_id) },
        el('span', { class: 'score', text: h.score.toFixed(3), title: 'score (0..1)' }),
        el('strong', { text: h.title || h.memory_id }),
        el('span', { class: 'badge', text: h.kind }),
        el('span', { class: 'snippet', text: h.content })))));
  }

  async function loadRecent() {
    try {
      const res = await callTool('knowmind_list_recent', { k: 20 });
      $('recent').replaceChildren(...res.items.map((it) => el('li', null,
        el('button', { type: 'button', 'data-id': it.id, onclick: () => select(it.id) },
          el('strong', { text: it.title || it.id }),
          el('span', { class: 'badge', text: it.kind }),
          it.status === 'failed' ? el('span', { class: 'badge failed', text: 'ingest failed' }) : null,
          el('span', { class: 'snippet', text: fmtTime(it.created_at) + ' · ' + it.indexed_chunks + ' chunks' })))));
    } catch (err) {
      showError(err);
    }
  }

  // --- one memory: graph and details
  async function select(id) {
    state.selected = id;
    state.range = null; // recomputed for this memory's history
    await explore();
  }

  async function explore() {
    if (!state.selected) return;
    const args = { memory_id: state.selected, hops: Number($('hops').value) };
    if (state.asOf) args.as_of = state.asOf.toISOString();
    try {
      const res = await callTool('knowmind_explore', args);
      state.shown = res;
      if (!state.range) setRange(res);
      renderGraph(res);
      renderDetails(res);
      showError(null);
    } catch (err) {
      showError(err);
    }
  }

  function setRange(res) {
    const times = [];
    for (const v of res.versions) times.push(Date.parse(v.valid_from));
    for (const n of res.nodes) if (n.valid_from && !n.valid_from.startsWith('0001')) times.push(Date.parse(n.valid_from));
    for (const e of res.edges) if (e.valid_from && !e.valid_from.startsWith('0001')) times.push(Date.parse(e.valid_from));
    const now = Date.now();
    // +1 ms: times are stored in nanoseconds and read here in milliseconds;
    // the slider's left end must not fall before the oldest valid_from.
    const min = Math.min(...times.filter((t) => !Number.isNaN(t)).map((t) => t + 1), now);
    state.range = { min, max: now };
    const slider = $('asof');
    slider.disabled = !(min < now);
    $('asof-now').disabled = slider.disabled;
    slider.value = state.asOf ? sliderFor(state.asOf.getTime()) : SLIDER_MAX;
    updateSliderLabel();
  }

  function sliderFor(t) {
    const { min, max } = state.range;
    return Math.max(0, Math.min(SLIDER_MAX, Math.floor((t - min) / (max - min) * SLIDER_MAX)));
  }
  function timeFor(v) {
    const { min, max } = state.range;
    if (v >= SLIDER_MAX) return null;
    return new Date(min + (max - min) * v / SLIDER_MAX);
  }
  function updateSliderLabel() {
    const v = Number($('asof').value);
    const t = state.range ? timeFor(v) : null;
    $('asof-label').textContent = t ? 'as of ' + fmtTime(t) : 'now';
    $('asof').setAttribute('aria-valuetext', t ? 'as of ' + fmtTime(t) : 'now');
  }
  function resetSlider() {
    $('asof').value = SLIDER_MAX;
    $('asof').disabled = true;
    $('asof-now').disabled = true;
    state.asOf = null;
    updateSliderLabel();
  }

  async function setAsOf(date) {
    state.asOf = date;
    if (state.range) $('asof').value = date ? sliderFor(date.getTime()) : SLIDER_MAX;
    updateSliderLabel();
    if (date) $('asof-label').textContent = 'as of ' + fmtTime(date);
    await explore();
    if (state.query) await search();
  }

  function renderGraph(res) {
    const elements = [];
    for (const n of res.nodes) {
      elements.push({ group: 'nodes', data: {
        id: n.id, label: n.title || n.id, kind: n.kind, hop: n.hop,
        // dashed only if it had ended at the time shown: as of a moment before its successor it was current
        old: n.valid_to && (!res.as_of || Date.parse(n.valid_to) <= Date.parse(res.as_of)) ? 1 : 0,
        failed: n.status === 'failed' ? 1 : 0, centre: n.hop === 0 ? 1 : 0,
      } });
    }
    for (const e of res.edges) {
      elements.push({ group: 'edges', data: { id: e.from + '|' + e.rel_type + '|' + e.to, source: e.from, target: e.to, label: e.rel_type } });
    }
    if (state.cy) state.cy.destroy();
    state.cy = cytoscape({
      container: $('graph'),
      elements,
      style: [
        { selector: 'node', style: {
          'label': 'data(label)', 'font-size': 12, 'text-wrap': 'ellipsis', 'text-max-width': 140,
          'text-valign': 'bottom', 'text-margin-y': 4, 'color': '#1d2330',
          'background-color': '#6c8fdc', 'width': 22, 'height': 22, 'border-width': 2, 'border-color': '#2457c5' } },
        { selector: 'node[kind = "document"]', style: { 'shape': 'round-rectangle', 'background-color': '#9bc3a0', 'border-color': '#3d7a45' } },
        { selector: 'node[centre = 1]', style: { 'width': 34, 'height': 34, 'background-color': '#2457c5', 'font-weight': 'bold' } },
        { selector: 'node[old = 1]', style: { 'background-color': '#c9ccd3', 'border-color': '#8a8f99', 'border-style': 'dashed', 'color': '#5b6475' } },
        { selector: 'node[failed = 1]', style: { 'border-color': '#b3261e', 'border-width': 4 } },
        { selector: 'edge', style: {
          'label': 'data(label)', 'font-size': 9, 'color': '#5b6475', 'text-rotation': 'autorotate',
          'text-background-color': '#fbfcfe', 'text-background-opacity': 1, 'text-background-padding': 2,
          'curve-style': 'bezier', 'width': 1.5, 'line-color': '#9aa3b5',
          'target-arrow-shape': 'triangle', 'target-arrow-color': '#9aa3b5' } },
        { selector: 'edge[label = "SUPERSEDES"]', style: { 'line-style': 'dashed' } },
      ],
      minZoom: 0.2,
      maxZoom: 1.6,
      layout: { name: 'preset', positions: radialPositions(res.nodes), fit: true, padding: 40, animate: false },
    });
    state.cy.on('tap', 'node', (evt) => { if (evt.target.id() !== res.memory.id) select(evt.target.id()); });
    $('graph').dataset.nodes = res.nodes.map((n) => n.id).join(' ');
    $('graph-status').textContent = res.nodes.length + ' memories, ' + res.edges.length + ' relations' +
      (res.truncated ? ' (cut: the neighbourhood is larger)' : '') + (res.as_of ? ' · as of ' + fmtTime(res.as_of) : ' · now');
  }

  // radialPositions puts the centre in the middle and each hop on a ring
  // around it, evenly spread: the rings read as hop distance.
  function radialPositions(nodes) {
    const byHop = new Map();
    for (const n of nodes) {
      if (!byHop.has(n.hop)) byHop.set(n.hop, []);
      byHop.get(n.hop).push(n.id);
    }
    const pos = {};
    for (const [hop, ids] of byHop) {
      const radius = hop * 170;
      ids.forEach((id, i) => {
        // at least three slots a ring, so two neighbours never line up through the centre
        const angle = -Math.PI / 2 + (2 * Math.PI * i) / Math.max(ids.length, 3) + hop * 0.45;
        pos[id] = { x: radius * Math.cos(angle), y: radius * Math.sin(angle) };
      });
    }
    return pos;
  }

  function renderDetails(res) {
    const m = res.memory;
    const titles = new Map(res.nodes.map((n) => [n.id, n.title || n.id]));
    $('details').hidden = false;
    $('details').dataset.id = m.id;
    $('d-title').textContent = m.title || m.id;
    const meta = [m.kind, m.memory_type, 'status ' + m.status, 'valid from ' + fmtTime(m.valid_from)];
    if (m.valid_to) meta.push('until ' + fmtTime(m.valid_to));
    if (m.source) meta.push('source ' + m.source);
    $('d-meta').textContent = meta.filter(Boolean).join(' · ') + ' · id ' + m.id;
    const err = $('d-error');
    err.hidden = m.status !== 'failed';
    err.textContent = m.status === 'failed' ? 'Ingest failed' + (res.ingest_error ? ': ' + res.ingest_error : '') : '';
    const req = $('d-requested');
    let note = '';
    if (res.requested_id) {
      note = 'Showing the version valid as of ' + fmtTime(res.as_of) + '; you opened ' + res.requested_id + '.';
    } else if (res.as_of && Date.parse(m.valid_from) > Date.parse(res.as_of)) {
      note = 'This memory was not yet valid as of ' + fmtTime(res.as_of) + '.';
    } else if (res.as_of && m.valid_to && Date.parse(m.valid_to) <= Date.parse(res.as_of)) {
      note = 'This memory was no longer valid as of ' + fmtTime(res.as_of) + '.';
    }
    req.hidden = !note;
    req.textContent = note;
    $('d-tags').replaceChildren(...(m.tags || []).map((t) => el('li', { text: t })));
    // A note's front matter (its properties), one "key: value" each.
    $('d-props').replaceChildren(...Object.entries(res.properties || {}).map(([k, v]) => el('li', {
      'data-key': k, text: k + ': ' + (typeof v === 'object' ? JSON.stringify(v) : String(v)) })));
    $('d-entities').replaceChildren(...(res.entities || []).map((e) => el('li', {
      'data-type': e.type, 'data-id': e.id, title: e.type + '/' + e.id, text: e.type + ': ' + (e.name || e.id) })));
    $('d-content').textContent = m.content + (res.content_truncated ? '\n[… cut; the chunks show the rest]' : '');
    $('d-chunks-box').hidden = res.chunks.length === 0;
    $('d-chunks').replaceChildren(...res.chunks.map((c) => el('li', null,
      c.heading ? el('span', { class: 'heading', text: c.heading }) : null, el('span', { text: c.text }))));
    $('d-versions').replaceChildren(...res.versions.map((v) => el('li', { class: v.id === m.id ? 'shown' : '', 'data-id': v.id },
      el('span', { text: v.title || v.id }),
      el('span', { class: 'when', text: 'valid ' + fmtTime(v.valid_from) + ' → ' + (v.valid_to ? fmtTime(v.valid_to) : 'now') }),
      v.update_reason ? el('span', { class: 'when', text: 'reason: ' + v.update_reason }) : null,
      v.id === m.id ? null : el('button', { type: 'button', class: 'link', text: 'show as of this version',
        onclick: () => setAsOf(v.valid_to ? new Date(Date.parse(v.valid_from) + 1) : null) }))));
    $('d-edges').replaceChildren(...res.edges.map((e) => {
      const peer = e.from === m.id ? e.to : e.from;
      return el('li', null, el('button', { type: 'button', 'data-peer': peer, onclick: () => select(peer),
        title: 'inverse: ' + e.inverse_type + ' · valid from ' + fmtTime(e.valid_from) },
      el('span', { text: (titles.get(e.from) || e.from) + ' —' + e.rel_type + '→ ' + (titles.get(e.to) || e.to) }),
      el('span', { class: 'snippet', text: 'read back: ' + e.inverse_type + ' · since ' + fmtTime(e.valid_from) +
        (e.valid_to ? ' until ' + fmtTime(e.valid_to) : '') })));
    }));
    renderWriteControls(res);
  }

  // Write controls exist only when tools/list offers the write tool: a
  // read-only token gets none (and the endpoint would refuse the call anyway).
  function renderWriteControls(res) {
    const slot = $('write-slot');
    slot.replaceChildren();
    const m = res.memory;
    if (!canWrite() || m.valid_to || res.as_of) return;
    const title = el('input', { id: 'u-title', value: m.title, maxlength: '500', required: true });
    const content = el('textarea', { id: 'u-content', required: true });
    content.value = m.content;
    const reason = el('input', { id: 'u-reason', maxlength: '2000', placeholder: 'e.g. address changed' });
    const form = el('form', { id: 'write-update' },
      el('h3', { text: 'Update this fact' }),
      el('label', { for: 'u-title', text: 'New title' }), title,
      el('label', { for: 'u-content', text: 'New content' }), content,
      el('label', { for: 'u-reason', text: 'Reason' }), reason,
      el('button', { type: 'submit', text: 'Save new version' }));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      try {
        const r = await callTool('knowmind_update_fact', {
          target_id: m.id, new_title: title.value, new_content: content.value, update_reason: reason.value,
        });
        await select(r.new_memory_id);
      } catch (err) {
        showError(err);
      }
    });
    slot.append(form);
  }

  // --- wiring
  function start() {
    busy(0);
    $('signin').addEventListener('submit', (ev) => { ev.preventDefault(); signIn($('token').value); });
    $('signout').addEventListener('click', () => signOut());
    $('search').addEventListener('submit', (ev) => { ev.preventDefault(); search(); });
    $('hops').addEventListener('change', () => explore());
    const slider = $('asof');
    slider.addEventListener('input', updateSliderLabel);
    slider.addEventListener('change', () => { if (state.range) setAsOf(timeFor(Number(slider.value))); });
    $('asof-now').addEventListener('click', () => setAsOf(null));
    const saved = sessionStorage.getItem(TOKEN_KEY);
    if (saved) signIn(saved, true);
    else $('token').focus();
  }
  // For the browser test and the curious: the graph instance and state.
  window.knowmindExplorer = state;
  start();
})();
