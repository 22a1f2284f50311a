"""Transports: move caller audio into a CallSession and agent audio out, and report what was played."""
