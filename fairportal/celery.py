"""The Celery application; the beat schedule comes from the fair-sharing configuration."""

import os
from typing import Any

from celery import Celery
from celery.signals import worker_init

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
