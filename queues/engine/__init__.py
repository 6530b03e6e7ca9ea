"""The fair-share engine: pure Python, no Django, deterministic.

Used alike by the Celery admission pass, the ``simulate`` command and the playground.

Modules (see ``README.md`` next to this file for the rules they implement):

* ``types``: the frozen snapshot going in and the decisions (``Plan``) coming out.
* ``usage``: KEP-4136 decay, entry penalty, scores; KAI windowed usage.
* ``accounting``: node paths, admitted usage per node, sampling every node, penalties.
* ``quota``: the quota tree (nominal, borrowing and lending limits, cohort-owned quota) and
  flavor assignment.
* ``scopes``: which admission mode orders whom.
* ``ranking``: dominant share (allocation over capacity, and Kueue's borrowing over lendable),
  weighted scores with their weight-0 tie-break, and the TimeAware allocation / fair-share ratio.
* ``fairshare``: TimeAware fair shares, level by level.
* ``candidates``: pending workloads grouped per LocalQueue and class.
* ``preemption``: victim search and who may preempt whom (``preemption_rules``: within the
  ClusterQueue, ExceedWeight, reclaim, TimeAware reclaim, namespace quota).
* ``planner``: ``plan(snapshot, now) -> Plan``, one admission pass; its parts: ``pass_state``
  (per-pass bookkeeping), ``fair_tree`` (ranking), ``scoring`` (scores per mode),
  ``preemption_rules`` (who may be preempted).
* ``reasons``: the sentences of pending reasons and evictions.
* ``scenario``: scenario files and ``--set`` edits; ``simulator``: discrete-event runs;
  ``cli``: ``simulate FILE [--format json|table] [--set path=value ...]``.
* ``errors``, ``quantities``, ``durations``, ``policy``, ``calendar`` (monthly renewal): shared
  foundations.
"""
