"""The ``imperiale`` command line and the terminal game: the top layer.

It sits above :mod:`imperiale_env` (the game and its environments), :mod:`agents` and
:mod:`train`, and imports them; nothing below imports it.  ``python -m imperiale_cli`` is the
``imperiale`` command.
"""
