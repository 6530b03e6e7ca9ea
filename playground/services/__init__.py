"""Writes of the playground: scenarios, runs (and their worker side), applying a run's edits."""
