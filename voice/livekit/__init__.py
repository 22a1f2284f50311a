"""voiceloop on LiveKit Agents: the turn loop as an `llm.LLM` (`llm`), the offline engines as plugins
(`plugins`), and the `voiceloop livekit` worker (`worker`).
"""
