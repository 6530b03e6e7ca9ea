"""The shared kernel every app builds on: access and redaction, the audit trail, tenancy, the API
base, bulk writes, task sending, downloads, throttling and API tokens. It sits below the apps:
nothing here imports ``queues`` (its pure engine aside), ``budgets`` or ``playground``; they
register what the kernel needs from them (visibility rules, API error answers)."""
