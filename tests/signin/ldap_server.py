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
TLSCACertificateFile {tmp}/ca.pem
TLSCertificateFile {tmp}/server.pem
TLSCertificateKeyFile {tmp}/server.key
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
        make_certificates(self.tmp)
        conf = self.tmp / "slapd.conf"
        conf.write_text(CONFIG.format(tmp=self.tmp, suffix=SUFFIX, root_dn=ROOT_DN, root_pw=self.root_pw))
        conf.chmod(0o600)
        began = time.monotonic()
        # -d 0: stay in the foreground (so the test owns the process), no debug output.
        self.process = subprocess.Popen(
            [SLAPD, "-h", self.uri, "-f", str(conf), "-d", "0"],
            stdout=subprocess.DEVNULL,
            stderr=(self.tmp / "slapd.log").open("wb"),
        )
        deadline = began + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"slapd exited with {self.process.returncode}: {(self.tmp / 'slapd.log').read_text()[-2000:]}"
                )
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
            input=ldif.encode(),
            check=True,
            capture_output=True,
            timeout=30,
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


def make_certificates(tmp: Path) -> None:
    """A throwaway CA (ca.pem) and a server certificate for 127.0.0.1 (server.pem, server.key)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def build(subject: str, key, issuer: str, issuer_key, *, ca: bool) -> x509.Certificate:  # noqa: ANN001
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
            )
        return builder.sign(issuer_key, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    server_key = ec.generate_private_key(ec.SECP256R1())
    ca = build("fairportal test CA", ca_key, "fairportal test CA", ca_key, ca=True)
    server = build("127.0.0.1", server_key, "fairportal test CA", ca_key, ca=False)
    (tmp / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (tmp / "server.pem").write_bytes(server.public_bytes(serialization.Encoding.PEM))
    key_file = tmp / "server.key"
    key_file.write_bytes(
        server_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    key_file.chmod(0o600)
