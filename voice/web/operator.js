// voiceloop operator page: every live call's state, transcript and pending approval, with the operator's
// Approve / Decline (POST api/calls/{id}/approval), and the escalated calls. It reads the operator API
// (voice/server/api.py) with the operator token; callers' pages never approve on the operator's behalf.
'use strict';

const $ = (id) => document.getElementById(id);
const POLL_MS = 700;
const STATE_LABELS = {
  listening: 'listening', caller_speaking: 'listening: hearing the caller', thinking: 'thinking…',
  speaking: 'speaking', awaiting_approval: 'waiting for a yes',
};

const op = {
  token: '',
  timer: null,
  calls: new Map(), // call id -> { after, state, lines, card }
  decisions: [], // [call id, approved, HTTP status] for every decision sent (for tests and debugging)
};
window.voiceloopOperator = op;

function api(path) {
  return new URL(`api/${path}`, location.href).href; // relative: the page may be mounted under a prefix
}

async function getJson(path) {
  const res = await fetch(api(path), { headers: { Authorization: `Bearer ${op.token}` } });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
  return body;
}

function setStatus(text, cls) {
  $('status').textContent = text;
  $('status').className = cls || '';
}

// ---- live calls ------------------------------------------------------------------------------------

async function poll() {
  let live;
  try {
    live = (await getJson('calls')).calls;
  } catch (e) {
    setStatus(`cannot read calls: ${e.message || e}`, 'bad');
    return;
  }
  setStatus(`watching: ${live.length} live call${live.length === 1 ? '' : 's'}`, 'ok');
  const ids = new Set(live.map((c) => c.id));
  for (const [id, view] of op.calls) {
    if (!ids.has(id)) {
      view.card.remove();
      op.calls.delete(id);
    }
  }
  for (const summary of live) await updateCall(summary);
  $('no-calls').hidden = live.length > 0;
}

async function pollForever() {
  await poll();
  op.timer = setTimeout(pollForever, POLL_MS); // after the last answer: polls never pile up
}

async function updateCall(summary) {
  let view = op.calls.get(summary.id);
  if (!view) {
    view = { after: 0, state: '', lines: [], card: callCard(summary) };
    op.calls.set(summary.id, view);
    $('calls').append(view.card);
  }
  try {
    const { events } = await getJson(`calls/${encodeURIComponent(summary.id)}/events?after=${view.after}`);
    for (const ev of events) {
      view.after = Math.max(view.after, ev.seq);
      readEvent(view, ev);
    }
  } catch (e) {
    return; // the call ended between the two requests
  }
  renderCall(view, summary);
}

function readEvent(view, ev) {
  if (ev.kind === 'call_state') view.state = ev.state;
  else if (ev.kind === 'caller_turn_ended' && ev.text) view.lines.push({ who: 'caller', text: ev.text });
  else if (ev.kind === 'agent_said') {
    const last = view.lines[view.lines.length - 1];
    if (last && last.who === 'agent' && !last.cut) last.text = `${last.text} ${ev.text}`.trim();
    else view.lines.push({ who: 'agent', text: ev.text });
  } else if (ev.kind === 'barge_in') {
    const last = view.lines[view.lines.length - 1];
    if (last && last.who === 'agent') last.cut = true;
  }
}

function callCard(summary) {
  const card = document.createElement('div');
  card.className = 'call-card';
  card.dataset.call = summary.id;
  card.innerHTML = '<div class="call-head"><code class="call-id"></code> <span class="transport"></span>'
    + '<span class="state" data-state="listening"></span></div><div class="lines"></div>'
    + '<div class="approval" hidden><div><strong>Pending approval:</strong> <code class="approval-text"></code></div>'
    + '<div class="decide"><button class="yes approve">Approve</button> <button class="no decline">Decline</button>'
    + '</div><div class="decided"></div></div>';
  card.querySelector('.call-id').textContent = summary.id;
  card.querySelector('.transport').textContent = summary.transport;
  card.querySelector('.approve').addEventListener('click', () => decide(summary.id, true));
  card.querySelector('.decline').addEventListener('click', () => decide(summary.id, false));
  return card;
}

function renderCall(view, summary) {
  const state = view.card.querySelector('.state');
  state.dataset.state = view.state || 'listening';
  state.textContent = STATE_LABELS[view.state] || view.state || '…';
  const lines = view.card.querySelector('.lines');
  lines.replaceChildren(...view.lines.map((l) => lineDiv(l.who, l.text)));
  const pending = summary.pending_approval;
  const box = view.card.querySelector('.approval');
  box.hidden = !pending;
  if (pending) box.querySelector('.approval-text').textContent = `${pending.call}(${JSON.stringify(pending.arguments)})`;
}

function lineDiv(who, text) {
  const div = document.createElement('div');
  div.className = `line ${who}`;
  const label = Object.assign(document.createElement('span'), { className: 'who', textContent: who });
  const body = Object.assign(document.createElement('span'), { className: 'text', textContent: text });
  div.append(label, body);
  return div;
}

async function decide(callId, approved) {
  const res = await fetch(api(`calls/${encodeURIComponent(callId)}/approval`), {
    method: 'POST',
    headers: { Authorization: `Bearer ${op.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ approved }),
  });
  op.decisions.push([callId, approved, res.status]);
  const view = op.calls.get(callId);
  if (view) {
    const body = await res.json().catch(() => ({}));
    view.card.querySelector('.decided').textContent = res.ok ? (approved ? 'approved' : 'declined')
      : `not decided: ${body.error || res.status}`;
  }
}

// ---- escalated calls -------------------------------------------------------------------------------

async function loadEscalations() {
  if (!op.token) return;
  let calls;
  try {
    calls = (await getJson('escalations')).calls;
  } catch (e) {
    $('escalations').textContent = `could not load: ${e.message || e}`;
    return;
  }
  $('escalations').replaceChildren(...(calls.length ? calls.map(escalationCard) : [document.createTextNode('none')]));
}

function escalationCard(call) {
  const card = document.createElement('div');
  card.className = 'escalation';
  const head = document.createElement('div');
  const link = Object.assign(document.createElement('a'), {
    href: `${api(`calls/${encodeURIComponent(call.id)}/timeline`)}?token=${encodeURIComponent(op.token)}`,
    target: '_blank', rel: 'noopener', textContent: call.id,
  });
  const transfer = call.transfers.length ? ` · ${call.transfers[call.transfers.length - 1].status || 'transfer'}` : '';
  head.append(link, document.createTextNode(` (${call.transport}${call.live ? ', live' : ''})${transfer}`));
  const reason = Object.assign(document.createElement('div'), { className: 'reason', textContent: call.reason });
  card.append(head, reason, ...call.transcript.map((l) => lineDiv(l.who, l.text)));
  return card;
}

// ---- controls --------------------------------------------------------------------------------------

function watch() {
  op.token = $('token').value.trim();
  if (!op.token) {
    setStatus('the operator token is required (?token=… in the address, or paste it)', 'bad');
    return;
  }
  clearTimeout(op.timer);
  loadEscalations();
  pollForever();
}

window.addEventListener('DOMContentLoaded', () => {
  const params = new URLSearchParams(location.search);
  $('token').value = params.get('token') || '';
  if (params.has('token')) history.replaceState(null, '', location.pathname); // keep it out of the address bar
  $('watch').addEventListener('click', watch);
  $('refresh-escalations').addEventListener('click', loadEscalations);
  if ($('token').value) watch();
});
