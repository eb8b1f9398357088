"""Creates the default workspace ``local`` (SPEC "Mock": default workspace id ``local``)."""
from django.db import migrations
from django.utils import timezone


def create_default_workspace(apps, schema_editor):
    Workspace = apps.get_model("mocks", "Workspace")
    now = timezone.now()
    Workspace.objects.get_or_create(id="local", defaults={
        "name": "Default", "type": "local", "description": "", "base_path": "",
        "created_at": now, "updated_at": now})


class Migration(migrations.Migration):

    dependencies = [("mocks", "0001_initial")]

    operations = [migrations.RunPython(create_default_workspace, migrations.RunPython.noop)]
