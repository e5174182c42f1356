"""``python -m imperiale_cli``: the ``imperiale`` command."""

from imperiale_cli.cli import main

raise SystemExit(main())
