"""`python -m voice.cli`: the same as the `voiceloop` command."""

import sys

from voice.cli import main

sys.exit(main())
