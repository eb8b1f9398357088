"""``python manage.py runengine -c FILE``: the same as ``mockd engine`` (for CI scripts)."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from mockd_project.runner import RunOptions, run_server


class Command(BaseCommand):
    help = "Headless engine: data plane only (same as 'mockd engine')."

    def add_arguments(self, parser):
        parser.add_argument("-c", "--config", required=True)
        parser.add_argument("-p", "--port", type=int, default=4280)
        parser.add_argument("--engine-port", type=int, default=None)
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--print-url", action="store_true")
        parser.add_argument("--server", choices=["uvicorn", "daphne"], default="uvicorn")
        parser.add_argument("--engine-token", default=None,
                            help="Token the engine-control port requires (env "
                                 "MOCKD_ENGINE_TOKEN; default: <data dir>/engine-token).")
        parser.add_argument("--data-dir", default=None)
        parser.add_argument("--allow-body-files-anywhere", action="store_true",
                            help="Let bodyFile/dataFile read any file.")

    def handle(self, *args, **options):
        if not options["config"]:
            raise CommandError("runengine needs -c/--config FILE")
        raise SystemExit(run_server(RunOptions(
            full=False, config=options["config"], host=options["host"], port=options["port"],
            engine_port=options["engine_port"], print_url=options["print_url"],
            server=options["server"], engine_token=options["engine_token"],
            data_dir=options["data_dir"],
            allow_body_files_anywhere=options["allow_body_files_anywhere"])))
