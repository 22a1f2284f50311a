"""Speech engines and text for the ear: VAD, speech-to-text, text-to-speech and the spoken form.

`engines` names every engine (the registry `--vad/--stt/--tts/--llm` choose from); `stack` loads one set;
`vad`, `stt` (with `incremental_stt`, `stt_batch`, `vocabulary`, `caller_digits`), `tts`, and `spoken` /
`spoken_en` (a reply rewritten for the ear). A new engine is one module here plus one line in `engines`.
"""
