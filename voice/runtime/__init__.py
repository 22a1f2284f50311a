"""The runtime: drivers that carry out the call core's commands with real engines, the agent and a clock.

`drivers` (virtual clock for tests, real time for calls), `session` (one call), `speculation` and `priming` (work
started while the caller still speaks), `speech_first` (a tool's own words said before the model's).
"""
