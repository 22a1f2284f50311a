"""The loop's measurements: `voiceloop bench loop` (`turn_cost`) and `voiceloop bench brain` (`brain`).
"""
