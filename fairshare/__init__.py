"""fairshare: a pure-Python fair-share admission engine (Kueue and KAI rules), deterministic.

No Django, no database, no clock of its own: a frozen ``Snapshot`` and a time go in, a ``Plan``
(admissions, evictions, pending reasons) comes out. fairportal's Celery admission pass, its
``simulate`` command and its playground all call it; so can anyone else. ``README.md`` next to
this file describes the rules, the API and the sub-packages:

* top level: the vocabulary (``types``), ``errors``, ``numbers``, ``durations``, ``quantities``,
  ``safe_yaml``, ``policy`` (the global fair-sharing configuration);
* ``quota``: the quota tree, fit and flavor assignment, admission scopes;
* ``usage``: KEP-4136 decay, entry penalty, KAI windowed usage, and accounting over a snapshot;
* ``preemption``: victim search and who may preempt whom by priority;
* ``admission``: one admission pass (``plan``) and its ordering: candidates, ranking, scoring,
  TimeAware fair shares, the fair tree, preemption rules, pending-reason sentences;
* ``simulation``: scenario files, the discrete-event simulator, monthly calendar, command line.

Sub-packages depend one way: ``simulation`` -> ``admission`` -> ``preemption`` -> ``usage`` ->
``quota`` -> the top-level modules (the import-linter contracts in ``pyproject.toml`` hold it).
"""

from fairshare.admission.planner import plan
from fairshare.errors import ValidationError
from fairshare.policy import FairSharingPolicy, UsageWindow
from fairshare.simulation.scenario import Scenario, load_scenario, parse_scenario
from fairshare.simulation.simulator import Simulation, simulate
from fairshare.types import (
    Admission,
    ClusterQueue,
    Cohort,
    Eviction,
    FlavorQuotas,
    Hold,
    LocalQueue,
    Namespace,
    PendingReason,
    Plan,
    PodSet,
    Preemption,
    ResourceQuota,
    Shortage,
    Snapshot,
    UsageState,
    Workload,
)

__all__ = [
    "Admission",
    "ClusterQueue",
    "Cohort",
    "Eviction",
    "FairSharingPolicy",
    "FlavorQuotas",
    "Hold",
    "LocalQueue",
    "Namespace",
    "PendingReason",
    "Plan",
    "PodSet",
    "Preemption",
    "ResourceQuota",
    "Scenario",
    "Shortage",
    "Simulation",
    "Snapshot",
    "UsageState",
    "UsageWindow",
    "ValidationError",
    "Workload",
    "load_scenario",
    "parse_scenario",
    "plan",
    "simulate",
]
