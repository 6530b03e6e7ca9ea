"""One admission pass, ``plan(snapshot, now) -> Plan`` (``planner``), and its parts: pending
workloads per LocalQueue and class (``candidates``), per-pass bookkeeping (``pass_state``),
dominant share and weighted scores (``ranking``), TimeAware fair shares (``time_aware``), scores
per admission mode (``scoring``), the fair tree (``fair_tree``), who may be preempted
(``preemption_rules``) and the sentences of pending reasons and evictions (``reasons``)."""
