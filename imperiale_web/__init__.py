"""The card table in a web browser (``imperiale serve``): play a game against a bot, replay and analyse records.

A Flask application (:mod:`imperiale_web.app`) serving a static page (``static/``, plain HTML,
CSS and JavaScript: no build step, nothing fetched from outside the machine) and a small JSON
API.  The server keeps every game; the page shows what the person may see, and the bot acts
only from its own observation.
"""

DEFAULT_AGENTS = ("heuristic", "random", "pimc:16", "champion", "champion:search")
"""The opponents a page may choose unless ``imperiale serve --agents`` names others (here, beside no
import of Flask, so that the command line's help reads the same list)."""

