"""What a call leaves to read: its timeline from the trace (`timeline`, `timeline_html`) and its OpenTelemetry
spans and metrics (`otel`). The trace's entry kinds are `voice.trace`.
"""
