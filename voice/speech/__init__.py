"""Speech engines and text for the ear: VAD, speech-to-text, text-to-speech and the spoken form.

`engines` names every engine (the registry `--vad/--stt/--tts/--llm` choose from); `stack` loads one set;
`vad`, `stt` (with `incremental_stt`, `stt_batch`, `vocabulary`, `caller_digits`), `tts`, and `spoken` (a reply
rewritten for the ear, by the rules of its language's pack, `loop.locale`). A new engine is one module here plus
one line in `engines`.
"""
