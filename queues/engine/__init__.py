"""The fair-share engine: pure Python, no Django, deterministic.

Used alike by the Celery admission pass, the ``simulate`` command and the playground.
"""
