"""Agents built on voiceloop the way a user builds one, in other domains than the demo order desk (which ships in
the wheel as `voice.demo`): `appointments`, `outage_line`, `garage`, `hotel` and,
in Spanish, `farmacia`. They stay in the repository."""
