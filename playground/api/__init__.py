"""The playground over the REST API: presets, scenarios, runs, comparison, results, apply."""
