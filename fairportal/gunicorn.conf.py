"""gunicorn settings for ``make run`` and production (``gunicorn fairportal.wsgi -c fairportal/gunicorn.conf.py``).

Listens on ``BIND_ADDRESS:PORT`` (127.0.0.1:8000 by default: nothing outside this machine can
connect until you choose otherwise). A bad configuration stops the server with one line before
any worker starts, as does a ``PROMETHEUS_MULTIPROC_DIR`` that is no writable directory. The
server never empties that directory (what starts every process does: ``queues.multiprocess``);
``child_exit`` does the bookkeeping of a worker that exited.
"""

import os
import sys

bind = [f"{os.environ.get('BIND_ADDRESS', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"]
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("WEB_THREADS", "2"))
timeout = int(os.environ.get("WEB_TIMEOUT", "60"))
accesslog = "-"
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
wsgi_app = "fairportal.wsgi:application"


def on_starting(server):  # noqa: ANN001, ARG001 - gunicorn's hook signature
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairportal.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    try:
        settings.INSTALLED_APPS  # noqa: B018 - reading one setting loads and validates them all
    except ImproperlyConfigured as error:
        sys.stderr.write(f"error: {error}\n")
        sys.exit(2)
    from queues import multiprocess

    problem = multiprocess.problem()
    if problem:
        sys.stderr.write(f"error: {problem}\n")
        sys.exit(2)


def child_exit(server, worker):  # noqa: ANN001, ARG001 - gunicorn's hook signature
    from queues import multiprocess

    multiprocess.process_exited(worker.pid)
