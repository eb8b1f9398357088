"""The "Try it" area (``#/try``) in Chromium, each panel used once against a real mock of its
kind made through the admin API: an HTTP request sent from the page and its request-log entry,
a GraphQL query in GraphiQL, a gRPC call built from the mock's descriptors, a WebSocket echo,
an SSE stream's events, and an MQTT message published and received over the broker's
WebSocket listener."""
from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import WAIT_MS, screenshot
from tests.helpers import free_port

GREETER = (Path(__file__).resolve().parents[2] / "examples" / "greeter.proto").read_text()


@pytest.fixture(scope="module")
def mocks(admin_api):
    """One mock of each kind the panels call."""
    created = [
        {"id": "try-http", "type": "http", "http": {
            "matcher": {"method": "POST", "path": "/try/echo"},
            "response": {"statusCode": 201, "headers": {"Content-Type": "application/json"},
                         "body": '{"got": "{{request.body.name}}"}'}}},
        {"id": "try-sse", "type": "http", "http": {
            "matcher": {"method": "GET", "path": "/try/events"},
            "sse": {"events": [{"type": "tick", "data": {"n": 1}},
                               {"data": "plain event"}],
                    "timing": {"fixedDelay": 100}}}},
        {"id": "try-ws", "type": "websocket", "websocket": {"path": "/try/ws", "echoMode": True}},
        {"id": "try-grpc", "type": "grpc", "grpc": {
            "port": free_port(), "protoContent": GREETER,
            "services": {"helloworld.Greeter": {"methods": {"SayHello": {
                "response": {"message": "Hi {{request.name}}"}}}}}}},
        {"id": "try-mqtt", "type": "mqtt", "mqtt": {
            "port": free_port(), "websocket": {"port": free_port(), "path": "/mqtt"},
            "topics": [{"topic": "try/#"}]}},
        {"id": "try-graphql", "type": "graphql", "graphql": {
            "path": "/try/graphql", "introspection": True,
            "schema": "type Query { hello(name: String): String }",
            "resolvers": {"Query.hello": {"response": "hello from the mock"}}}},
    ]
    for mock in created:
        answer = admin_api.post("/mocks", json=mock)
        assert answer.status_code == 201, answer.text
    return created


def open_tab(page, server, tab):
    page.goto(f"{server.admin}/#/try?tab={tab}")
    page.get_by_test_id(f"try-panel-{tab}").wait_for()


def test_http_request_and_its_log_entry(page, dashboard_server, mocks):
    open_tab(page, dashboard_server, "http")
    page.select_option("#try-http-mock", "try-http")
    expect(page.locator("#try-http-method")).to_have_value("POST")
    expect(page.locator("#try-http-path")).to_have_value("/try/echo")
    page.fill("#try-http-headers", "Content-Type: application/json")
    page.fill("#try-http-body", '{"name": "Ada"}')
    page.get_by_test_id("try-http-send").click()
    expect(page.get_by_test_id("try-http-status")).to_have_text("201 Created")
    expect(page.get_by_test_id("try-http-response")).to_contain_text('"got": "Ada"')
    expect(page.get_by_test_id("try-http-matched")).to_have_text("try-http")
    screenshot(page, "try-http")


def test_graphiql_runs_a_query(page, dashboard_server, mocks):
    open_tab(page, dashboard_server, "graphql")
    expect(page.get_by_test_id("try-graphql-endpoint")).to_have_text(
        dashboard_server.base + "/try/graphql")
    editor = page.locator(".graphiql-query-editor .CodeMirror").first
    editor.wait_for()
    page.evaluate("q => document.querySelector('.graphiql-query-editor .CodeMirror')"
                  ".CodeMirror.setValue(q)", "{ hello(name: \"x\") }")
    page.locator(".graphiql-execute-button").click()
    expect(page.locator(".graphiql-response")).to_contain_text("hello from the mock")
    screenshot(page, "try-graphql")


def test_grpc_call_from_the_described_form(page, dashboard_server, mocks):
    open_tab(page, dashboard_server, "grpc")
    expect(page.locator("#try-grpc-method")).to_have_value("/helloworld.Greeter/SayHello")
    page.fill("[data-testid=try-grpc-fields] input[data-field=name]", "Ada")
    page.get_by_test_id("try-grpc-call").click()
    expect(page.get_by_test_id("try-grpc-output")).to_contain_text('"message": "Hi Ada"')
    expect(page.get_by_test_id("try-grpc-status")).to_contain_text("status OK (0)")
    screenshot(page, "try-grpc")


def test_websocket_console_echo(page, dashboard_server, mocks):
    open_tab(page, dashboard_server, "websocket")
    expect(page.locator("#try-ws-path")).to_have_value("/try/ws")
    page.get_by_test_id("try-ws-connect").click()
    expect(page.get_by_test_id("try-ws-state")).to_have_text("open")
    page.fill("#try-ws-message", "ping from the page")
    page.get_by_test_id("try-ws-send").click()
    expect(page.get_by_test_id("try-ws-log")).to_contain_text("← ping from the page")
    page.get_by_test_id("try-ws-disconnect").click()
    expect(page.get_by_test_id("try-ws-state")).to_have_text("closed")


def test_sse_viewer_shows_the_events(page, dashboard_server, mocks):
    open_tab(page, dashboard_server, "sse")
    expect(page.locator("#try-sse-path")).to_have_value("/try/events")
    page.get_by_test_id("try-sse-start").click()
    log = page.get_by_test_id("try-sse-log")
    expect(log).to_contain_text('tick: {"n":1}')
    expect(log).to_contain_text("message: plain event")
    page.get_by_test_id("try-sse-stop").click()
    screenshot(page, "try-sse")


def test_mqtt_publish_and_subscribe_over_websocket(page, dashboard_server, mocks):
    open_tab(page, dashboard_server, "mqtt")
    ws = mocks[4]["mqtt"]["websocket"]
    expect(page.locator("#try-mqtt-url")).to_have_value(f"ws://127.0.0.1:{ws['port']}/mqtt")
    page.fill("#try-mqtt-topic", "try/#")
    page.get_by_test_id("try-mqtt-connect").click()
    expect(page.get_by_test_id("try-mqtt-state")).to_have_text("connected")
    log = page.get_by_test_id("try-mqtt-log")
    expect(log).to_contain_text("subscribed to try/#")
    page.fill("#try-mqtt-pub-topic", "try/room")
    page.fill("#try-mqtt-payload", '{"t": 21}')
    page.get_by_test_id("try-mqtt-publish").click()
    expect(log).to_contain_text('← try/room: {"t": 21}')
    screenshot(page, "try-mqtt")
    page.get_by_test_id("try-mqtt-disconnect").click()
