"""``python -m imperiale_cli``: the ``imperiale`` command."""

from .cli import main

raise SystemExit(main())
