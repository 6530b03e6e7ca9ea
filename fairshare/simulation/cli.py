"""``simulate FILE [--format json|table] [--set path=value ...]``: the engine's command line.

``manage.py simulate`` is a thin wrapper around ``main``; ``python -m fairshare.simulation.cli FILE``
works too. A bad scenario (or a bad ``--set``) prints one line ``error: <field>: <problem>`` on
stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from fairshare.errors import ValidationError
from fairshare.simulation.scenario import DEFAULT_LIMITS, load_scenario
from fairshare.simulation.simulator import simulate

EXIT_OK = 0
EXIT_BAD_INPUT = 2


class _ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _ArgumentError(message)


def build_parser(prog: str = "simulate") -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description="Simulate a fairportal scenario on the fair-share engine.")
    parser.add_argument("file", help="scenario file (YAML or JSON)")
    parser.add_argument("--format", choices=("json", "table"), default="json", help="output format (default json)")
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="edit a policy, weight, quota or budget field, e.g. localQueues.team-a/main.weight=3",
    )
    parser.add_argument("--indent", type=int, default=None, help="indent JSON output by this many spaces")
    parser.add_argument(
        "--no-size-limits",
        action="store_true",
        help="lift the scenario size limits (ScenarioLimits: namespaces, queues, workloads, ticks, bytes) for a trusted file",
    )
    return parser


def main(argv: list[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run the command; returns the exit status (0, or 2 for bad input)."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] == "simulate":
        args_list = args_list[1:]
    try:
        args = build_parser().parse_args(args_list)
    except _ArgumentError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_BAD_INPUT
    try:
        scenario = load_scenario(args.file, args.sets, limits=None if args.no_size_limits else DEFAULT_LIMITS)
        result = simulate(scenario)
    except ValidationError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_BAD_INPUT
    if args.format == "table":
        out.write(render_table(result))
    else:
        json.dump(result, out, indent=args.indent, separators=None if args.indent else (",", ":"))
        out.write("\n")
    return EXIT_OK


def render_table(result: dict[str, Any]) -> str:
    """A readable summary: one row per LocalQueue, then the totals (and one line per cluster)."""
    summary = result["summary"]
    resources = sorted({r for q in summary["perLocalQueue"].values() for r in q["allocation"]})
    headers = [
        "LocalQueue",
        "weight",
        "submitted",
        "admitted",
        "finished",
        "pending",
        "evictions",
        "wait p50",
        "wait p95",
    ]
    headers += [f"avg {r}" for r in resources]
    rows = []
    for key, stats in summary["perLocalQueue"].items():
        row = [
            key,
            f"{stats['weight']:g}",
            stats["submitted"],
            stats["admitted"],
            stats["finished"],
            stats["pending"],
            stats["evictions"],
            _seconds(stats["waitSeconds"]["p50"]),
            _seconds(stats["waitSeconds"]["p95"]),
        ]
        row += [f"{stats['allocation'].get(r, 0):.4g}" for r in resources]
        rows.append([str(cell) for cell in row])
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = [f"scenario {result['scenario']} (simulated {_seconds(summary['endSeconds'])})", ""]
    lines.append("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    lines.append("")
    utilization = ", ".join(f"{r} {v:.1%}" for r, v in summary["utilization"].items()) or "-"
    lines.append(f"utilization: {utilization}")
    lines.append(f"Jain index (allocation / weight): {summary['jainIndex']:.3f}")
    waits = summary["waitSeconds"]
    lines.append(f"wait: p50 {_seconds(waits['p50'])}, p95 {_seconds(waits['p95'])}")
    counts = summary["workloads"]
    lines.append(
        f"workloads: {counts['total']} total, {counts['finished']} finished, {counts['admitted']} running, "
        f"{counts['pending']} pending, {summary['evictions']} evictions"
    )
    for name, cluster in (summary.get("clusters") or {}).items():
        use = ", ".join(f"{r} {v:.1%}" for r, v in cluster["utilization"].items()) or "-"
        waits = cluster["waitSeconds"]
        line = (
            f"cluster {name} ({', '.join(cluster['flavors']) or 'no flavors'}): utilization {use}, "
            f"{cluster['admitted']} admitted, wait p50 {_seconds(waits['p50'])}, p95 {_seconds(waits['p95'])}"
        )
        if cluster["unavailableSeconds"]:
            line += f", unavailable {_seconds(cluster['unavailableSeconds'])}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def _seconds(value: float) -> str:
    value = float(value)
    if value < 120:
        return f"{value:g}s"
    if value < 7200:
        return f"{value / 60:.1f}m"
    return f"{value / 3600:.1f}h"


if __name__ == "__main__":
    sys.exit(main())
