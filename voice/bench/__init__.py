"""Measurements: `voiceloop bench voice` (scripted calls on the wall clock: `voice`, `voice_scripts`,
`voice_report`), `voiceloop bench load` (simulated phone callers against a server: `load`, `load_servers`,
`load_caller`, `load_report`, `llm_standin`), the spoken-reply evaluation (`reply_eval`) and word error rate (`wer`).
"""
