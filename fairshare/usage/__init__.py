"""Usage: KEP-4136 decayed usage, entry penalty, scores and KAI windowed usage (``usage``);
node paths, admitted usage per node, sampling and penalties over a snapshot (``accounting``);
time budgets' arithmetic, written once for the live budgets and the simulator (``budgets``)."""
