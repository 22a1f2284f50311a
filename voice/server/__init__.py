"""`voiceloop serve`: the ASGI app (`app`), its options (`args`, `config`), who may do what (`auth`,
`admission`, `call_tokens`), the live calls (`calls`), the operator API (`api`), escalations and transfers, drain and
settle on start. The WebSocket endpoints it mounts are in `voice.transports`.
"""
