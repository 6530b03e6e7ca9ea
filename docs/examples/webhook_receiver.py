"""A small receiver for fairportal's signed webhooks (Standard Webhooks), standard library only.

Run it with the endpoint's secret (shown once when the endpoint was created or rotated):

    WEBHOOK_SECRET=whsec_... python3 docs/examples/webhook_receiver.py --port 8787

It answers 204 to a message whose signature and timestamp check out and prints its JSON body as
one line on stdout; it answers 400 (and prints nothing) to anything else: a missing header, a
body or id that does not match the signature, a timestamp more than five minutes away. A message
whose ``webhook-id`` it has already accepted (a retry of a delivered message) is answered 204
again and not printed twice. docs/webhooks.md explains each step.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import sys
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE_SECONDS = 5 * 60
MAX_BODY_BYTES = 1024 * 1024


class InvalidWebhook(Exception):
    """The message is not from the holder of the secret, or not fresh."""


def verify(secret: str, headers: Mapping[str, str], body: bytes, *, now: float | None = None) -> dict:
    """The message's JSON body once its signature and timestamp are checked, or ``InvalidWebhook``.

    The signed content is ``<webhook-id>.<webhook-timestamp>.<body>``, the key is the secret's
    base64 part decoded, and ``webhook-signature`` holds one or more ``v1,<base64 HMAC-SHA256>``
    separated by spaces (several while fairportal rotates the secret): one must match.
    """
    message_id = headers.get("webhook-id", "")
    timestamp = headers.get("webhook-timestamp", "")
    signatures = headers.get("webhook-signature", "")
    if not (message_id and timestamp and signatures):
        raise InvalidWebhook("missing webhook-id, webhook-timestamp or webhook-signature")
    try:
        sent_at = int(timestamp)
    except ValueError:
        raise InvalidWebhook("webhook-timestamp is not a number of seconds") from None
    if abs((time.time() if now is None else now) - sent_at) > TOLERANCE_SECONDS:
        raise InvalidWebhook("webhook-timestamp is more than five minutes away: a replay, or a wrong clock")
    key = base64.b64decode(secret.removeprefix("whsec_"))
    expected = hmac.new(key, f"{message_id}.{sent_at}.".encode() + body, hashlib.sha256).digest()
    for signature in signatures.split(" "):
        version, _, value = signature.partition(",")
        if version != "v1":
            continue
        try:
            candidate = base64.b64decode(value, validate=True)
        except ValueError:
            continue
        if hmac.compare_digest(candidate, expected):
            return json.loads(body)
    raise InvalidWebhook("no signature matches")


def serve(secret: str, port: int, host: str = "127.0.0.1") -> None:
    seen: set[str] = set()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._answer(413)
                return
            body = self.rfile.read(length)
            headers = {name.lower(): value for name, value in self.headers.items()}
            try:
                event = verify(secret, headers, body)
            except (InvalidWebhook, ValueError) as error:
                print(f"refused: {error}", file=sys.stderr, flush=True)
                self._answer(400)
                return
            if headers["webhook-id"] not in seen:  # at-least-once delivery: handle each message once
                seen.add(headers["webhook-id"])
                print(json.dumps(event), flush=True)
            self._answer(204)

        def _answer(self, status: int) -> None:
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    print(f"listening on http://{host}:{server.server_address[1]}/", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Verify and print fairportal's signed webhooks.")
    parser.add_argument("--port", type=int, default=8787)
    parser.add_argument("--host", default="127.0.0.1")
    options = parser.parse_args()
    secret = os.environ.get("WEBHOOK_SECRET", "")
    if not secret.startswith("whsec_"):
        sys.exit("webhook_receiver: set WEBHOOK_SECRET to the endpoint's secret (whsec_...)")
    serve(secret, options.port, options.host)
