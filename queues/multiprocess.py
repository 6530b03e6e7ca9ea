"""The control loop's counters across processes: ``PROMETHEUS_MULTIPROC_DIR`` (no Django here, so
gunicorn's master and the control-worker launcher can import it before any app is loaded).

With ``PROMETHEUS_MULTIPROC_DIR`` set, every process writes its counters and histograms to files
in that directory (prometheus_client's multiprocess mode) and ``/metrics`` sums the files of all
of them (``queues.metrics.exposition``). The invariants:

* One directory shared by the web server and every worker process of one host (or one shared
  volume), emptied once per start of the whole set by whoever starts them all (``make run``, the
  ``fairportal-metrics`` systemd unit, compose's tmpfs volume), never by a process itself: a
  process that empties it would drop the counts of the processes already running.
* A file is named by its process's identifier, ``<host>-<pid>`` (``process_identifier``): the
  containers of one compose project share the volume but each has its own pid namespace, so a pid
  alone would let two processes write one file.
* A process that exits keeps its files: its counts stay in the sums, so the totals never go back
  (Prometheus reads a restart of the whole set, with the directory emptied, as a counter reset).
  ``process_exited`` drops what only a live process means (gauges in a ``live*`` mode; the
  control loop has none today); gunicorn's ``child_exit`` and the launcher call it.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from prometheus_client import values
from prometheus_client.multiprocess import mark_process_dead

ENV = "PROMETHEUS_MULTIPROC_DIR"
_HOST = socket.gethostname().replace("_", "-") or "host"


def directory() -> str:
    """The shared directory, or ``""`` when this process runs alone (single-process mode)."""
    return os.environ.get(ENV, "")


def process_identifier(pid: int | None = None) -> str:
    """This process's (or ``pid``'s, on this host) name in the directory's file names."""
    return f"{_HOST}-{os.getpid() if pid is None else pid}"


def install() -> None:
    """Name this process's files by ``process_identifier``: call before any instrument makes a
    value (``queues.metrics`` does, at import). Nothing without ``PROMETHEUS_MULTIPROC_DIR``."""
    if directory():
        values.ValueClass = values.MultiProcessValue(process_identifier)


def problem() -> str | None:
    """One line on what is wrong with ``PROMETHEUS_MULTIPROC_DIR``, if anything: it must name an
    existing directory this process can write. The web server and the launcher check it at start
    rather than fail a scrape or an admission pass later."""
    path = directory()
    if not path:
        return None
    if not Path(path).is_dir():
        return f"{ENV}={path[:200]!r} is not a directory: create it (emptied) before starting the processes"
    if not os.access(path, os.W_OK | os.X_OK):
        return f"{ENV}={path[:200]!r} is not writable by this user"
    return None


def process_exited(pid: int) -> None:
    """Bookkeeping for a process of this host that has exited (its live gauges go)."""
    path = directory()
    if path:
        mark_process_dead(process_identifier(pid), path)
