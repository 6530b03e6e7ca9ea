"""A real OpenLDAP ``slapd`` (Debian's package) for the sign-in tests: a throwaway mdb database
and slapd.conf in a temporary directory, a free loopback port, users and groups loaded with
``ldapadd``; stopped (and its files removed) afterwards. ``make slapd`` installs the package."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

SUFFIX = "dc=example,dc=org"
ROOT_DN = f"cn=admin,{SUFFIX}"
SERVICE_DN = f"cn=fairportal,ou=services,{SUFFIX}"
SLAPD = shutil.which("slapd") or "/usr/sbin/slapd"

CONFIG = """\
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/nis.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile {tmp}/slapd.pid
argsfile {tmp}/slapd.args
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 10485760
suffix "{suffix}"
rootdn "{root_dn}"
rootpw {root_pw}
directory {tmp}/db
access to attrs=userPassword by self read by anonymous auth by * none
access to * by users read by * none
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Slapd:
    tmp: Path
    port: int
    root_pw: str
    service_password: str = ""
    passwords: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = None
    started_in: float = 0.0

    @property
    def uri(self) -> str:
        return f"ldap://127.0.0.1:{self.port}/"

    def start(self, timeout: float = 15.0) -> None:
        if not Path(SLAPD).exists() or shutil.which("ldapadd") is None:
            raise RuntimeError("slapd or ldapadd is missing: `make slapd` installs Debian's slapd and ldap-utils")
        (self.tmp / "db").mkdir(parents=True)
        conf = self.tmp / "slapd.conf"
        conf.write_text(CONFIG.format(tmp=self.tmp, suffix=SUFFIX, root_dn=ROOT_DN, root_pw=self.root_pw))
        conf.chmod(0o600)
        began = time.monotonic()
        # -d 0: stay in the foreground (so the test owns the process), no debug output.
        self.process = subprocess.Popen(
            [SLAPD, "-h", self.uri, "-f", str(conf), "-d", "0"],
            stdout=subprocess.DEVNULL, stderr=(self.tmp / "slapd.log").open("wb"),
        )
        deadline = began + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"slapd exited with {self.process.returncode}: {(self.tmp / 'slapd.log').read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"slapd did not listen on {self.uri} within {timeout}s") from None
                time.sleep(0.05)
        self.started_in = time.monotonic() - began

    def _tool(self, tool: str, ldif: str) -> None:
        """ldapadd / ldapmodify as the root DN; the password goes through a file (-y), not argv."""
        password_file = self.tmp / "root.pw"
        password_file.write_text(self.root_pw)
        password_file.chmod(0o600)
        subprocess.run(
            [tool, "-x", "-H", self.uri, "-D", ROOT_DN, "-y", str(password_file)],
            input=ldif.encode(), check=True, capture_output=True, timeout=30,
        )

    def add(self, ldif: str) -> None:
        self._tool("ldapadd", ldif)

    def modify(self, ldif: str) -> None:
        self._tool("ldapmodify", ldif)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.process = None


def person(uid: str, password: str, given: str, sn: str) -> str:
    return (
        f"dn: uid={uid},ou=people,{SUFFIX}\nobjectClass: inetOrgPerson\nuid: {uid}\ncn: {given} {sn}\n"
        f"givenName: {given}\nsn: {sn}\nmail: {uid}@example.org\nuserPassword: {password}\n\n"
    )


def group_of_names(cn: str, *uids: str) -> str:
    members = "".join(f"member: uid={uid},ou=people,{SUFFIX}\n" for uid in uids)
    return f"dn: cn={cn},ou=groups,{SUFFIX}\nobjectClass: groupOfNames\ncn: {cn}\n{members}\n"


def posix_group(cn: str, gid: int, *uids: str) -> str:
    members = "".join(f"memberUid: {uid}\n" for uid in uids)
    return f"dn: cn={cn},ou=posixgroups,{SUFFIX}\nobjectClass: posixGroup\ncn: {cn}\ngidNumber: {gid}\n{members}\n"


def base_entries(service_password: str) -> str:
    entries = f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n\n"
    for ou in ("people", "groups", "posixgroups", "services"):
        entries += f"dn: ou={ou},{SUFFIX}\nobjectClass: organizationalUnit\nou: {ou}\n\n"
    entries += (
        f"dn: {SERVICE_DN}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\n"
        f"cn: fairportal\nuserPassword: {service_password}\n\n"
    )
    return entries
