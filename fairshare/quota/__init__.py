"""Quota: the quota tree (nominal, borrowing and lending limits, cohort-owned quota), fit and
flavor assignment (``quota``), and admission scopes, which mode orders whom (``scopes``)."""
