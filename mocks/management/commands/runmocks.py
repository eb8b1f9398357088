"""``python manage.py runmocks``: the same as ``mockd start``."""
from __future__ import annotations

from django.core.management.base import BaseCommand

from mockd_project.runner import RunOptions, run_server


class Command(BaseCommand):
    help = "Start the mock server and the admin API (same as 'mockd start')."

    def add_arguments(self, parser):
        parser.add_argument("-c", "--config", default=None)
        parser.add_argument("-p", "--port", type=int, default=4280)
        parser.add_argument("-a", "--admin-port", type=int, default=4290)
        parser.add_argument("--engine-port", type=int, default=None)
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--data-dir", default=None)
        parser.add_argument("--no-auth", action="store_true")
        parser.add_argument("--server", choices=["uvicorn", "daphne"], default="uvicorn")
        parser.add_argument("--allow-body-files-anywhere", action="store_true",
                            help="Let bodyFile/dataFile read any file.")

    def handle(self, *args, **options):
        # --engine-port is accepted for symmetry with 'mockd start' and ignored: full mode
        # binds no engine-control port.
        raise SystemExit(run_server(RunOptions(
            full=True, config=options["config"], host=options["host"], port=options["port"],
            admin_port=options["admin_port"], engine_port=options["engine_port"],
            data_dir=options["data_dir"], no_auth=options["no_auth"], server=options["server"],
            allow_body_files_anywhere=options["allow_body_files_anywhere"])))
