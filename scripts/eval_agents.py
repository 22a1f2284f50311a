"""Agents written from short briefs by outside hands, and their callers (evals/agents/, README there).

    python scripts/eval_agents.py build            # synthesise every caller line, write the call scripts
    python scripts/eval_agents.py run [--half dev|test|all] [--agent NAME] [--llm local] [--stt tiny.en|oracle]
    python scripts/eval_agents.py stt [--half dev|test|all] [--stt tiny.en base ...]   # word errors vs time

`build` turns each agent's `calls.yaml` (lines the caller says, what must happen) into voiceloop call scripts under
evals/.build/<agent>/ (not in git): each line spoken by one of nine voices of three synthesisers (espeak-ng,
flite, Piper), chosen per call by a stable hash; a third of the calls over a telephone line (8 kHz G.711 μ-law and
back), a fifth in background noise (the recordings in audio_fixtures/recordings/noise, 10 dB SNR); each call in
the development or the test half by a stable hash of its name. `run` plays them on the virtual clock with the real
model and prints each call's verdict and the figures per agent; a call with no expectation is "unchecked", never
"passed". Progress goes to stderr; the verdicts to evals/.build/results-<half>.tsv.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ROOT / "evals" / "agents"
BUILD = ROOT / "evals" / ".build"
NOISES = ["bike.wav", "dishes.wav", "office.wav"]
# nine voices, three synthesisers; Piper's joe is also the agent's own voice, so callers get it least
VOICES = ["espeak:en-us+f3", "espeak:en-gb+m4", "espeak:en-us+m7", "espeak:en-gb-scotland+f2", "flite:kal",
          "flite:slt", "flite:rms", "flite:awb", "piper:joe"]
# an agent in another language: callers in espeak-ng's voices for it (flite and the Piper voice speak English only)
VOICES_FOR = {"es": ["espeak:es", "espeak:es+f3", "espeak:es-419", "espeak:es-419+f2", "espeak:es+m4",
                     "espeak:es-419+m3"]}
FIRST_AT, GAP_S = 3.5, 9.0  # the first line after the greeting; later lines this long after the one before ends


def _hash(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


def half_of(agent: str, call: str) -> str:
    return "dev" if _hash(f"{agent}/{call}") % 2 == 0 else "test"


def _synth(voice: str, text: str, out: Path) -> np.ndarray:
    from voice.audio import load_audio

    engine, name = voice.split(":", 1)
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "line.wav"
        if engine == "espeak":
            subprocess.run(["espeak-ng", "-v", name, "-s", "150", "-w", str(wav), text], check=True)
        elif engine == "flite":
            subprocess.run(["flite", "-voice", name, "-t", text, "-o", str(wav)], check=True)
        else:
            return _piper(text)
        return load_audio(wav)


_PIPER: Any = None


def _piper(text: str) -> np.ndarray:
    global _PIPER
    from voice.speech.tts import PiperTTS

    _PIPER = _PIPER or PiperTTS()
    return _PIPER.synthesize(text)


def _telephone(pcm: np.ndarray) -> np.ndarray:
    """Through a phone line: 8 kHz, G.711 μ-law, and back to 16 kHz."""
    from voice.audio import resample, ulaw_decode, ulaw_encode

    narrow = resample(pcm, 16000, 8000)
    return resample(ulaw_decode(ulaw_encode(narrow)), 8000, 16000)


def _language(agent_dir: Path, ref: str) -> str:
    """The language an agent declares (an agent file's `language:`, or the one its factory's agent is built with),
    which its callers speak."""
    from voice.agents.source import load_agent

    return load_agent(ref, agent_dir).language


def build(agent: str | None = None) -> None:
    from voice.audio import write_wav

    for spec_path in sorted(AGENTS.glob(f"{agent or '*'}/calls.yaml")):
        agent_dir, spec = spec_path.parent, yaml.safe_load(spec_path.read_text())
        out = BUILD / agent_dir.name
        (out / "audio").mkdir(parents=True, exist_ok=True)
        voices = VOICES_FOR.get(_language(agent_dir, spec["agent"]), VOICES)
        for call in spec["calls"]:
            h = _hash(f"{agent_dir.name}/{call['name']}")
            voice, phone, noisy = voices[h % len(voices)], h % 3 == 0, (h // 3) % 5 == 0
            caller, at = [], FIRST_AT
            for i, line in enumerate(call["lines"]):
                pcm = _synth(voice, line, out)
                pcm = _telephone(pcm) if phone else pcm
                name = f"audio/{call['name']}_{i}.wav"
                write_wav(out / name, pcm)
                caller.append({"audio": name, "at": round(at, 2)})
                at += len(pcm) / 16000 + GAP_S
            script = {"description": f"{call['name']} ({voice}{', telephone' if phone else ''}"
                                     f"{', noise' if noisy else ''}; synthetic)",
                      "agent": str((agent_dir / spec["agent"]).resolve()) if ":" not in spec["agent"]
                      else f"{(agent_dir / spec['agent'].split(':')[0]).resolve()}:{spec['agent'].split(':')[1]}",
                      "caller": caller, "tail_s": GAP_S,
                      "x-eval": {"lines": call["lines"], "half": half_of(agent_dir.name, call["name"]),
                                 "voice": voice, "telephone": phone}}
            if noisy:
                script["noise"] = {"audio": str(ROOT / "audio_fixtures/recordings/noise" / NOISES[h % 3]),
                                   "snr_db": 10}
            expect = call.get("expect") or {}
            if expect.get("calls") or expect.get("not_called"):
                script["expect_llm"] = {k: expect[k] for k in ("calls", "not_called") if k in expect}
            if expect.get("says") or expect.get("never"):
                script["reply"] = {"contains": expect.get("says", []), "never": expect.get("never", [])}
            (out / f"{call['name']}.yaml").write_text(yaml.safe_dump(script, sort_keys=False))
            print(f"built {agent_dir.name}/{call['name']} ({voice})", file=sys.stderr)


def _padded_variant(stt: str) -> str:
    """`tiny.en@20`: the engine `tiny.en` with its input padded to at least 20 s (`WhisperSTT(min_window_s=...)`),
    registered for this run, to measure what the padding does to a call."""
    from voice.speech.engines import STT_ENGINES

    name, _, seconds = stt.partition("@")
    if seconds and stt not in STT_ENGINES.specs:
        spec = STT_ENGINES.spec(name)
        STT_ENGINES.add(stt, spec.target, f"{spec.about}, padded to {seconds} s", **spec.options,
                        min_window_s=float(seconds))
    return stt


async def _run(calls: list[Path], llm: str, stt: str, keep: Path | None) -> list[tuple[str, str, str, str]]:
    from voice.cli import _model_for
    from voice.speech.stack import load_stack
    from voice.testing.reply_checks import said_in_call
    from voice.testing.scripted_call import Fixture, run_call, write_outputs

    language = Fixture.load(calls[0]).agent_source().language if calls else "en"  # a set's agents share one
    stack = load_stack("tiny.en" if stt == "oracle" else _padded_variant(stt), tts="auto", language=language)
    if oracle := stt == "oracle":  # perfect hearing: what the product does with the right words
        from _oracle_stt import OracleSTT

        stack.stt = OracleSTT(stack.stt)
    model = _model_for(llm, has_script=False)
    rows = []
    for i, path in enumerate(calls, 1):
        fixture = Fixture.load(path)
        checked = bool(fixture.data.get("expect_llm") or fixture.data.get("reply"))
        if oracle:
            stack.stt.set_call(fixture.caller_audio(), _spans(fixture))
        with tempfile.TemporaryDirectory() as tmp:
            try:
                result = await run_call(fixture, stack, Path(tmp), model=model, agent=fixture.agent_source())
                fails = result.failures + said_in_call(fixture.data.get("reply"), result.trace)
                verdict = "unchecked" if not checked else "pass" if not fails else "FAIL"
                why = "; ".join(fails)[:400]
                if keep:
                    write_outputs(result, keep / path.parent.name / path.stem)
            except Exception as exc:  # a call that cannot run is a failed call, and the run goes on
                verdict, why = "FAIL", f"{type(exc).__name__}: {exc}"[:400]
        rows.append((path.parent.name, path.stem, verdict, why))
        print(f"[{i}/{len(calls)}] {path.parent.name}/{path.stem}: {verdict} {why}", file=sys.stderr)
    return rows


def _spans(fixture: Any) -> list[tuple[int, int, str]]:
    """Where each caller line's speech lies in the call's track (samples), with its words."""
    from voice.audio import load_audio

    spans = []
    for u, text in zip(fixture.data["caller"], fixture.data["x-eval"]["lines"], strict=True):
        loud = np.flatnonzero(np.abs(load_audio(fixture.audio_path(u["audio"])).astype(np.int32)) > 500)
        at = int(u["at"] * 16000)
        spans.append((at + int(loud[0]), at + int(loud[-1]), text) if len(loud) else (at, at, text))
    return spans


def _calls(half: str, agent: str | None = None) -> list[Path]:
    return [p for p in sorted(BUILD.glob(f"{agent or '*'}/*.yaml"))
            if half == "all" or yaml.safe_load(p.read_text())["x-eval"]["half"] == half]


def run(half: str, agent: str | None, llm: str, stt: str, keep: Path | None = None) -> None:
    rows = asyncio.run(_run(_calls(half, agent), llm, stt, keep))
    (BUILD / f"results-{half}-{stt}.tsv").write_text("".join("\t".join(r) + "\n" for r in rows))
    by_agent: dict[str, list[str]] = {}
    for name, _, verdict, _ in rows:
        by_agent.setdefault(name, []).append(verdict)
    for name, verdicts in sorted(by_agent.items()):
        print(f"{name:16} {verdicts.count('pass')}/{len(verdicts) - verdicts.count('unchecked')} right"
              f" ({verdicts.count('unchecked')} unchecked)")
    right = sum(r[2] == "pass" for r in rows)
    checked = sum(r[2] != "unchecked" for r in rows)
    print(f"all {half}: {right}/{checked} calls right ({right / max(checked, 1):.0%}); "
          f"{len(rows) - checked} unchecked")


def _heard_lines(half: str) -> list[tuple[np.ndarray, str, tuple[str, ...], str]]:
    """Every caller line of the half as its call hears it (the line's span of the caller's track: noise
    included), with the agent's vocabulary (what the call biases speech-to-text towards) and language (what its
    words are compared in)."""
    from loop import TestModel
    from voice.audio import SAMPLE_RATE, load_audio
    from voice.speech.vocabulary import agent_vocabulary
    from voice.testing.scripted_call import Fixture

    lines, vocabularies, languages = [], {}, {}
    for path in _calls(half):
        fixture = Fixture.load(path)
        if path.parent.name not in vocabularies:
            with tempfile.TemporaryDirectory() as tmp:
                agent = fixture.agent_source().maker(tmp, lambda _id: TestModel())("stt")
                vocabularies[path.parent.name] = agent_vocabulary(agent)
                languages[path.parent.name] = agent.language
        track = fixture.caller_audio()
        for said, text in zip(fixture.data["caller"], fixture.data["x-eval"]["lines"], strict=True):
            start = int(float(said["at"]) * SAMPLE_RATE)
            end = start + len(load_audio(path.parent / said["audio"]))
            lines.append((track[start:end], text, vocabularies[path.parent.name], languages[path.parent.name]))
    return lines


def stt_compare(half: str, engines: list[str], vocabulary: bool = True) -> None:
    """Each engine's word errors over every caller line of the half as the calls hear it (noise, the agent's
    vocabulary unless `vocabulary` is off): all words; digits and the words of names and things, which the tools
    need; and its time per line, on this machine. Words are compared in the language of the line's agent (the
    Spanish set's in Spanish: its number words, its spelling of numbers)."""
    import time

    from loop import locale
    from voice.bench.wer import normalize_words, word_errors
    from voice.speech.engines import STT_ENGINES, EngineConfigError, transcribe_with

    lines = _heard_lines(half)
    print(f"{len(lines)} caller lines ({half} half, vocabulary {'on' if vocabulary else 'off'})", file=sys.stderr)
    for name in engines:
        # one engine per language of the lines: Whisper is told it, as the calls tell it (load_stack)
        try:
            loaded = {language: STT_ENGINES.load(_padded_variant(name), threads=1, language=language)
                      for language in dict.fromkeys(line[3] for line in lines)}
        except EngineConfigError as exc:  # tiny.en for Spanish callers: it hears English only
            print(f"{name:10} skipped: {exc}")
            continue
        loaded[lines[0][3]].transcribe(lines[0][0])  # warm
        errors = words = key_errors = key_words = 0
        took = []
        for i, (pcm, text, terms, language) in enumerate(lines, 1):
            started = time.perf_counter()
            heard = transcribe_with(loaded[language], pcm, terms if vocabulary else ())
            took.append(time.perf_counter() - started)
            pack = locale.get(language)
            found = word_errors(text, heard, words=pack)
            errors, words = errors + found.errors, words + found.reference_words
            hyp = set(normalize_words(heard, words=pack))
            key = [w for w in normalize_words(text, words=pack) if _is_key(w, text, pack)]
            key_words += len(key)
            key_errors += sum(w not in hyp for w in key)
            if i % 20 == 0:
                print(f"  {name}: {i}/{len(lines)} lines", file=sys.stderr)
        took.sort()
        print(f"{name:10} WER {errors / max(words, 1):6.1%}   key words missed {key_errors}/{key_words} "
              f"({key_errors / max(key_words, 1):.1%})   per line p50 {took[len(took) // 2] * 1000:.0f} ms "
              f"p95 {took[int(len(took) * 0.95)] * 1000:.0f} ms")


def _is_key(word: str, text: str, pack: Any) -> bool:
    """A number word of the line's language (`pack`) or a capitalised word of the line (a name, a title, a street):
    what a tool needs heard."""
    from loop import locale

    said, plain = locale.number_words(pack), locale.unaccented(word)  # "dieciséis" is the pack's "dieciseis"
    if plain in said.units or plain in said.tens or plain in said.digits or plain in said.scales:
        return True
    said = text.replace(",", " ").replace(".", " ").split()
    return any(w.lower() == word and w[:1].isupper() for w in said[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    parser.add_argument("--set", default="agents", help="the agents under evals/SET (default: agents); a set but "
                        "the first builds into evals/.build-SET")
    b = sub.add_parser("build")
    b.add_argument("--agent")
    r = sub.add_parser("run")
    r.add_argument("--half", choices=["dev", "test", "all"], default="dev")
    r.add_argument("--agent")
    r.add_argument("--llm", default="local")
    r.add_argument("--stt", default="tiny.en", help="an engine, or `oracle`: the lines' own words (perfect hearing)")
    r.add_argument("--keep", type=Path, help="keep each call's transcript, trace and audio under this folder")
    c = sub.add_parser("stt")
    c.add_argument("--half", choices=["dev", "test", "all"], default="dev")
    c.add_argument("--stt", nargs="+", default=["tiny.en", "base"])
    c.add_argument("--no-vocabulary", action="store_true", help="transcribe without the agent's vocabulary")
    args = parser.parse_args()
    global AGENTS, BUILD
    if args.set != "agents":
        AGENTS, BUILD = ROOT / "evals" / args.set, ROOT / "evals" / f".build-{args.set}"
    if args.cmd == "build":
        build(args.agent)
    elif args.cmd == "stt":
        stt_compare(args.half, args.stt, not args.no_vocabulary)
    else:
        run(args.half, args.agent, args.llm, args.stt, args.keep)


if __name__ == "__main__":
    main()
