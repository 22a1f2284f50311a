"""Agents built on voiceloop the way a user builds one: `order_desk` (the demo) and `appointments`."""
