"""``fairportal VERB``: the argument parser, one function per verb, and the exit codes.

Exit codes: 0 done; 1 the server refused or could not be reached (one line on stderr); 2 a usage
error (a bad argument, no server or token configured, an unreadable file); 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn, TextIO

from fairportal_cli.client import Client, CliError, one_line
from fairportal_cli.table import render

DEFAULT_LIMIT = 500
MAX_LIMIT = 100_000
MAX_SCENARIO_BYTES = 1024 * 1024  # what /api/v1/simulations/ accepts
_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
_KEY = re.compile(rf"^{_LABEL}/{_LABEL}$")
_ID = re.compile(r"^[0-9]{1,18}$")
MODES = {  # the admission modes, short enough for a column
    "UsageBasedAdmissionFairSharing": "UsageBased",
    "NoAdmissionFairSharing": "NoFairSharing",
    "DominantResourceShare": "DRS",
    "TimeAware": "TimeAware",
}


class Parser(argparse.ArgumentParser):
    """Usage errors as one line and exit 2, not argparse's usage block."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (fairportal {self._verb()}--help)", 2)

    def _verb(self) -> str:
        parts = self.prog.split()
        return f"{parts[-1]} " if len(parts) > 1 else ""


def _limit(text: str) -> int:
    if not _ID.match(text) or not 1 <= int(text) <= MAX_LIMIT:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {MAX_LIMIT}")
    return int(text)


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError("must be a number of seconds above 0 and at most 3600")
    return value


def _key(text: str) -> str:
    if not _KEY.match(text):
        raise argparse.ArgumentTypeError(f"must be namespace/name (lowercase DNS labels), got {one_line(text, 80)!r}")
    return text


def _label(text: str) -> str:
    if not re.fullmatch(_LABEL, text):
        raise argparse.ArgumentTypeError(f"must be a name (a lowercase DNS label), got {one_line(text, 80)!r}")
    return text


def build_parser() -> Parser:
    parser = Parser(
        prog="fairportal",
        description="Ask a fairportal server what sshare, sprio and squeue answer on Slurm (docs/cli.md).",
    )
    parser.add_argument("--server", help="the server's base URL (default: $FAIRPORTAL)")
    parser.add_argument(
        "--token",
        help="an API token (default: $FAIRPORTAL_TOKEN; prefer the variable: "
        "arguments are visible to other users in ps)",
    )
    parser.add_argument("--timeout", type=_timeout, default=30.0, help="seconds to wait for each answer (default 30)")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=Parser)
    verbs.required = True

    def verb(name: str, help_text: str, *, limited: bool = False) -> Parser:
        sub = verbs.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--json", action="store_true", help="print the API's JSON instead of a table")
        if limited:  # a list fetched page by page: how many rows at most
            sub.add_argument(
                "--limit", type=_limit, default=DEFAULT_LIMIT, help=f"at most this many rows (default {DEFAULT_LIMIT})"
            )
        return sub

    shares = verb("shares", "fair-share standing per LocalQueue (like sshare)", limited=True)
    shares.add_argument("--namespace", type=_label, help="only this namespace's LocalQueues")
    shares.add_argument("--cluster-queue", type=_label, help="only the LocalQueues feeding this ClusterQueue")
    shares.add_argument("--queue", type=_key, help="only this LocalQueue (namespace/name)")

    why = verb("why", "why a workload waits: its factors, position, reason and who is ahead (like sprio -j)")
    why.add_argument("workload", metavar="WORKLOAD", help="its id, or namespace/name")

    verb("budgets", "time budgets and their current period", limited=True)

    pending = verb("pending", "pending workloads in queue order with their reasons (like squeue -t PD)", limited=True)
    pending.add_argument("--queue", type=_key, help="only this LocalQueue (namespace/name)")
    pending.add_argument("--cluster-queue", type=_label, help="only this ClusterQueue")
    pending.add_argument(
        "--cluster",
        type=_label,
        help="only workloads bound to this cluster or that ran there (an unknown one: an error)",
    )

    verb("clusters", "every cluster: health, capacity, admitted and pending work (yours, for a tenant)", limited=True)

    simulate = verb("simulate", "run a scenario file on the server's engine (a what-if run) and print its summary")
    simulate.add_argument("file", metavar="FILE", help="a scenario document, YAML or JSON (docs/design.md)")
    simulate.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="a what-if edit, e.g. localQueues.team-a/main.weight=3 (repeat for several)",
    )
    simulate.add_argument("--wait", type=_timeout, default=600.0, help="seconds to wait for the run (default 600)")
    return parser


# --- formatting ---------------------------------------------------------------------------------


def _number(value: Any, digits: int = 4) -> str:
    if value is None:
        return "-"
    return f"{float(value):.{digits}g}"


def _quantity(value: Any, resource: str) -> str:
    """A base-unit amount: bytes of memory and storage in Gi, others as numbers."""
    if value is None:
        return "-"
    if "memory" in resource or "storage" in resource:
        return f"{float(value) / 2**30:.4g}Gi"
    return _number(value)


def _amounts(display: Any) -> str:
    if not isinstance(display, list) or not display:
        return "-"
    return ", ".join(str(item) for item in display)


def _share(share: Any) -> str:
    if not isinstance(share, dict) or share.get("ratio") is None:
        return "-"
    if not share["ratio"]:
        return "0"
    return f"{share['ratio']:.2f} {share.get('resource') or ''}".strip()


def _when(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _age(text: Any, now: datetime) -> str:
    """How long ago, as two units (``3h12m``), like squeue's TIME."""
    moment = _when(text)
    if moment is None:
        return "-"
    seconds = max(0, int((now - moment).total_seconds()))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d{hours}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{seconds:02d}s"


def _minute(text: Any) -> str:
    """An ISO time to the minute, in UTC: ``2027-01-21 20:58Z``."""
    moment = _when(text)
    return "-" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%MZ")


def _mode(mode: Any) -> str:
    return MODES.get(str(mode), str(mode or "-"))


def _print_json(out: TextIO, value: Any) -> None:
    out.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _collect(client: Client, path: str, params: dict[str, Any], limit: int, err: TextIO) -> list[dict[str, Any]]:
    rows, total = [], 0
    for row, count in client.pages(path, params, limit=limit):
        rows.append(row)
        total = count
    if total > len(rows):
        err.write(f"fairportal: showing {len(rows)} of {total} rows (--limit to see more)\n")
    return rows


# --- verbs --------------------------------------------------------------------------------------


def cmd_shares(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    params = {"namespace": args.namespace, "cluster_queue": args.cluster_queue, "local_queue": args.queue}
    rows = _collect(client, "api/v1/shares/", {k: v for k, v in params.items() if v}, args.limit, err)
    if args.json:
        _print_json(out, rows)
        return 0
    if not rows:
        err.write("fairportal: no LocalQueues you may see match\n")
    headers = [
        "CLUSTERQUEUE",
        "LOCALQUEUE",
        "MODE",
        "NS_WEIGHT",
        "WEIGHT",
        "NORM_SHARE",
        "USAGE_SCORE",
        "USAGE_SHARE",
        "ADMITTED_SHARE",
        "PENDING",
        "ADMITTED",
        "RANK",
        "DECAYED_USAGE",
    ]
    table = [
        [
            row.get("cluster_queue"),
            row.get("local_queue"),
            _mode(row.get("admission_mode")),
            _number(row.get("namespace_weight")),
            _number(row.get("weight")),
            _number(row.get("normalized_share"), 3),
            row.get("usage_score_formatted"),
            _share(row.get("usage_share")),
            _share(row.get("admitted_share")),
            row.get("pending"),
            row.get("admitted_count"),
            f"{row['rank']}/{row.get('ranked')}" if row.get("rank") else "-",
            _amounts(row.get("decayed_usage_display")),
        ]
        for row in rows
    ]
    out.write(render(headers, table, last_unbounded=True))
    return 0


def _find_workload(client: Client, target: str) -> dict[str, Any]:
    """One workload by id or namespace/name; the same not-found line for another tenant's and a missing one."""
    not_found = CliError(f"no workload {target} that you may see (check the id, or namespace/name)")
    if _ID.match(target):
        try:
            return dict(client.get(f"api/v1/priority/{target}/"))
        except CliError as error:
            if error.status == 404:
                raise not_found from None
            raise
    if not _KEY.match(target):
        raise CliError(f"WORKLOAD must be an id or namespace/name, got {one_line(target, 80)!r}", 2)
    page = client.get("api/v1/priority/", {"workload": target, "page_size": 1})
    results = page.get("results") if isinstance(page, dict) else None
    if not results:
        raise not_found
    return dict(client.get(f"api/v1/priority/{int(results[0]['id'])}/"))


def cmd_why(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    row = _find_workload(client, args.workload)
    if args.json:
        _print_json(out, row)
        return 0
    now = datetime.now(UTC)
    factors = row.get("factors") or {}
    out.write(
        render(
            [
                "WORKLOAD",
                "ID",
                "CLUSTERQUEUE",
                "MODE",
                "PRIORITY",
                "CLASS",
                "AGE",
                "NS_WEIGHT",
                "LQ_WEIGHT",
                "USAGE_SCORE",
                "POSITION",
            ],
            [
                [
                    row.get("workload"),
                    row.get("id"),
                    row.get("cluster_queue"),
                    _mode(row.get("admission_mode")),
                    factors.get("priority"),
                    factors.get("priority_class"),
                    _age(factors.get("queued_at"), now),
                    _number(factors.get("namespace_weight")),
                    _number(factors.get("local_queue_weight")),
                    factors.get("usage_score_formatted"),
                    row.get("queue_position"),
                ]
            ],
        )
    )
    out.write("\n")
    requests = ", ".join(str(item) for item in row.get("requests") or []) or "-"
    reason = row.get("reason")
    lines = [f"state:    {row.get('state')}", f"requests: {one_line(requests)}"]
    if reason:
        lines.append(f"reason:   {reason.get('code') or '-'} ({reason.get('title')})")
        lines.append(f"          {one_line(reason.get('message') or '', 1500)}")
    else:
        lines.append(f"reason:   not waiting ({row.get('state')})")
    out.write("\n".join(lines) + "\n")
    shortages = (reason or {}).get("shortages") or []
    if len(shortages) > 1:  # one is all in the sentence; several read better as a table
        out.write(f"\nshort of {len(shortages)} resources, the dominant one first:\n")
        out.write(
            render(
                ["RESOURCE", "FLAVOR", "REQUESTS", "AVAILABLE", "MORE_NEEDED"],
                [
                    [
                        item.get("resource"),
                        item.get("flavor") or "-",
                        item.get("requested_formatted"),
                        item.get("available_formatted"),
                        f"never (at most {item.get('ceiling_formatted')})"
                        if item.get("never_fits")
                        else item.get("missing_formatted"),
                    ]
                    for item in shortages[:32]
                ],
            )
        )
    ahead = row.get("ahead") or []
    if row.get("state") == "Pending":
        total = sum(int(item.get("count") or 0) for item in ahead) + int(row.get("ahead_more") or 0)
        out.write(f"\nahead of it: {total} pending workload{'s' if total != 1 else ''}\n")
        if ahead:
            out.write(
                render(
                    ["AHEAD", "LOCALQUEUE", "WHY"],
                    [[item.get("count"), item.get("local_queue"), item.get("why")] for item in ahead],
                    last_unbounded=True,
                )
            )
        if row.get("ahead_more"):
            out.write(f"... and {row['ahead_more']} more in other LocalQueues\n")
    return 0


def cmd_budgets(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    rows = _collect(client, "api/v1/budgets/", {}, args.limit, err)
    if args.json:
        _print_json(out, rows)
        return 0
    if not rows:
        err.write("fairportal: no budgets you may see\n")
    headers = [
        "BUDGET",
        "TARGET",
        "KIND",
        "RESOURCE",
        "ALLOCATED_H",
        "USED_H",
        "REMAINING_H",
        "USED",
        "STATE",
        "EXHAUSTS_AT",
        "STATE_REASON",
    ]
    table = []
    for row in rows:
        status = row.get("status") or {}
        target = row.get("target") or row.get("local_queue") or row.get("namespace") or row.get("cluster_queue")
        table.append(
            [
                row.get("name"),
                target,
                row.get("kind"),
                row.get("resource"),
                _number(row.get("allocated_hours"), 6),
                _number(status.get("used_hours"), 4),
                _number(status.get("remaining_hours"), 4),
                f"{float(status['percent']):.0f}%" if status.get("percent") is not None else "-",
                status.get("state"),
                _minute(status.get("exhausted_at") or status.get("forecast_exhausted_at")),
                status.get("state_reason"),
            ]
        )
    out.write(render(headers, table, last_unbounded=True))
    return 0


def _known_cluster(client: Client, name: str) -> None:
    """Refuse a cluster the server does not know (the API's filter would just match nothing)."""
    if not client.get("api/v1/clusters/", {"name": name}).get("results"):
        raise CliError(f"no cluster named {name!r} (bin/fairportal clusters lists them)")


def cmd_pending(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.cluster:
        _known_cluster(client, args.cluster)
    params = {
        "state": "Pending",
        "local_queue": args.queue,
        "cluster_queue": args.cluster_queue,
        "cluster": args.cluster,
    }
    rows = _collect(client, "api/v1/priority/", {k: v for k, v in params.items() if v}, args.limit, err)
    if args.json:
        _print_json(out, rows)
        return 0
    if not rows:
        err.write("fairportal: nothing pending that you may see\n")
    now = datetime.now(UTC)
    headers = ["CLUSTERQUEUE", "POSITION", "ID", "WORKLOAD", "PRIORITY", "WAITING", "REQUESTS", "REASON"]
    table = [
        [
            row.get("cluster_queue"),
            row.get("queue_position"),
            row.get("id"),
            row.get("workload"),
            (row.get("factors") or {}).get("priority"),
            _age((row.get("factors") or {}).get("queued_at"), now),
            ", ".join(str(item) for item in row.get("requests") or []),
            (row.get("reason") or {}).get("code") or "-",
        ]
        for row in rows
    ]
    out.write(render(headers, table))
    return 0


def cmd_clusters(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    rows = _collect(client, "api/v1/clusters/", {}, args.limit, err)
    if args.json:
        _print_json(out, rows)
        return 0
    if not rows:
        err.write("fairportal: no clusters\n")
    headers = ["CLUSTER", "HEALTH", "ADMITTED_WL", "PENDING_ONLY", "PENDING_COULD", "USE", "CAPACITY", "ADMITTED"]
    table = []
    for row in rows:
        figures = row.get("figures") or {}
        health = figures.get("health") or {}
        ratio = (figures.get("utilisation") or {}).get("ratio")
        table.append(
            [
                row.get("name"),
                health.get("state") or "-",
                figures.get("admitted_workloads"),
                figures.get("pending_only_here"),
                figures.get("pending_could_run"),
                "-" if ratio is None else f"{ratio * 100:.0f}%",
                _amounts(figures.get("capacity_display")),
                _amounts(figures.get("admitted_display")),
            ]
        )
    out.write(render(headers, table, last_unbounded=True))
    return 0


def _load_scenario(path: str) -> dict[str, Any]:
    file = Path(path)
    try:
        size = file.stat().st_size
        if size > MAX_SCENARIO_BYTES:
            raise CliError(
                f"{one_line(path, 120)} is larger than the {MAX_SCENARIO_BYTES // 1024} KiB the server accepts", 2
            )
        text = file.read_text(encoding="utf-8")
    except CliError:
        raise
    except (OSError, UnicodeDecodeError) as error:
        raise CliError(
            f"cannot read {one_line(path, 120)}: {type(error).__name__}: {one_line(getattr(error, 'strerror', None) or str(error), 120)}",
            2,
        ) from None
    if file.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        try:
            document = json.loads(text)
        except ValueError as error:
            raise CliError(f"{one_line(path, 120)}: not valid JSON: {one_line(str(error), 120)}", 2) from None
    else:
        try:
            import yaml  # optional: PyYAML reads YAML scenarios; JSON needs nothing
        except ImportError:
            raise CliError(
                f"{one_line(path, 120)} is YAML and PyYAML is not installed: pip install PyYAML, or pass JSON", 2
            ) from None
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark is not None else ""
            raise CliError(f"{one_line(path, 120)}: not valid YAML{where}", 2) from None
    if not isinstance(document, dict):
        raise CliError(f"{one_line(path, 120)}: a scenario is a mapping (name, clock, clusterQueues, ...)", 2)
    return document


def _seconds(value: Any) -> str:
    seconds = float(value or 0)
    if seconds < 120:
        return f"{seconds:g}s"
    if seconds < 7200:
        return f"{seconds / 60:.1f}m"
    return f"{seconds / 3600:.1f}h"


def cmd_simulate(client: Client, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    document = _load_scenario(args.file)
    for edit in args.set:
        if "=" not in edit or len(edit) > 500:
            raise CliError(f"--set takes PATH=VALUE (at most 500 characters), got {one_line(edit, 80)!r}", 2)
    _status, headers, run = client.post("api/v1/simulations/", {"scenario": document, "set": args.set})
    location = client.same_server(headers.get("Location")) or client.url(f"api/v1/simulations/{run.get('id')}/")
    deadline = time.monotonic() + args.wait
    delay = 0.25
    while run.get("status") not in ("succeeded", "failed"):
        if time.monotonic() >= deadline:
            raise CliError(
                f"the run is still {run.get('status')} after {args.wait:g} s; poll {location} (--wait to wait longer)"
            )
        time.sleep(delay)
        delay = min(delay * 2, 2.0)
        run = client.get(location)
    if run.get("status") == "failed":
        raise CliError(f"the simulation failed: {one_line(run.get('error') or 'no reason given')}")
    if args.json:
        _print_json(out, run)
        return 0
    out.write(render_simulation(run.get("result") or {}))
    return 0


def render_simulation(result: dict[str, Any]) -> str:
    """The summary ``manage.py simulate --format table`` prints: a row per LocalQueue, then totals."""
    summary = result.get("summary") or {}
    per_queue = summary.get("perLocalQueue") or {}
    resources = sorted({r for stats in per_queue.values() for r in (stats.get("allocation") or {})})
    headers = [
        "LOCALQUEUE",
        "WEIGHT",
        "SUBMITTED",
        "ADMITTED",
        "FINISHED",
        "PENDING",
        "EVICTIONS",
        "WAIT_P50",
        "WAIT_P95",
        *(f"AVG_{r.upper()}" for r in resources),
    ]
    rows = [
        [
            key,
            _number(stats.get("weight")),
            stats.get("submitted"),
            stats.get("admitted"),
            stats.get("finished"),
            stats.get("pending"),
            stats.get("evictions"),
            _seconds((stats.get("waitSeconds") or {}).get("p50")),
            _seconds((stats.get("waitSeconds") or {}).get("p95")),
            *(_quantity((stats.get("allocation") or {}).get(r, 0), r) for r in resources),
        ]
        for key, stats in per_queue.items()
    ]
    lines = [
        f"scenario {one_line(str(result.get('scenario')), 80)} (simulated {_seconds(summary.get('endSeconds'))})",
        "",
    ]
    text = "\n".join(lines) + "\n" + render(headers, rows) + "\n"
    utilization = ", ".join(f"{r} {float(v):.1%}" for r, v in (summary.get("utilization") or {}).items()) or "-"
    waits = summary.get("waitSeconds") or {}
    counts = summary.get("workloads") or {}
    text += f"utilization: {utilization}\n"
    text += f"Jain index (allocation / weight): {float(summary.get('jainIndex') or 0):.3f}\n"
    text += f"wait: p50 {_seconds(waits.get('p50'))}, p95 {_seconds(waits.get('p95'))}\n"
    text += (
        f"workloads: {counts.get('total')} total, {counts.get('finished')} finished, {counts.get('admitted')} running, "
        f"{counts.get('pending')} pending, {summary.get('evictions')} evictions\n"
    )
    return text


VERBS: dict[str, Callable[[Client, argparse.Namespace, TextIO, TextIO], int]] = {
    "shares": cmd_shares,
    "why": cmd_why,
    "budgets": cmd_budgets,
    "pending": cmd_pending,
    "clusters": cmd_clusters,
    "simulate": cmd_simulate,
}


def run(argv: Sequence[str], environ: dict[str, str], out: TextIO, err: TextIO) -> int:
    args = build_parser().parse_args(list(argv))
    server = args.server or environ.get("FAIRPORTAL", "")
    token = args.token or environ.get("FAIRPORTAL_TOKEN", "")
    if not server:
        raise CliError("no server: set FAIRPORTAL (e.g. http://127.0.0.1:8000) or pass --server", 2)
    if not token:
        raise CliError(
            "no token: set FAIRPORTAL_TOKEN (make -s token USER=alice, or manage.py create_api_token) or pass --token",
            2,
        )
    if not re.fullmatch(r"[\x21-\x7e]{1,512}", token):
        raise CliError("the token is not a key (visible ASCII, at most 512 characters): check FAIRPORTAL_TOKEN", 2)
    client = Client(server, token, timeout=args.timeout)
    return VERBS[args.verb](client, args, out, err)


def main(argv: Sequence[str] | None = None) -> int:
    out, err = sys.stdout, sys.stderr
    try:
        return run(sys.argv[1:] if argv is None else argv, dict(os.environ), out, err)
    except CliError as error:
        err.write(f"fairportal: {error}\n")
        return error.exit_code
    except KeyboardInterrupt:
        err.write("fairportal: interrupted\n")
        return 130
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as error:
        # the server's JSON is not the shape this client reads: say so on one line, not a traceback
        err.write(
            f"fairportal: the server's answer is not what this client expects ({type(error).__name__}: "
            f"{one_line(str(error), 120)}); is it a fairportal server of this version?\n"
        )
        return 1
    except BrokenPipeError:  # `fairportal pending | head`: the reader left; nothing more to say
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115  # so the interpreter's final flush does not fail
        except OSError:
            pass
        return 0
