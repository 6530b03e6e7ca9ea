"""Preemption: the smallest set of victims that lets a preemptor fit, and who may preempt whom
by priority (``preemption``). Which running workloads an admission pass offers as victims is the
pass's business (``admission.preemption_rules``)."""
