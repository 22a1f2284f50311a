"""Model backends, each a `loop.types.Model`: `scripted` (plays a script), `test` (needs no script),
`openai` (any OpenAI-compatible server) and `llama` (the embedded llama.cpp model). A new backend is one module here.
"""
