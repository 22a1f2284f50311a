"""The browser page's WebSocket: the wire codec (`codec`, sans-I/O) and the endpoint that runs a call on it
(`endpoint`). The page itself is `voice/web/`.
"""
