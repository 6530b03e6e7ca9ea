"""Usage: KEP-4136 decayed usage, entry penalty, scores and KAI windowed usage (``usage``);
node paths LocalQueue -> namespace -> ClusterQueue -> cohorts (``accounting``)."""
