"""Outbound HTTP to admin-set URLs (budget webhooks), without reaching the inside of the site.

An admin types a URL; the worker later POSTs to it from inside the network. So:

* ``check_url`` (at save, from ``Model.clean``): http or https only, a host, no
  ``user:password@``, a valid port, and every address the host resolves to is a public one:
  not loopback, link-local (cloud metadata at 169.254.169.254), private, shared (100.64/10),
  multicast, unspecified, reserved, nor an IPv4 address mapped into IPv6. Networks listed in
  ``settings.WEBHOOK_ALLOWED_NETWORKS`` (CIDRs) are allowed anyway, for sites whose receivers
  are internal.
* ``post_json`` (at send) resolves again and checks again (the name may resolve elsewhere by
  now: DNS rebinding), then connects to the checked address itself - the Host header and, for
  https, the certificate check and SNI still use the name - so nothing re-resolves in between.
  Redirects are not followed (a 3xx is a failed delivery), and the answer's body is not read.
* Failures are ``OutboundError`` with a fixed sentence: never the resolver's or the socket's
  text, so a stored error cannot tell "connection refused" from "timed out" from "no TLS"
  (it was a port-scan oracle).
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
MAX_URL_CHARS = 2000
MAX_ADDRESSES = 16  # of one name; more than that is not a webhook receiver

NOT_ACCEPTED = "delivery failed: the receiver did not accept the connection"
NOT_ALLOWED = "delivery refused: the host resolves to an address webhooks may not reach"
NOT_RESOLVED = "delivery failed: the host name did not resolve"


class OutboundError(Exception):
    """A refused URL or a failed delivery; ``str()`` is a fixed sentence safe to store and show."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # as in the URL, for the Host header, SNI and the certificate
    port: int
    path: str  # path and query, what the request line carries


def allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(cidr, strict=False) for cidr in getattr(settings, "WEBHOOK_ALLOWED_NETWORKS", ())]


def address_allowed(address: IPAddress, networks: Iterable[ipaddress.IPv4Network | ipaddress.IPv6Network] = ()) -> bool:
    """Public addresses, or those inside one of ``networks`` (the site's allowlist)."""
    if any(address in network for network in networks):
        return True
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return False  # ::ffff:127.0.0.1 reaches 127.0.0.1
    return not (
        address.is_loopback
        or address.is_link_local
        or address.is_private
        or address.is_multicast
        or address.is_unspecified
        or address.is_reserved
        or not address.is_global
    )


def parse_target(url: str) -> Target:
    """The URL's parts, or ``OutboundError`` saying what is wrong with its form."""
    if not isinstance(url, str) or len(url) > MAX_URL_CHARS:
        raise OutboundError(f"at most {MAX_URL_CHARS} characters")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise OutboundError("not a valid URL (check the host and port)") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise OutboundError("only http:// and https:// URLs are allowed")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise OutboundError("must not contain a user name or password (user:password@host)")
    host = parts.hostname
    if not host:
        raise OutboundError("needs a host name")
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return Target(scheme, host, port or (443 if scheme == "https" else 80), path)


def resolve(target: Target) -> list[IPAddress]:
    """Every address the host resolves to, each checked; ``OutboundError`` when one is not allowed
    (all must pass: a resolver may answer with either)."""
    try:
        literal: IPAddress | None = ipaddress.ip_address(target.host)
    except ValueError:
        literal = None
    if literal is not None:
        found = [literal]
    else:
        try:
            infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            raise OutboundError(NOT_RESOLVED) from None
        found = []
        for info in infos[: MAX_ADDRESSES * 4]:
            address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
            if address not in found:
                found.append(address)
        if not found:
            raise OutboundError(NOT_RESOLVED)
    networks = allowed_networks()
    if not all(address_allowed(address, networks) for address in found):
        raise OutboundError(NOT_ALLOWED)
    return found[:MAX_ADDRESSES]


def check_url(url: str) -> None:
    """At save: the form and every resolved address (``OutboundError`` with the reason, worded
    for a form field: "the host resolves to an address webhooks may not reach")."""
    try:
        resolve(parse_target(url))
    except OutboundError as error:
        raise OutboundError(
            str(error).split(": ", 1)[-1] if str(error).startswith("delivery ") else str(error)
        ) from None


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to a checked address; the Host header still names the URL's host."""

    def __init__(self, address: IPAddress, host: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((str(self._address), self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """As above, with TLS verified against the URL's host name (SNI too)."""

    def __init__(self, address: IPAddress, host: str, port: int, timeout: float, context: ssl.SSLContext) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._address = address
        self._tls = context

    def connect(self) -> None:
        sock = socket.create_connection((str(self._address), self.port), self.timeout)
        try:
            self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise


def post_json(url: str, body: bytes, *, timeout: float, headers: dict[str, str] | None = None) -> int:
    """POST ``body`` once to the first checked address; returns the HTTP status (a redirect is
    returned as its 3xx, not followed). ``OutboundError`` (fixed text) when refused or failed."""
    target = parse_target(url)
    address = resolve(target)[0]
    connection: Any
    if target.scheme == "https":
        connection = _PinnedHTTPSConnection(address, target.host, target.port, timeout, ssl.create_default_context())
    else:
        connection = _PinnedHTTPConnection(address, target.host, target.port, timeout)
    try:
        connection.request("POST", target.path, body=body, headers=headers or {})
        response = connection.getresponse()
        return int(response.status)
    except (OSError, http.client.HTTPException, ValueError):
        raise OutboundError(NOT_ACCEPTED) from None
    finally:
        connection.close()
