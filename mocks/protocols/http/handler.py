"""The handler of ``http`` mocks: one mock -> one match candidate for the engine's index.

The candidate's action is, in this order of choice: a table binding (``extend`` entry, else
``http.statefulBinding``, else ``http.statefulOperation``), a stream (``http.sse`` or
``http.chunked``), ``http.responses`` taken in turn or at random, or the static/templated
``http.response``; with ``http.validation`` the
request is checked first. With ``http.scenario`` the mock matches only in its
``requiredState`` and moves the scenario to its ``newState`` when it answers.

Source: SPEC "HTTP mock", "Extend binding"; behavior notes §5 (precedence), §7 (validation),
§9 (streams). Django-free.
"""
from __future__ import annotations

from typing import Any

from mocks.core.responses import CompiledResponse
from mocks.protocols import CompileContext, CompiledMock
from mocks.protocols.http.config import HttpMock
from mocks.protocols.http.matcher import Candidate, compile_matcher, precedence_key
from mocks.protocols.http.scenarios import ScenarioStore, scenario_action, scenario_condition
from mocks.protocols.http.sequence import ResponseSequence
from tables.binding import BoundAction, binding_of
from tables.store import TableStore


class HttpHandler:
    """Compiles ``http`` mocks (see the module docstring)."""

    mock_type = "http"
    config_model = HttpMock

    def compile(self, mock: Any, context: CompileContext) -> CompiledMock:
        """One :class:`~mocks.protocols.http.matcher.Candidate` for ``mock``.

        A bound mock answers from ``context.tables`` (a throw-away store when None, for
        validation only). Raises :class:`~mocks.core.errors.ConfigError` naming the key
        (``mocks[3].http.matcher.path``).
        """
        return CompiledMock(candidates=(compile_candidate(mock, context),))


def compile_candidate(mock: Any, context: CompileContext) -> Candidate:
    """The :class:`Candidate` of the ``http`` mock ``mock`` (see :class:`HttpHandler`).

    Raises :class:`~mocks.core.errors.ConfigError` naming the offending key.
    """
    key_path = context.key_path
    http = mock.http
    # Scenario state lives on the engine (kept across recompiles); validating compiles
    # get a throw-away store.
    scenarios = context.scenarios if context.scenarios is not None else ScenarioStore()
    required = scenario_condition(mock, scenarios)
    matcher = compile_matcher(http.matcher, f"{key_path}.http.matcher",
                              (required,) if required is not None else ())
    binding = context.binding
    if binding is None and http.stateful_binding is not None:
        binding = binding_of(http.stateful_binding, f"{key_path}.http.statefulBinding")
    if binding is None and http.stateful_operation:
        from tables.operations import operation_binding  # custom operations load when used

        # `statefulOperation: <name>` is the custom action of a binding without a table.
        binding = operation_binding(http.stateful_operation,
                                    f"{key_path}.http.statefulOperation")
    # Compiled before the action so that a bad rule is reported even for a bound mock.
    validator = None
    if http.validation is not None:  # the validation rules load with the first such mock
        from mocks.protocols.http.validation import compile_request_validation

        validator = compile_request_validation(http.validation, f"{key_path}.http.validation")
    action: Any
    if binding is not None:
        tables = context.tables if context.tables is not None else TableStore()
        action = BoundAction(binding, tables, http.response, http.matcher,
                             f"{key_path}.http.response", http.credential_query_params,
                             http.declared_query_params)
    elif http.sse is not None or http.chunked is not None:
        # The SSE/chunked compilers (and their config models) load with the first stream.
        from mocks.protocols.streaming.actions import compile_stream_action

        action = compile_stream_action(http, f"{key_path}.http", context.base_dir,
                                       context.body_file_roots)
    elif http.responses is not None:
        action = ResponseSequence(
            [CompiledResponse(response, f"{key_path}.http.responses[{index}]",
                              context.base_dir, context.body_file_roots)
             for index, response in enumerate(http.responses)],
            http.response_mode or "sequential")
    else:
        action = CompiledResponse(http.response, f"{key_path}.http.response", context.base_dir,
                                  context.body_file_roots)
    action = scenario_action(mock, scenarios, action)
    if validator is not None:
        from mocks.protocols.http.validation import validating_action

        action = validating_action(validator, action)
    label = http.matcher.path or http.matcher.path_pattern or "*"
    return Candidate(mock_id=mock.id, name=mock.name, matcher=matcher,
                     key=precedence_key(matcher.specificity, matcher.condition_count,
                                        http.priority, context.order),
                     action=action, path_template=label)


#: The registered handler object (:data:`mocks.protocols.PROTOCOLS`).
HANDLER = HttpHandler()
