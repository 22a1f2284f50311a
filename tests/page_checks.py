"""What a screenshot shows, checked in the page itself over CDP: what a live page showed over time (the state line,
the microphone meter, partial transcripts), and whether anything on it overlaps or is cut off."""

from __future__ import annotations

from typing import Any

from tests.cdp import Browser

# Records, from the page's own DOM, every state the state line showed, the meter's drawn width every 50 ms, and
# every partial transcript line's text.
WATCH_JS = """(() => {
  const seen = window.__seen = { states: [], levels: [], partials: [] };
  const state = document.getElementById('state');
  new MutationObserver(() => {
    const s = state.dataset.state;
    if (seen.states[seen.states.length - 1] !== s) seen.states.push(s);
  }).observe(state, { attributes: true, childList: true });
  const meter = document.getElementById('mic-meter'), level = document.getElementById('mic-level');
  setInterval(() => seen.levels.push(Math.round(100 * level.getBoundingClientRect().width
                                                / meter.getBoundingClientRect().width)), 50);
  new MutationObserver(() => {
    for (const p of document.querySelectorAll('#transcript .partial .text')) {
      if (p.textContent && seen.partials[seen.partials.length - 1] !== p.textContent) seen.partials.push(p.textContent);
    }
  }).observe(document.getElementById('transcript'), { subtree: true, childList: true, characterData: true });
  return true;
})()"""

# Every pair of visible sibling boxes that intersect (line boxes of inline elements compared one by one), every
# cell or label whose content spills out of it, a page wider than the window, and in SVG pictures: labels on top
# of each other, outside the picture, lane names running into the lanes, bar labels wider than their bar.
LAYOUT_JS = """(() => {
  const bad = [];
  const name = (e) => e.id ? '#' + e.id : e.tagName.toLowerCase()
    + (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\\s+/).join('.') : '');
  const boxes = (e) => [...e.getClientRects()].filter((r) => r.width > 0.5 && r.height > 0.5);
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  for (const parent of document.querySelectorAll('body, body :not(svg):not(svg *)')) {
    // a table's column boxes span its rows by design; an SVG's insides are checked below
    const kids = [...parent.children].filter((k) => !['COLGROUP', 'COL'].includes(k.tagName)
      && !(k.closest('svg') && k.tagName !== 'svg'));
    for (let i = 0; i < kids.length; i++) {
      for (let j = i + 1; j < kids.length; j++) {
        if (boxes(kids[i]).some((a) => boxes(kids[j]).some((b) => hit(a, b)))) {
          bad.push(`${name(kids[i])} overlaps ${name(kids[j])} in ${name(parent)}`);
        }
      }
    }
  }
  for (const e of document.querySelectorAll('td, th, button, h1, h2, .meta, .state, .line, .approval, code')) {
    if (boxes(e).length && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).display !== 'inline') {
      bad.push(`${name(e)} is cut off: content ${e.scrollWidth}px wide in ${e.clientWidth}px`);
    }
  }
  if (document.documentElement.scrollWidth > innerWidth + 1) bad.push('the page is wider than the window');
  for (const svg of document.querySelectorAll('svg:not(svg svg)')) {
    const frame = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')].filter((t) => t.getComputedTextLength() > 0);
    for (const t of texts) {
      const r = t.getBoundingClientRect();
      const holder = t.closest('svg.bar-label');
      if (holder && t.getComputedTextLength() + 3 > holder.width.baseVal.value) {
        bad.push(`bar label "${t.textContent}" is wider than its bar`);
      }
      if (r.left < frame.left - 0.5 || r.right > frame.right + 0.5
          || r.top < frame.top - 0.5 || r.bottom > frame.bottom + 0.5) {
        bad.push(`"${t.textContent}" runs outside its picture`);
      }
      if (t.classList.contains('lane-label')) {
        const start = frame.left + Number(svg.dataset.lanesFrom || 0);
        if (r.right > start) bad.push(`lane label "${t.textContent}" runs into the lanes`);
      }
    }
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        if (hit(texts[i].getBoundingClientRect(), texts[j].getBoundingClientRect())) {
          bad.push(`"${texts[i].textContent}" overlaps "${texts[j].textContent}"`);
        }
      }
    }
  }
  return bad;
})()"""


def watch(page: Browser) -> None:
    page.evaluate(WATCH_JS)


def seen(page: Browser) -> dict[str, Any]:
    return page.evaluate("JSON.parse(JSON.stringify(window.__seen))")


def layout_problems(page: Browser) -> list[str]:
    return page.evaluate(LAYOUT_JS)


def walks_through(states: list[str], order: list[str]) -> bool:
    """The states shown include `order` in that order (others may come between)."""
    it = iter(states)
    return all(any(s == wanted for s in it) for wanted in order)
