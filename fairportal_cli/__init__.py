"""``fairportal``: a thin terminal client of fairportal's REST API (``bin/fairportal``).

The questions a Slurm admin asks with ``sshare``, ``sprio`` and ``squeue`` (and a Kueue admin
with ``kubectl get workloads`` or ``kueuectl list``), answered by a remote server: ``shares``,
``why``, ``budgets``, ``pending`` and ``simulate``. The standard library and ``requests`` only:
no Django, no module of the project (an import-linter contract in ``pyproject.toml``), so it runs
wherever Python does, against any fairportal it can reach. See docs/cli.md.
"""
