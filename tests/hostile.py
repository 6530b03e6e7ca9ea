"""Hostile inputs shared by the security tests (issue 13): YAML alias bombs and the like."""

from __future__ import annotations


def alias_bomb(depth: int = 8, width: int = 9, *, flow: bool = True) -> str:
    """Nested anchors and aliases ("billion laughs"): ``width ** depth`` strings once expanded.

    ``flow=True`` is one line (``[&l0 [lol, ...], &l1 [*l0, ...], ...]``), usable as the value
    of a ``path=value`` edit; otherwise a block mapping, usable as a whole document.
    """
    levels = [f"&l0 [{','.join(['lol'] * width)}]"]
    levels += [f"&l{i} [{','.join([f'*l{i - 1}'] * width)}]" for i in range(1, depth)]
    if flow:
        return f"[{', '.join(levels)}]"
    return "\n".join(f"l{i}: {level}" for i, level in enumerate(levels)) + "\n"
