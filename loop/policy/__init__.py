"""The controller's rules, pure: `rules` (Policy, verdicts, tightening), `config` (policy as data from an
agent file) and `guardrails` (checks of one proposed call against the conversation).
"""
