"""The control loop's worker processes, the Procfile's ``worker``: ``python -m fairportal.control_workers``.

It starts ``CONTROL_LOOP_PROCESSES`` Celery workers, one per shard ``i``::

    python -m celery -A fairportal worker --pool=solo --queues celery,control.<i>[,...] --hostname control-<i>@%h [ARGS]

Each consumes its shard queue (the admission passes of the units routed there:
``fairportal.schedule.ControlRouter``) and the control queue ``celery`` (usage samples, cluster
sync, budgets, the heartbeat: whichever process is free). The solo pool runs a task in the process
that took it, so a unit's passes always run in the same process and reuse what its previous pass
read (``queues.admission.load``). Extra arguments go to every worker (``--loglevel=INFO``); the
pool, queues, hostname and concurrency are this module's to set.

Supervision, kept small: SIGTERM or SIGINT is passed to every worker as SIGTERM (Celery's warm
shutdown: a running pass finishes) and this process exits once they have. A worker that dies is
started again after a second (the next pass of each of its units is cold: it reads everything
once); one that dies within ``STARTUP_SECONDS`` of its start (bad settings, no broker) stops the
others and ends the role with its exit status, for the service manager to report. Workers get
SIGTERM if this process dies (Linux ``PR_SET_PDEATHSIG``).

Metrics: the workers observe the control loop's instruments (``queues.metrics``). With
``PROMETHEUS_MULTIPROC_DIR`` set (every shipped layout sets it) they write them to that shared
directory, which this launcher checks at start (a one-line error, exit 2) but never empties: what
starts every process of the host does (``queues.multiprocess``). A worker that exits keeps its
counts there; ``process_exited`` does the rest of its bookkeeping.
"""

from __future__ import annotations

import ctypes
import logging
import logging.config
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from types import FrameType

from fairportal.schedule import CONTROL_QUEUE, MAX_CONTROL_PROCESSES, shard_queue
from queues import multiprocess

logger = logging.getLogger("fairportal.control_workers")

STARTUP_SECONDS = 10.0
RESTART_DELAY_SECONDS = 1.0
RESERVED_OPTIONS = ("-P", "--pool", "-Q", "--queues", "-n", "--hostname", "-c", "--concurrency", "--autoscale")


def worker_command(shard: int, processes: int, extra: Sequence[str] = ()) -> list[str]:
    """The command line of shard ``shard``'s worker (of ``processes``). Besides ``control.<shard>``
    it consumes every shard queue above the processes that falls to it (``control.<shard + k *
    processes>``, up to MAX_CONTROL_PROCESSES): a sender configured with more processes than the
    workers still has each of its queues consumed, by one process per queue."""
    queues = [shard_queue(index) for index in range(shard, MAX_CONTROL_PROCESSES, processes)]
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "fairportal",
        "worker",
        "--pool=solo",
        f"--queues={','.join([CONTROL_QUEUE, *queues])}",
        f"--hostname=control-{shard}@%h",
        *extra,
    ]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _reserved(extra: Sequence[str]) -> str | None:
    for arg in extra:
        name = arg.split("=", 1)[0]
        if name in RESERVED_OPTIONS or (name[:2] in {"-P", "-Q", "-n", "-c"} and not name.startswith("--")):
            return name
    return None


class Supervisor:
    def __init__(self, processes: int, extra: Sequence[str]) -> None:
        self.processes = processes
        self.extra = list(extra)
        self.children: dict[int, tuple[int, subprocess.Popen[bytes], float]] = {}  # pid -> (shard, popen, started)
        self.stopping = False

    def start(self, shard: int) -> None:
        child = subprocess.Popen(worker_command(shard, self.processes, self.extra), preexec_fn=_die_with_parent)
        self.children[child.pid] = (shard, child, time.monotonic())

    def stop(self, signum: int = signal.SIGTERM, _frame: FrameType | None = None) -> None:
        self.stopping = True
        for _shard, child, _started in self.children.values():
            if child.returncode is None:
                child.send_signal(signal.SIGTERM)

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        for shard in range(self.processes):
            self.start(shard)
        status = 0
        while self.children:
            try:
                pid, raw = os.wait()
            except ChildProcessError:
                break
            if pid not in self.children:
                continue
            shard, child, started = self.children.pop(pid)
            child.returncode = code = os.waitstatus_to_exitcode(raw)
            multiprocess.process_exited(pid)
            if self.stopping:
                continue
            if time.monotonic() - started < STARTUP_SECONDS:
                logger.error("control worker %d exited with %d at start: stopping the control loop", shard, code)
                status = code if code > 0 else 1
                self.stop()
                continue
            logger.warning("control worker %d exited with %d: starting it again", shard, code)
            time.sleep(RESTART_DELAY_SECONDS)
            if not self.stopping:
                self.start(shard)
        return status


def main(argv: Sequence[str]) -> int:
    reserved = _reserved(argv)
    if reserved is not None:
        print(
            f"control_workers: {reserved} is set per process (one solo worker per shard; "
            "CONTROL_LOOP_PROCESSES sets how many)",
            file=sys.stderr,
        )
        return 2
    problem = multiprocess.problem()
    if problem:
        print(f"control_workers: {problem}", file=sys.stderr)
        return 2
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)  # the format every process logs in (LOG_FORMAT)
    return Supervisor(settings.CONTROL_LOOP_PROCESSES, argv).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
