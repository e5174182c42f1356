"""Game records (docs/records.md): writing, reading, checking and replaying them, for one game or
a batch, and the narration of what happened in words."""
