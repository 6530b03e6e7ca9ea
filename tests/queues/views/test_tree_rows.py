"""The queue tree's rows, built in Python (``queues.templatetags.dashboard.tree_row``): every
value that reaches the markup is escaped as the template escaped it."""

from __future__ import annotations

from decimal import Decimal

from core.access import ADMIN
from queues.selectors.live import HoldView
from queues.selectors.tree import TreeRow
from queues.templatetags.dashboard import tree_row


def test_given_markup_in_a_hold_and_a_score_when_row_rendered_then_it_is_escaped_text():
    row = TreeRow(
        kind="localQueue",
        depth=3,
        name="train",
        key={"namespace": "team-a", "name": "train"},
        weight=Decimal("2.00"),
        score='<img src=x onerror="alert(1)">',
        holds=[HoldView(code="Held", message='<script>alert("x")</script>', drain=True, source="operator")],
        stop_policy="Hold",
        admitted=2,
        pending=1,
        node="/lq-train",
        parent="/ns-team-a",
    )

    html = tree_row(row, ADMIN)

    assert "<script>" not in html and "<img" not in html
    assert 'title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;">Held (drain)</span>' in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert '<a href="/namespaces/team-a/queues/train/">train</a>' in html
    assert '<td class="num" data-v="2.00">2</td>' in html
    assert '<span class="badge Hold">stopped: Hold</span>' in html
    assert '2 · <span class="pending-count">1</span>' in html
