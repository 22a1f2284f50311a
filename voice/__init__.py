"""voiceloop's voice side: audio in, user turns to the loop, streamed speech out."""
