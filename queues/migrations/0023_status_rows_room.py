"""LocalQueue and namespace rows with room on their pages for the usage sample's rewrites.

Every usage sample rewrites the status columns of every LocalQueue and namespace (decayed
usage, entry penalty, share, sample time: none of them indexed). With half of each page free
(fillfactor 50) the new version stays on its page, a HOT update that writes no index entry; on
full pages each of the 10,000 rewrites also wrote an entry in each of the table's four indexes.
The tables are rewritten once here (``CLUSTER`` on the primary key) so the room exists from
the start, not only on pages written later. PostgreSQL only.
"""

from django.db import migrations

TABLES = ("queues_localqueue", "queues_namespace")


def leave_room(apps: object, schema_editor: object) -> None:
    if schema_editor.connection.vendor != "postgresql":  # type: ignore[attr-defined]
        return
    for table in TABLES:
        schema_editor.execute(f"ALTER TABLE {table} SET (fillfactor = 50)")  # type: ignore[attr-defined]
        schema_editor.execute(f"CLUSTER {table} USING {table}_pkey")  # type: ignore[attr-defined]


def no_room(apps: object, schema_editor: object) -> None:
    if schema_editor.connection.vendor != "postgresql":  # type: ignore[attr-defined]
        return
    for table in TABLES:
        schema_editor.execute(f"ALTER TABLE {table} RESET (fillfactor)")  # type: ignore[attr-defined]


class Migration(migrations.Migration):
    dependencies = [
        ("queues", "0022_workload_counts"),
    ]

    operations = [
        migrations.RunPython(leave_room, no_room),
    ]
