"""The playground's services: the writes (scenarios, runs and their worker side, applying a run's
edits), the what-if lane (cap, reaper, retention), single simulations, and the estimated-start
replay (read-only, cached)."""
