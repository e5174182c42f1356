"""The duplicate-deal tournament: match play (:mod:`.match`), its intervals and ratings
(:mod:`.stats`) and its Markdown report, matrix and files (:mod:`.report`)."""
