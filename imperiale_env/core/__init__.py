"""The game's core, shared by every engine: cards, rules, actions, tricks, declarations, score
events, seeded deals, the observation layout and the checks of user input. Imports nothing above it."""
