"""API tokens move from DRF's plain-text ``authtoken_token`` to django-rest-knox, hashed.

Every existing key keeps working (its hash is stored, with the usual expiry from now on) and the
plain-text copies are deleted. Databases created after the change have no such table: nothing
to do.
"""

from django.conf import settings
from django.db import migrations
from django.utils import timezone


def hash_existing_tokens(apps, schema_editor):  # noqa: ANN001 - migration signature
    connection = schema_editor.connection
    if "authtoken_token" not in connection.introspection.table_names():
        return
    from knox.crypto import hash_token
    from knox.settings import CONSTANTS

    AuthToken = apps.get_model("knox", "AuthToken")
    expiry = timezone.now() + settings.REST_KNOX["TOKEN_TTL"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT key, user_id, created FROM authtoken_token")
        rows = cursor.fetchall()
    AuthToken.objects.bulk_create(
        AuthToken(digest=hash_token(key), token_key=key[: CONSTANTS.TOKEN_KEY_LENGTH], user_id=user_id, expiry=expiry)
        for key, user_id, _created in rows
    )
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM authtoken_token")


class Migration(migrations.Migration):
    # Written as fairportal's migration before the kernel became the ``core`` app: a database
    # that ran it there has it applied here too (and running it again would find nothing to do).
    replaces = [("fairportal", "0001_hash_existing_api_tokens")]

    dependencies = [
        ("knox", "0009_extend_authtoken_field"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(hash_existing_tokens, migrations.RunPython.noop)]
