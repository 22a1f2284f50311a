"""Abuse cases against a real `voiceloop serve` subprocess (issue 11): each reproduces an attack from outside,
checks the fixed behaviour, and then places a normal call that must still succeed."""
