"""Django management commands that are ``mockd`` CLI commands under another name.

:class:`AliasCommand` hands its whole command line to the click command named in
:data:`mockd_project.cli.MANAGEMENT_ALIASES`, so ``runmocks``/``runengine`` and
``mockd start``/``mockd engine`` have one definition: the same options, defaults, help and
exit statuses.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from django.core.management.base import BaseCommand


class AliasCommand(BaseCommand):
    """A management command whose arguments are parsed by a ``mockd`` click command.

    Subclasses set ``alias`` (``runmocks`` or ``runengine``). ``manage.py NAME ARGS`` and
    ``manage.py help NAME`` show the click command's own parsing and help;
    ``call_command(NAME, "--port", "0", ...)`` passes its positional strings the same way.
    """

    alias = ""
    # Django's own checks and options do not apply: the click command parses everything.
    requires_system_checks: list[str] = []

    def run_from_argv(self, argv: list[str]) -> None:
        """``argv`` is ``[program, NAME, *ARGS]``; runs the click command and exits."""
        from mockd_project.cli import run_management_alias

        run_management_alias(self.alias, argv[2:], argv[0])

    def print_help(self, prog_name: str, subcommand: str) -> None:
        """The click command's help (``manage.py help runmocks``)."""
        from mockd_project.cli import run_management_alias

        try:
            run_management_alias(self.alias, ["--help"], prog_name)
        except SystemExit:
            pass

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """One catch-all argument: ``call_command`` hands its strings to the click command."""
        parser.add_argument("args", nargs=argparse.REMAINDER,
                            help=f"options of the command; see 'manage.py {self.alias} --help'")

    def handle(self, *args: Any, **options: Any) -> None:
        """``call_command(NAME, *args)``: runs the click command with ``args``; exits."""
        from mockd_project.cli import run_management_alias

        run_management_alias(self.alias, list(args), sys.argv[0])
