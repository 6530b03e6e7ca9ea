"""Usage: KEP-4136 decayed usage, entry penalty, scores and KAI windowed usage (``usage``);
node paths LocalQueue -> namespace -> ClusterQueue -> cohorts (``accounting``); time budgets'
arithmetic, written once for the live budgets and the simulator (``budgets``)."""
