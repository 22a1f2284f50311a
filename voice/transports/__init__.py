"""Transports: move caller audio into a CallSession and agent audio out, and report what was played."""


class Drop(Exception):
    """End the connection with this WebSocket close code and reason."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code, self.reason = code, reason
