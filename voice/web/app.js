// voiceloop browser caller: microphone -> WebSocket -> agent, agent audio -> jitter buffer -> speaker.
// The wire protocol is documented in voice/transports/browser/codec.py.
'use strict';

const $ = (id) => document.getElementById(id);
const MIC_BACKLOG = 50; // 1 s of 20 ms frames kept while the call is still starting
const NORMAL_CLOSURE = 1000; // WebSocket close code of a call that ended as it should
// Closed before the call started because this server is draining (1012) or full (1013): behind a load balancer
// another try reaches another server, so the page tries again after these pauses before giving up.
const RETRY_CLOSE_CODES = [1012, 1013];
const RETRY_DELAYS_MS = [500, 1000, 2000, 4000];

const vl = {
  ws: null,
  ctx: null,
  node: null,
  stream: null,
  callId: null,
  epoch: 0,
  micBacklog: [],
  agentLine: null,
  askRow: null,
  partialLine: null,
  token: '',
  retries: 0, // tries again after a draining or full server refused the call
  retryTimer: null,
  hungUp: false,
  stats: { micFrames: 0, received: 0, played: 0, flushed: 0, clears: 0, underruns: 0, events: 0, peak: 0 },
  kinds: [], // every event kind received, in order (for tests and debugging)
  level: 0, // the microphone's level shown, 0..1 (decays between loud frames)
};
window.voiceloop = vl;

function setStatus(text, cls) {
  const el = $('status');
  el.textContent = text;
  el.className = cls || '';
}

// What the agent is doing, as the server's call core says (`call_state` events, voice/call/events.py CallState).
const STATE_LABELS = {
  idle: 'not in a call',
  connecting: 'connecting…',
  listening: 'listening',
  caller_speaking: 'listening: hearing you',
  thinking: 'thinking…',
  speaking: 'speaking',
  awaiting_approval: 'waiting for your yes',
  ended: 'call ended',
};

function setCallState(state) {
  const el = $('state');
  el.dataset.state = state;
  el.textContent = STATE_LABELS[state] || state;
}

// The microphone meter: the level of each 20 ms frame actually sent, in dB mapped onto 0..1 (-60 dBFS .. 0).
const METER_FLOOR_DB = -60;
const METER_DECAY = 0.85; // per frame: the bar falls back over ~0.3 s instead of flickering

function showMicLevel(pcm) {
  const samples = new Int16Array(pcm);
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i] * samples[i];
  const rms = Math.sqrt(sum / Math.max(1, samples.length)) / 32768;
  const db = rms > 0 ? 20 * Math.log10(rms) : METER_FLOOR_DB;
  const now = Math.min(1, Math.max(0, (db - METER_FLOOR_DB) / -METER_FLOOR_DB));
  vl.level = Math.max(now, vl.level * METER_DECAY);
  const pct = Math.round(vl.level * 100);
  $('mic-level').style.width = `${pct}%`;
  $('mic-meter').setAttribute('aria-valuenow', String(pct));
}

function send(obj) {
  if (vl.ws && vl.ws.readyState === WebSocket.OPEN) vl.ws.send(JSON.stringify(obj));
}

// ---- audio ---------------------------------------------------------------------------------

async function startAudio() {
  vl.ctx = new AudioContext({ latencyHint: 'interactive' });
  await vl.ctx.audioWorklet.addModule('worklet.js');
  vl.stream = await navigator.mediaDevices.getUserMedia({
    audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 },
  });
  const source = vl.ctx.createMediaStreamSource(vl.stream);
  vl.node = new AudioWorkletNode(vl.ctx, 'voiceloop', {
    numberOfInputs: 1,
    numberOfOutputs: 1,
    outputChannelCount: [1],
    processorOptions: { jitterMs: 60, ackMs: 40 },
  });
  vl.node.port.onmessage = (ev) => onWorklet(ev.data);
  source.connect(vl.node);
  vl.node.connect(vl.ctx.destination);
  if (vl.ctx.state !== 'running') await vl.ctx.resume();
  $('rate').textContent = `${vl.ctx.sampleRate} Hz`;
}

function onWorklet(msg) {
  if (msg.type === 'mic') {
    vl.stats.micFrames += 1;
    showMicLevel(msg.pcm);
    if (vl.ws && vl.ws.readyState === WebSocket.OPEN && vl.callId) {
      for (const frame of vl.micBacklog.splice(0)) vl.ws.send(frame);
      vl.ws.send(msg.pcm);
    } else if (!vl.ws || vl.ws.readyState <= WebSocket.OPEN) {
      vl.micBacklog.push(msg.pcm);
      if (vl.micBacklog.length > MIC_BACKLOG) vl.micBacklog.shift();
    }
  } else if (msg.type === 'played') {
    vl.stats.played += msg.samples;
    vl.stats.underruns = msg.stats.underruns;
    vl.stats.peak = msg.stats.peak;
    send({ type: 'played', samples: msg.samples, epoch: msg.epoch });
    renderStats();
  } else if (msg.type === 'cleared') {
    vl.stats.flushed += msg.dropped;
    renderStats();
  }
}

function stopAudio() {
  if (vl.stream) vl.stream.getTracks().forEach((t) => t.stop());
  if (vl.ctx) vl.ctx.close();
  vl.stream = vl.ctx = vl.node = null;
  vl.level = 0;
  $('mic-level').style.width = '0%';
  $('mic-meter').setAttribute('aria-valuenow', '0');
}

// ---- socket --------------------------------------------------------------------------------

// The access token never goes into a socket URL: it buys a call token (one call, short-lived) that does.
// URLs are relative to the page, so the app also works mounted under a prefix (create_app in a FastAPI service).
async function mintCallToken(token) {
  const res = await fetch(new URL('call-token', location.href), {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(body.error || `HTTP ${res.status}`);
    err.retryable = res.status === 503; // a draining server: the balancer sends the next try elsewhere
    throw err;
  }
  return body.call_token;
}

// Mint a call token and open the socket; a draining or full server is tried again (RETRY_DELAYS_MS).
async function placeCall(attempt) {
  let callToken;
  try {
    callToken = await mintCallToken(vl.token);
  } catch (e) {
    if (e.retryable && retryLater(attempt, e.message)) return;
    setStatus(`cannot start a call: ${e.message || e}`, 'bad');
    endCall();
    return;
  }
  if (vl.hungUp) {
    setStatus('call cancelled'); // hung up while the token was on its way
    endCall();
    return;
  }
  connect(callToken, attempt);
}

function retryLater(attempt, why) {
  if (attempt >= RETRY_DELAYS_MS.length || vl.hungUp) return false;
  const delay = RETRY_DELAYS_MS[attempt];
  vl.retries += 1;
  setStatus(`${why}: trying again in ${delay / 1000} s…`, 'bad');
  vl.retryTimer = setTimeout(() => {
    vl.retryTimer = null;
    placeCall(attempt + 1);
  }, delay);
  return true;
}

function endCall() {
  setCallState(vl.callId ? 'ended' : 'idle');
  $('approval').hidden = true;
  $('hangup').disabled = true;
  $('start').disabled = false;
  stopAudio();
}

function connect(callToken, attempt = 0) {
  const url = new URL('ws', location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  url.search = `?call_token=${encodeURIComponent(callToken)}`;
  const ws = new WebSocket(url.href);
  ws.binaryType = 'arraybuffer';
  vl.ws = ws;
  setStatus('connecting…');
  setCallState('connecting');
  ws.onmessage = (ev) => {
    if (typeof ev.data === 'string') onControl(ev.data);
    else onAgentAudio(ev.data);
  };
  ws.onclose = (ev) => {
    const why = `${ev.code}${ev.reason ? ': ' + ev.reason : ''}`;
    if (!vl.callId && RETRY_CLOSE_CODES.includes(ev.code) && retryLater(attempt, `not connected (${why})`)) return;
    setStatus(`call ended (${why})`, ev.code === NORMAL_CLOSURE ? '' : 'bad');
    endCall();
  };
  ws.onerror = () => setStatus('connection error', 'bad');
}

function onAgentAudio(buffer) {
  vl.stats.received += buffer.byteLength / 2;
  if (vl.node) vl.node.port.postMessage({ type: 'audio', pcm: buffer }, [buffer]);
}

function onControl(text) {
  let msg;
  try {
    msg = JSON.parse(text);
  } catch (e) {
    return;
  }
  if (msg.type === 'hello') {
    vl.callId = msg.call_id;
    vl.callToken = msg.call_token || '';
    $('call').textContent = msg.call_id;
    const link = $('timeline-link');
    link.href = apiUrl(`calls/${encodeURIComponent(msg.call_id)}/timeline`, vl.callToken);
    link.hidden = false;
    setStatus('connected: speak now', 'ok');
  } else if (msg.type === 'clear') {
    vl.epoch = msg.epoch;
    vl.stats.clears += 1;
    if (vl.node) vl.node.port.postMessage({ type: 'clear', epoch: msg.epoch });
    renderStats();
  } else if (msg.type === 'event') {
    onEvent(msg);
  } else if (msg.type === 'turn') {
    renderTurn(msg);
  } else if (msg.type === 'error') {
    addLine('system', `server: ${msg.error}`);
  }
}

// ---- live view -----------------------------------------------------------------------------

function addLine(who, text) {
  const div = document.createElement('div');
  div.className = `line ${who}`;
  const label = document.createElement('span');
  label.className = 'who';
  label.textContent = who;
  const body = document.createElement('span');
  body.className = 'text';
  body.textContent = text;
  div.append(label, body);
  $('transcript').append(div);
  div.scrollIntoView({ block: 'end' });
  return div;
}

function onEvent(ev) {
  vl.stats.events += 1;
  vl.kinds.push(ev.kind);
  const handler = EVENTS[ev.kind];
  if (handler) handler(ev);
}

const EVENTS = {
  caller_partial(ev) {
    if (!ev.text) return;
    if (!vl.partialLine) vl.partialLine = addLine('partial', '');
    vl.partialLine.querySelector('.text').textContent = ev.text;
  },
  caller_turn_ended(ev) {
    if (vl.partialLine) vl.partialLine.remove();
    vl.partialLine = null;
    if (ev.text) addLine('caller', ev.text);
    vl.agentLine = null;
  },
  agent_said(ev) {
    if (!vl.agentLine) vl.agentLine = addLine('agent', '');
    const body = vl.agentLine.querySelector('.text');
    body.textContent = (body.textContent + ' ' + ev.text).trim();
  },
  agent_paused() {
    if (vl.agentLine) vl.agentLine.classList.add('paused');
  },
  false_interruption_resumed() {
    if (vl.agentLine) vl.agentLine.classList.remove('paused');
  },
  barge_in(ev) {
    if (vl.agentLine) {
      vl.agentLine.classList.add('interrupted');
      vl.agentLine.title = `caller heard: "${ev.heard}"`;
    }
    addLine('system', `barge-in: caller heard "${ev.heard || ''}"`);
    vl.agentLine = null;
  },
  call_state(ev) {
    setCallState(ev.state);
    if (ev.state !== 'awaiting_approval') $('approval').hidden = true; // answered, declined, withdrawn or timed out
  },
  approval_asked(ev) {
    // the caller answers by voice; an operator may decide instead, on the operator page (operator.html)
    const call = `${ev.call}(${JSON.stringify(ev.arguments)})`;
    $('approval-text').textContent = call;
    $('approval').hidden = false;
    if (vl.askRow) vl.askRow.querySelector('.name').textContent = call; // its result is not in yet
  },
  'loop.approval'(ev) {
    $('approval').hidden = true;
    toolRow(ev.call_id).querySelector('.verdict').textContent += ev.approved ? ' → approved' : ' → declined';
  },
  approval_timeout() {
    $('approval').hidden = true;
  },
  'loop.verdict'(ev) {
    const row = toolRow(ev.call_id);
    if (ev.decision === 'ASK') vl.askRow = row;
    row.querySelector('.verdict').textContent = ev.decision + (ev.rule ? ` (${ev.rule})` : '');
    row.querySelector('.verdict').className = `verdict ${ev.decision}`;
  },
  'loop.tool_result'(ev) {
    const row = toolRow(ev.call.id);
    row.querySelector('.name').textContent = `${ev.call.name}(${JSON.stringify(ev.call.arguments)})`;
    row.querySelector('.status').textContent = ev.status + (ev.executed ? '' : ' (not run)');
  },
  'loop.run_finished'(ev) {
    $('outcome').textContent = `${ev.outcome}: ${ev.reason}`;
    $('outcome').className = ev.outcome === 'COMPLETED' ? 'ok' : 'bad';
  },
  call_ended() {
    setStatus('call ended');
  },
};

function toolRow(callId) {
  let row = document.getElementById(`call-${callId}`);
  if (!row) {
    row = document.createElement('tr');
    row.id = `call-${callId}`;
    for (const cls of ['name', 'verdict', 'status']) {
      const td = document.createElement('td');
      td.className = cls;
      row.append(td);
    }
    row.querySelector('.name').textContent = callId;
    $('tools').append(row);
  }
  return row;
}

const LATENCY_KEYS = ['endpointing', 'stt', 'llm_first_token', 'tts_first_audio', 'voice_to_voice'];

function renderTurn(turn) {
  let row = document.getElementById(`turn-${turn.index}`);
  if (!row) {
    row = document.createElement('tr');
    row.id = `turn-${turn.index}`;
    $('latency').append(row);
  }
  const lat = turn.latency_ms || {};
  const cells = [String(turn.index + 1), ...LATENCY_KEYS.map((k) => (k in lat ? `${Math.round(lat[k])}` : '–'))];
  cells.push(turn.outcome || '…');
  row.replaceChildren(...cells.map((c) => Object.assign(document.createElement('td'), { textContent: c })));
}

function apiUrl(path, token) {
  // relative to the page (it may be mounted under a prefix); the API takes this call's own token as ?token=
  const url = new URL(`api/${path}`, location.href);
  url.search = `?token=${encodeURIComponent(token)}`;
  return url.href;
}

function renderStats() {
  const s = vl.stats;
  $('stats').textContent =
    `mic ${(s.micFrames * 0.02).toFixed(1)} s · agent received ${(s.received / 16000).toFixed(1)} s, ` +
    `played ${(s.played / 16000).toFixed(1)} s, flushed ${(s.flushed / 16000).toFixed(2)} s ` +
    `(${s.clears} clear${s.clears === 1 ? '' : 's'}, ${s.underruns} underruns)`;
}

// ---- controls ------------------------------------------------------------------------------

async function startCall() {
  const token = $('token').value.trim();
  vl.token = token;
  if (!token) {
    setStatus('a token is required (?token=… in the address, or paste it)', 'bad');
    return;
  }
  $('start').disabled = true;
  try {
    await startAudio(); // first, while the click still counts as a user gesture for the audio context
  } catch (e) {
    setStatus(`microphone unavailable: ${e.message || e}`, 'bad');
    $('start').disabled = false;
    return;
  }
  vl.callId = null;
  vl.hungUp = false;
  $('hangup').disabled = false;
  await placeCall(0);
}

function hangup() {
  vl.hungUp = true;
  if (vl.retryTimer !== null && !vl.callId) {
    clearTimeout(vl.retryTimer); // waiting to try again: there is no call to hang up, only the wait
    vl.retryTimer = null;
    setStatus('call cancelled');
    endCall();
    return;
  }
  send({ type: 'hangup' });
  $('hangup').disabled = true;
}

window.addEventListener('DOMContentLoaded', () => {
  const params = new URLSearchParams(location.search);
  $('token').value = params.get('token') || '';
  if (params.has('token')) history.replaceState(null, '', location.pathname); // keep it out of the address bar
  $('start').addEventListener('click', startCall);
  $('hangup').addEventListener('click', hangup);
  renderStats();
  setInterval(renderStats, 500);
});
