"""A real OpenID Connect provider (the npm package ``oidc-provider``, run by node from
``oidc_provider.mjs``) on a free loopback port, and a ``requests`` walk through its login form."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path
from urllib.parse import urljoin

import requests

ROOT = Path(__file__).resolve().parents[2]
MODULE_DIR = ROOT / "var" / "oidc-node"
MODULE = MODULE_DIR / "node_modules" / "oidc-provider" / "lib" / "index.js"
SCRIPT = Path(__file__).with_name("oidc_provider.mjs")


def ensure_installed() -> None:
    """``make oidc-provider`` (the pinned version into var/oidc-node) when it is not there yet."""
    if not MODULE.exists():
        subprocess.run(["make", "-s", "oidc-provider"], cwd=ROOT, check=True, timeout=300)


@dataclass
class OIDCProvider:
    tmp: Path
    port: int
    redirect_uri: str
    client_id: str = "fairportal"
    client_secret: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    process: subprocess.Popen | None = None
    started_in: float = 0.0

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def set_users(self, users: dict[str, list[str]]) -> None:
        """Who exists and in which groups; the provider reads the file at each sign-in."""
        (self.tmp / "users.json").write_text(json.dumps({name: {"groups": groups} for name, groups in users.items()}))

    def start(self, timeout: float = 20.0) -> None:
        if shutil.which("node") is None:
            raise RuntimeError("node is missing (Debian: apt-get install nodejs)")
        ensure_installed()
        if not (self.tmp / "users.json").exists():
            self.set_users({})
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "OIDC_PROVIDER_MODULE": str(MODULE),
            "USERS_FILE": str(self.tmp / "users.json"),
            "ISSUER": self.issuer,
            "PORT": str(self.port),
            "CLIENT_ID": self.client_id,
            "CLIENT_SECRET": self.client_secret,
            "REDIRECT_URI": self.redirect_uri,
            "COOKIE_KEY": secrets.token_urlsafe(24),
        }
        began = time.monotonic()
        log = (self.tmp / "provider.log").open("wb")
        self.process = subprocess.Popen(["node", str(SCRIPT)], env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = began + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"the provider exited: {(self.tmp / 'provider.log').read_text()[-2000:]}")
            try:
                if requests.get(f"{self.issuer}/.well-known/openid-configuration", timeout=1).ok:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the provider did not answer on {self.issuer} within {timeout}s")
            time.sleep(0.1)
        self.started_in = time.monotonic() - began

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.process = None


def log_in_at_provider(session: requests.Session, response: requests.Response, login: str) -> requests.Response:
    """Fill in the provider's login form (``response`` is the page it showed) as ``login``, and
    follow the redirects back to the relying party's callback and on."""
    form = re.search(r'<form[^>]*action="([^"]+)"[^>]*>(.*?)</form>', response.text, re.S)
    assert form, f"no login form at {response.url}: {response.text[:300]}"
    fields = dict(re.findall(r'<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"', form.group(2)))
    fields.update({"login": login, "password": "any"})
    return session.post(urljoin(response.url, unescape(form.group(1))), data=fields, timeout=30)
