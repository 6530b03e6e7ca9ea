"""The HTTP side: one session, a token, timeouts, bounded answers, and one-line errors.

Every failure becomes a ``CliError`` whose message is one line of bounded length, whatever the
server sent: the caller prints it and exits non-zero, never with a traceback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

MAX_ANSWER_BYTES = 32 * 1024 * 1024  # a simulation's result is the largest answer; 32 MiB is plenty
MAX_MESSAGE = 300  # characters of a server's error shown on the one error line
PAGE_SIZE = 500  # the API's largest page
USER_AGENT = "fairportal-cli/1"


class CliError(Exception):
    """A failure to report on one line; ``exit_code`` 2 for usage errors, 1 otherwise."""

    def __init__(self, message: str, exit_code: int = 1, *, status: int | None = None) -> None:
        super().__init__(one_line(message))
        self.exit_code = exit_code
        self.status = status  # the HTTP status that caused it, if any


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    """Control characters (newlines, escapes a hostile server might send) as spaces; at most ``limit``."""
    flat = _CONTROL.sub(" ", str(text)).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def check_server(url: str) -> str:
    """``http(s)://host[:port][/prefix]`` without credentials, query or fragment; ends with ``/``."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CliError(
            f"the server URL must start with http:// or https:// and name a host, got {one_line(url, 80)!r}", 2
        )
    if parts.username or parts.password or parts.query or parts.fragment:
        raise CliError(
            "the server URL must not carry credentials, a query or a fragment (the token goes in FAIRPORTAL_TOKEN)", 2
        )
    return url if url.endswith("/") else url + "/"


def _error_text(body: Any) -> str:
    """The API's error body as one short line: ``detail``, or ``field: problem`` pairs."""
    if isinstance(body, dict):
        if isinstance(body.get("detail"), str):
            return body["detail"]
        parts = []
        for key, value in list(body.items())[:5]:
            if isinstance(value, list):
                value = "; ".join(str(v) for v in value[:3])
            elif isinstance(value, dict):
                value = _error_text(value)
            parts.append(f"{key}: {value}")
        return ", ".join(parts)
    if isinstance(body, list):
        return "; ".join(str(item) for item in body[:3])
    return str(body)


class Client:
    """GET and POST against ``server`` (``http(s)://host:port/``) with ``Authorization: Token``."""

    def __init__(self, server: str, token: str, *, timeout: float = 30.0) -> None:
        self.server = check_server(server)
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers.update(
            {"Authorization": f"Token {token}", "Accept": "application/json", "User-Agent": USER_AGENT}
        )
        self.session.trust_env = False  # no proxy or netrc credentials picked up behind the user's back

    def url(self, path: str) -> str:
        return urljoin(self.server, path.lstrip("/"))

    def request(self, method: str, path: str, **kwargs: Any) -> tuple[int, dict[str, str], Any]:
        """The status, headers and decoded JSON body; raises ``CliError`` on 4xx/5xx or no answer."""
        url = path if path.startswith(("http://", "https://")) else self.url(path)
        if urlsplit(url).netloc != urlsplit(self.server).netloc:
            raise CliError("the server pointed elsewhere (a link to another host); refusing to follow it")
        try:
            response = self.session.request(
                method,
                url,
                timeout=(min(self.timeout, 10.0), self.timeout),
                stream=True,
                allow_redirects=False,
                **kwargs,
            )
            raw = self._read(response)
        except requests.exceptions.Timeout:
            raise CliError(
                f"{self.server} did not answer within {self.timeout:g} s (--timeout to wait longer)"
            ) from None
        except requests.exceptions.ConnectionError:
            raise CliError(
                f"cannot reach {self.server} (is the server running? check FAIRPORTAL or --server)"
            ) from None
        except requests.exceptions.RequestException as error:
            raise CliError(f"request to {self.server} failed: {type(error).__name__}") from None
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if response.status_code >= 400 or (300 <= response.status_code < 400):
            raise CliError(self._describe(response.status_code, body), status=response.status_code)
        if raw and body is None:
            raise CliError(f"{self.server} answered {response.status_code} without JSON: is it a fairportal server?")
        return response.status_code, dict(response.headers), body

    @staticmethod
    def _read(response: requests.Response) -> bytes:
        chunks, size = [], 0
        for chunk in response.iter_content(64 * 1024):
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                response.close()
                raise CliError(
                    f"the answer is larger than {MAX_ANSWER_BYTES // (1024 * 1024)} MiB; refusing to read it"
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def _describe(self, status: int, body: Any) -> str:
        detail = one_line(_error_text(body)) if body is not None else ""
        if status == 401:
            return f"the server refused the token (401{': ' + detail if detail else ''}); set FAIRPORTAL_TOKEN to a valid key"
        if status == 403:
            return f"not allowed (403): {detail or 'your role may not do this'}"
        if status == 404:
            return f"not found (404): {detail or 'no such object'}"
        if 300 <= status < 400:
            return f"the server answered a redirect ({status}); is FAIRPORTAL the server's base URL?"
        return f"the server answered {status}{': ' + detail if detail else ''}"

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=params)[2]

    def post(self, path: str, body: Any) -> tuple[int, dict[str, str], Any]:
        return self.request("POST", path, json=body)

    def pages(
        self, path: str, params: dict[str, Any] | None = None, *, limit: int
    ) -> Iterator[tuple[dict[str, Any], int]]:
        """Rows of a paged list, at most ``limit``, each with the list's total count."""
        query: dict[str, Any] | None = {**(params or {}), "page_size": min(PAGE_SIZE, max(limit, 1))}
        url: str | None = path
        given = 0
        while url is not None and given < limit:
            body = self.get(url, query)
            query = None  # the next link carries them
            if not isinstance(body, dict) or not isinstance(body.get("results"), list):
                raise CliError("the server's answer is not a list page: is it a fairportal server of this version?")
            for row in body["results"]:
                if given >= limit:
                    return
                given += 1
                yield row, int(body.get("count") or 0)
            url = self.same_server(body.get("next"))

    def same_server(self, link: Any) -> str | None:
        """A link the server gave (``next``, ``Location``) on the server we were told to use: its
        path and query only, so a proxy's host name in the link changes nothing."""
        if not isinstance(link, str) or not link:
            return None
        parts, base = urlsplit(link), urlsplit(self.server)
        return f"{base.scheme}://{base.netloc}{parts.path}" + (f"?{parts.query}" if parts.query else "")
