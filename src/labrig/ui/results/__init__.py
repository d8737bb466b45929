"""The Results screen: every attempt with its result status; the selected one's plots, metrics,
revised values and provenance; exporting it."""
