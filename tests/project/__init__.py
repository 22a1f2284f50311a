"""Tests of the project as a whole rather than of one module or package: the layering, packaging, the public API,
the documentation site, the README's quickstart, the outside agents in evals/, and several servers behind HAProxy.
Every other test sits in the folder that mirrors its code's (tests/voice/speech/ tests voice/speech/)."""
