from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("core", "0003_directory_sign_in")]

    operations = [
        migrations.CreateModel(
            name="Heartbeat",
            fields=[
                ("name", models.CharField(max_length=40, primary_key=True, serialize=False)),
                ("at", models.DateTimeField()),
                ("hostname", models.CharField(blank=True, default="", max_length=200)),
            ],
        ),
    ]
