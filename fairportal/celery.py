"""The Celery application; the beat schedule comes from the fair-sharing configuration."""

import os
from typing import Any

from celery import Celery
from celery.signals import task_postrun, worker_init

from fairportal import process
from fairportal.schedule import CONTROL_QUEUE, MAX_CONTROL_PROCESSES, SHARD_QUEUE_PREFIX, shard_queues

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairportal.settings")

app = Celery("fairportal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def consume_every_shard_without_one(sender: Any, **_: Any) -> None:
    """A worker of the control queue ``celery`` that names no shard queue (the layout before unit
    affinity: ``celery -A fairportal worker --queues celery``) consumes every ``control.N`` queue
    too, so no admission pass waits for a consumer nobody runs (without affinity: any process,
    any unit; all MAX_CONTROL_PROCESSES of them, whatever the senders' CONTROL_LOOP_PROCESSES).
    The control processes of ``fairportal.control_workers`` name their shards."""
    queues = sender.app.amqp.queues
    consumed = set(queues.consume_from)
    if CONTROL_QUEUE in consumed and not any(name.startswith(SHARD_QUEUE_PREFIX) for name in consumed):
        for name in shard_queues(MAX_CONTROL_PROCESSES):
            queues.select_add(name)


@worker_init.connect
def schedule_full_collections_in_control_processes(sender: Any, **_: Any) -> None:
    """A worker that consumes a shard queue (a control process, after the handler above) runs its
    full garbage collections between tasks (``fairportal.process.schedule_full_collections``).
    Connected after ``consume_every_shard_without_one``, so it sees the queues that one added."""
    if any(name.startswith(SHARD_QUEUE_PREFIX) for name in sender.app.amqp.queues.consume_from):
        process.schedule_full_collections()


@task_postrun.connect
def collect_garbage_if_due(**_: Any) -> None:
    """After every task: the full collection, if this process schedules them and one is due."""
    process.collect_if_due()
