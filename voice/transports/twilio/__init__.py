"""Twilio Media Streams: the wire codec (`codec`, sans-I/O), the endpoint that runs a call on it
(`endpoint`) and the webhook's TwiML and signature check (`webhook`).
"""
