"""Hosting live calls, whatever carries them: the registry and factory of calls (`registry`), who may hold a socket
or a call slot (`admission`, `call_tokens`), the limits every transport honours (`config`), and escalations that
reach a person (`escalations`, `transfer`). Used by the server, its transports, the console and the LiveKit worker.
"""
