// voiceloop audio worklet: one processor does both directions.
//  - input 0 (the microphone, at the AudioContext's rate) is low-passed and resampled to 16 kHz mono,
//    cut into 20 ms int16 frames and posted to the page, which sends them over the WebSocket;
//  - output 0 plays the agent's 16 kHz int16 audio from a small jitter buffer, resampled to the
//    context's rate; what has actually been played is reported back (the playout cursor), and
//    a 'clear' message (barge-in) drops everything buffered at once.

const WIRE_RATE = 16000;
const FRAME = 320; // 20 ms at 16 kHz
const PHASES = 64;

// Streaming windowed-sinc resampler (Kaiser-like window), the same maths as voice/audio.py's fallback.
class Resampler {
  constructor(inRate, outRate) {
    this.step = inRate / outRate;
    const fc = Math.min(1, outRate / inRate) * 0.9; // cutoff as a fraction of the input Nyquist
    this.half = Math.ceil(8 / fc);
    const taps = 2 * this.half;
    this.table = [];
    for (let p = 0; p <= PHASES; p++) {
      const row = new Float32Array(taps);
      let sum = 0;
      for (let j = 0; j < taps; j++) {
        const d = p / PHASES + this.half - 1 - j;
        const x = fc * d;
        const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
        const w = 0.5 + 0.5 * Math.cos((Math.PI * d) / this.half); // Hann over the support
        row[j] = sinc * (Math.abs(d) < this.half ? w : 0);
        sum += row[j];
      }
      for (let j = 0; j < taps; j++) row[j] /= sum; // unity gain at DC for every phase
      this.table.push(row);
    }
    this.reset();
  }

  reset() {
    this.buf = new Float32Array(4096);
    this.len = this.half; // left context of zeros
    this.t = this.half;
  }

  // Feed input samples; returns the output samples now computable.
  push(input) {
    if (this.len + input.length > this.buf.length) {
      const bigger = new Float32Array(2 * (this.len + input.length));
      bigger.set(this.buf.subarray(0, this.len));
      this.buf = bigger;
    }
    this.buf.set(input, this.len);
    this.len += input.length;
    const out = [];
    const taps = 2 * this.half;
    while (Math.floor(this.t) + this.half < this.len) {
      let i0 = Math.floor(this.t);
      let p = Math.round((this.t - i0) * PHASES);
      const row = this.table[p];
      const start = i0 - this.half + 1;
      let acc = 0;
      for (let j = 0; j < taps; j++) acc += this.buf[start + j] * row[j];
      out.push(acc);
      this.t += this.step;
    }
    const keep = Math.floor(this.t) - this.half + 1; // drop input no longer needed
    if (keep > 0) {
      this.buf.copyWithin(0, keep, this.len);
      this.len -= keep;
      this.t -= keep;
    }
    return out;
  }
}

class VoiceloopProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const opts = (options && options.processorOptions) || {};
    this.down = new Resampler(sampleRate, WIRE_RATE);
    this.up = new Resampler(WIRE_RATE, sampleRate);
    this.frame = new Int16Array(FRAME);
    this.frameLen = 0;
    this.jitterTarget = Math.round(((opts.jitterMs || 60) * WIRE_RATE) / 1000);
    this.ackEvery = Math.round(((opts.ackMs || 40) * WIRE_RATE) / 1000);
    this.queue = []; // Float32Array chunks at 16 kHz, oldest first
    this.queueOffset = 0; // read position in queue[0]
    this.buffered = 0; // 16 kHz samples waiting in the jitter buffer
    this.fifo = []; // resampled output at the context rate, not yet rendered
    this.playing = false;
    this.idle = 0; // render frames since the last chunk arrived
    this.unacked = 0;
    this.epoch = 0;
    this.stats = { played: 0, received: 0, underruns: 0, flushed: 0, peak: 0 };
    this.port.onmessage = (ev) => this.onMessage(ev.data);
  }

  onMessage(msg) {
    if (msg.type === 'audio') {
      const pcm = new Int16Array(msg.pcm);
      const f = new Float32Array(pcm.length);
      for (let i = 0; i < pcm.length; i++) f[i] = pcm[i] / 32768;
      this.queue.push(f);
      this.buffered += f.length;
      this.stats.received += f.length;
      this.idle = 0;
    } else if (msg.type === 'clear') {
      this.reportPlayed(); // what was heard before the flush still belongs to the old epoch
      const dropped = this.buffered + Math.round(this.fifo.length / (sampleRate / WIRE_RATE));
      this.queue = [];
      this.queueOffset = 0;
      this.buffered = 0;
      this.fifo = [];
      this.up.reset();
      this.playing = false;
      this.epoch = msg.epoch;
      this.stats.flushed += dropped;
      this.port.postMessage({ type: 'cleared', dropped, epoch: this.epoch });
    }
  }

  // Take up to n samples (16 kHz) out of the jitter buffer.
  take(n) {
    const out = new Float32Array(Math.min(n, this.buffered));
    let filled = 0;
    while (filled < out.length) {
      const head = this.queue[0];
      const count = Math.min(head.length - this.queueOffset, out.length - filled);
      out.set(head.subarray(this.queueOffset, this.queueOffset + count), filled);
      filled += count;
      this.queueOffset += count;
      if (this.queueOffset >= head.length) {
        this.queue.shift();
        this.queueOffset = 0;
      }
    }
    this.buffered -= out.length;
    return out;
  }

  reportPlayed() {
    if (this.unacked > 0) {
      this.port.postMessage({ type: 'played', samples: this.unacked, epoch: this.epoch, stats: this.stats });
      this.unacked = 0;
    }
  }

  capture(input) {
    if (!input || input.length === 0) return;
    const ch = input[0];
    let peak = 0;
    for (let i = 0; i < ch.length; i++) peak = Math.max(peak, Math.abs(ch[i]));
    this.stats.peak = Math.max(this.stats.peak * 0.95, peak);
    for (const s of this.down.push(ch)) {
      this.frame[this.frameLen++] = Math.max(-32768, Math.min(32767, Math.round(s * 32768)));
      if (this.frameLen === FRAME) {
        const copy = this.frame.slice();
        this.port.postMessage({ type: 'mic', pcm: copy.buffer }, [copy.buffer]);
        this.frameLen = 0;
      }
    }
  }

  render(out) {
    const n = out.length;
    this.idle += n;
    const idleWire = (this.idle * WIRE_RATE) / sampleRate;
    if (!this.playing && this.buffered > 0 && (this.buffered >= this.jitterTarget || idleWire >= this.jitterTarget)) {
      this.playing = true; // enough to ride out jitter, or the reply's tail has arrived
    }
    while (this.playing && this.fifo.length < n && this.buffered > 0) {
      const chunk = this.take(64);
      this.unacked += chunk.length;
      this.stats.played += chunk.length;
      for (const s of this.up.push(chunk)) this.fifo.push(s);
    }
    const count = Math.min(n, this.fifo.length);
    for (let i = 0; i < count; i++) out[i] = this.fifo[i];
    out.fill(0, count);
    this.fifo.splice(0, count);
    if (this.playing && this.buffered === 0 && this.fifo.length === 0) {
      this.playing = false;
      if (idleWire < this.jitterTarget) this.stats.underruns += 1; // ran dry while audio was still arriving
    }
    if (this.unacked >= this.ackEvery || (!this.playing && this.unacked > 0)) this.reportPlayed();
  }

  process(inputs, outputs) {
    this.capture(inputs[0]);
    const out = outputs[0];
    if (out && out.length) {
      this.render(out[0]);
      for (let c = 1; c < out.length; c++) out[c].set(out[0]);
    }
    return true;
  }
}

registerProcessor('voiceloop', VoiceloopProcessor);
