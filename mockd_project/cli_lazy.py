"""Click groups whose subcommands are imported only when used.

A :class:`LazyGroup` knows some subcommands by name and import string
(``"module:attribute"``) and imports a command's module only when that command runs or its
help is shown (``mockd grpc --help``, or the command list of ``mockd --help``). So a client
command such as ``mockd list`` loads click and the standard library's http.client, not grpc, lxml or the config models.

Who may call it: the ``mockd`` group (:mod:`mockd_project.cli`) and groups of the CLI
modules (``mockd stateful``). Imports nothing of the project. Source: ARCHITECTURE
"Protocol handlers" (the CLI is composed from the registry); STYLE §5.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

import click


class LazyCommandError(click.ClickException):
    """A registered command cannot be imported, or its import string names something else
    (not a click command, or a command of another name). The message names the command,
    the import string and the cause; click prints it and exits with status 1."""


def resolve_command(name: str, target: str) -> click.Command:
    """The click command ``target`` (``"module:attribute"``) names, imported now.

    Raises :class:`LazyCommandError` when the module or attribute is missing, when it is
    not a :class:`click.Command`, or when its name is not ``name``.
    """
    module_name, _, attribute = target.partition(":")
    try:
        command = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise LazyCommandError(f"command {name!r}: cannot import {target}: {error}") from error
    if not isinstance(command, click.Command):
        raise LazyCommandError(f"command {name!r}: {target} is not a click command")
    if command.name != name:
        raise LazyCommandError(f"command {name!r}: {target} is named {command.name!r}")
    return command


class LazyGroup(click.Group):
    """A click group with subcommands known by import string until first used.

    Args:
        lazy_commands: ``{command name: "module:attribute"}``; the attribute is a click
            command or group of that name.
        extend: called with every command the group resolves (lazily or not) before it is
            used, to add options that belong to another module (``--stateful`` of
            ``add``); default none.
        **kwargs: as :class:`click.Group`.

    Commands added the usual way (``add_command``, decorators) take precedence over a lazy
    command of the same name. :meth:`get_command` raises :class:`LazyCommandError` when a
    lazy command cannot be imported.
    """

    def __init__(self, *args, lazy_commands: Mapping[str, str] | None = None,
                 extend: Callable[[click.Command], None] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy_commands: dict[str, str] = dict(lazy_commands or {})
        self._extend = extend
        self._extended: set[int] = set()

    def add_lazy_command(self, name: str, target: str) -> None:
        """Know ``name`` as the command ``target`` names, imported on first use."""
        self.lazy_commands[name] = target

    def _ready(self, command: click.Command) -> click.Command:
        if self._extend is not None and id(command) not in self._extended:
            self._extended.add(id(command))
            self._extend(command)
        return command

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in self.lazy_commands:
            command = resolve_command(cmd_name, self.lazy_commands[cmd_name])
            self.commands[cmd_name] = command
        return self._ready(command) if command is not None else None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(self.lazy_commands))
