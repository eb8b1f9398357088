"""Reading config files: YAML or JSON, environment expansion, schema validation.

Source: SPEC "Configuration file"; behavior notes §14 (``$VAR``/``${VAR}``, ``x-*`` keys,
shorthand mocks, validator rules). Errors name the key path (ARCHITECTURE seam 1).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mocks.config import ConfigFile
from mocks.core.environment import expand_environment
from mocks.core.errors import ConfigError, format_location, validation_issues


def _pydantic_error(error: ValidationError, prefix: str = "") -> ConfigError:
    """Every problem of ``error`` as one :class:`ConfigError` (paths below ``prefix``)."""
    return ConfigError.of(validation_issues(error, prefix))


def parse_config_text(text: str, source: str = "<config>") -> Any:
    """Parse YAML or JSON text (JSON is YAML) after environment expansion.

    Raises :class:`ConfigError` with the line and column of a syntax error, or when the
    document is an alias bomb, refers to itself or nests too deeply
    (:func:`mocks.core.yamldoc.safe_load_bounded`). PyYAML is imported here, on the first
    text parsed: validating an already parsed config (:func:`validate_config`) needs none.
    """
    import yaml

    from mocks.core.yamldoc import DocumentTooLarge, safe_load_bounded

    try:
        data = safe_load_bounded(expand_environment(text))
    except DocumentTooLarge as error:
        raise ConfigError("", f"{source}: refused: {error}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise ConfigError("", f"{source}: not valid YAML or JSON{where}: {problem}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("", f"{source}: the top level must be a mapping with a 'mocks' list")
    return data


def validate_config(data: Any) -> ConfigFile:
    """Validate a parsed document against the schema.

    Raises :class:`ConfigError` carrying every problem pydantic found
    (:attr:`ConfigError.errors`), each worded as the admin API words it (``unknown key``,
    ``required field is missing``); its ``path``/``reason`` are the first problem's.
    """
    try:
        return ConfigFile.model_validate(data)
    except ValidationError as error:
        raise _pydantic_error(error) from None


def load_config_file(path: str | Path, *, allow_remote_imports: bool = False) -> ConfigFile:
    """Read, expand, parse and validate one config file; ``imports:`` entries are converted
    and merged first (:func:`mocks.portability.importers.config_imports.expand_imports`).
    ``imports[].url`` entries are fetched only with ``allow_remote_imports``
    (``--allow-remote-imports``); otherwise they are a config error naming the flag.

    Raises :class:`ConfigError`: unreadable file, bad syntax, a failed import
    (``imports[0]: openapi: paths./x.get: ...``), or a schema error with its path.
    """
    file_path = Path(path)
    try:
        text = file_path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError("", f"cannot read config file {str(file_path)!r}: "
                              f"{error.strerror or error}") from None
    data = parse_config_text(text, str(file_path))
    if data.get("imports"):
        # Hook: `imports:` entries become mocks before validation (SPEC "Import entry").
        from mocks.portability.importers.config_imports import expand_imports

        data = expand_imports(data, file_path.resolve().parent,
                              allow_remote=allow_remote_imports)
    return validate_config(data)
