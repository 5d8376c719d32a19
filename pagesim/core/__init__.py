"""Layer 0: sizes and their units, argument checks and warnings, atomic file writes, progress bars,
the version, the processes a command started. Imports nothing of pagesim."""
