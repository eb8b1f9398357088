"""Ready-made mock templates the dashboard offers, per mock type (behavior notes §1 "Other
routes": ``/templates``).

A template is ``{id, type, name, description, mock, config?}``:

* ``mock``: a mock document without an id, valid for ``POST /mocks`` as it is (the config
  schema :class:`mocks.config.Mock` accepts it and it compiles);
* ``config``: only for templates that need more than one mock or a table (a stateful CRUD
  resource): a config document ``{version, tables, mocks}`` for ``POST /config`` that sets the
  whole thing up; ``mock`` is then its first mock.

Templates exist for the mock types that are served (``http``, ``oauth``); types whose handler
is not written yet have none. Paths are examples under ``/api`` (or ``/auth`` for the identity
provider) that users edit before saving.

Who may call it: the admin API (:mod:`mocks.api_extras`), tests. Pure data; Django-free.
"""
from __future__ import annotations

import copy
from typing import Any

_JSON = {"Content-Type": "application/json"}

#: ``(action, method, on the item path)`` of a CRUD resource's bound mocks.
_CRUD_ACTIONS = (("list", "GET", False), ("create", "POST", False), ("get", "GET", True),
                 ("update", "PUT", True), ("patch", "PATCH", True), ("delete", "DELETE", True))


def _crud_config(table: str, path: str) -> dict[str, Any]:
    """A table with seed items and one bound mock per action on ``path`` and ``path/{id}``."""
    mocks = [{"type": "http", "name": f"{table} {action}", "http": {
        "matcher": {"method": method, "path": f"{path}/{{id}}" if on_item else path},
        "statefulBinding": {"table": table, "action": action}}}
        for action, method, on_item in _CRUD_ACTIONS]
    return {"version": "1.0",
            "tables": [{"name": table, "idStrategy": "sequence", "seedData": [
                {"id": 1, "name": "Ada Lovelace", "email": "ada@example.com"},
                {"id": 2, "name": "Alan Turing", "email": "alan@example.com"}]}],
            "mocks": mocks}


_CRUD = _crud_config("users", "/api/users")

#: Every template, grouped by mock type in registry order.
TEMPLATES: tuple[dict[str, Any], ...] = (
    {"id": "http-json", "type": "http", "name": "JSON REST answer",
     "description": "GET answers a fixed JSON list with 200 and Content-Type "
                    "application/json.",
     "mock": {"type": "http", "name": "List products", "http": {
         "matcher": {"method": "GET", "path": "/api/products"},
         "response": {"statusCode": 200, "headers": _JSON, "body": [
             {"id": 1, "name": "Keyboard", "price": 49.9},
             {"id": 2, "name": "Mouse", "price": 19.9}]}}}},
    {"id": "http-templated", "type": "http", "name": "Templated answer",
     "description": "The body is computed per request: the path parameter, a query "
                    "parameter with a default, a fresh UUID, fake data and the current time.",
     "mock": {"type": "http", "name": "Get order", "http": {
         "matcher": {"method": "GET", "path": "/api/orders/{id}"},
         "response": {"statusCode": 200, "headers": {**_JSON, "X-Request-Id": "{{uuid}}"},
                      "body": {"id": "{{request.pathParam.id}}",
                               "currency": "{{default(request.query.currency, 'EUR')}}",
                               "customer": "{{faker.name}}",
                               "createdAt": "{{now}}"}}}}},
    {"id": "http-created", "type": "http", "name": "Created with Location",
     "description": "POST answers 201 with a Location header that counts up and echoes a "
                    "field of the JSON request body.",
     "mock": {"type": "http", "name": "Create order", "http": {
         "matcher": {"method": "POST", "path": "/api/orders"},
         "response": {"statusCode": 201, "headers": {
             **_JSON, "Location": "/api/orders/{{sequence('orders', 1000)}}"},
             "body": {"status": "created", "sku": "{{request.body.sku}}"}}}}},
    {"id": "http-error", "type": "http", "name": "Error answer",
     "description": "A 503 problem+json answer with Retry-After, to test how a client "
                    "handles an outage.",
     "mock": {"type": "http", "name": "Service unavailable", "http": {
         "matcher": {"method": "GET", "path": "/api/status"},
         "response": {"statusCode": 503, "headers": {
             "Content-Type": "application/problem+json", "Retry-After": "30"},
             "body": {"type": "about:blank", "title": "Service Unavailable", "status": 503,
                      "detail": "Down for maintenance; try again in 30 seconds"}}}}},
    {"id": "http-slow", "type": "http", "name": "Slow answer",
     "description": "Answers after a 2 second delay, to test client timeouts and spinners.",
     "mock": {"type": "http", "name": "Slow search", "http": {
         "matcher": {"method": "GET", "path": "/api/search"},
         "response": {"statusCode": 200, "headers": _JSON, "delayMs": 2000,
                      "body": {"results": []}}}}},
    {"id": "http-header-match", "type": "http", "name": "Answer for an authorised caller",
     "description": "Answers only requests with a bearer token; other requests fall "
                    "through to other mocks (or a 404 that explains the near miss).",
     "mock": {"type": "http", "name": "Current user", "http": {
         "matcher": {"method": "GET", "path": "/api/me",
                     "headers": {"Authorization": "Bearer *"}},
         "response": {"statusCode": 200, "headers": _JSON,
                      "body": {"id": "user-1", "name": "Ada Lovelace"}}}}},
    {"id": "http-validated", "type": "http", "name": "Validated request",
     "description": "Rejects a POST whose JSON body lacks a valid email or name with a "
                    "400 problem+json listing every error, else answers 201.",
     "mock": {"type": "http", "name": "Sign up", "http": {
         "matcher": {"method": "POST", "path": "/api/signups"},
         "validation": {"required": ["email", "name"], "fields": {
             "email": {"type": "string", "format": "email"},
             "name": {"type": "string", "minLength": 1, "maxLength": 100}}},
         "response": {"statusCode": 201, "headers": _JSON,
                      "body": {"email": "{{request.body.email}}", "status": "pending"}}}}},
    {"id": "http-sse", "type": "http", "name": "SSE stream",
     "description": "A server-sent events stream: three status events a second apart, then "
                    "a final event and a clean close.",
     "mock": {"type": "http", "name": "Order events", "http": {
         "matcher": {"method": "GET", "path": "/api/orders/{id}/events"},
         "sse": {"events": [
             {"type": "status", "id": "1",
              "data": {"order": "{{request.pathParam.id}}", "state": "packed"}},
             {"type": "status", "id": "2", "data": {"state": "shipped"}},
             {"type": "status", "id": "3", "data": {"state": "delivered"}}],
             "timing": {"fixedDelay": 1000},
             "lifecycle": {"termination": {"type": "graceful",
                                           "finalEvent": {"type": "done", "data": "bye"}}}}}}},
    {"id": "http-llm-chat", "type": "http", "name": "LLM chat stream",
     "description": "An OpenAI-compatible streaming chat completion: one chunk per token, "
                    "then data: [DONE]; official SDKs read it as the real API.",
     "mock": {"type": "http", "name": "Chat completions", "http": {
         "matcher": {"method": "POST", "path": "/v1/chat/completions"},
         "sse": {"template": "llm-chat", "templateParams": {
             "tokens": ["Hello", "!", " How", " can", " I", " help", "?"],
             "model": "gpt-4-mock", "finishReason": "stop", "delayPerToken": 50,
             "includeDone": True}}}}},
    {"id": "http-ndjson", "type": "http", "name": "NDJSON stream",
     "description": "A chunked application/x-ndjson answer: one JSON object per line, a "
                    "quarter second apart.",
     "mock": {"type": "http", "name": "Export", "http": {
         "matcher": {"method": "GET", "path": "/api/export.ndjson"},
         "chunked": {"ndjsonItems": [{"id": 1}, {"id": 2}, {"id": 3}], "chunkDelay": 250}}}},
    {"id": "http-crud", "type": "http", "name": "Stateful CRUD resource",
     "description": "A users table with two seed items and six mocks bound to it (list, "
                    "create, get, update, patch, delete on /api/users and /api/users/{id}): "
                    "what is created can be read back. Apply 'config' with POST /config.",
     "mock": _CRUD["mocks"][0], "config": _CRUD},
    {"id": "oauth-oidc", "type": "oauth", "name": "OpenID Connect provider",
     "description": "A local OAuth 2.0 / OpenID Connect provider under /auth: discovery, "
                    "JWKS, a confidential and a public (PKCE) client, and one user.",
     "mock": {"type": "oauth", "name": "Identity provider", "oauth": {
         "issuer": "http://localhost:4280/auth",
         "defaultScopes": ["openid", "profile", "email"],
         "clients": [
             {"clientId": "web-app", "clientSecret": "web-secret",
              "redirectUris": ["http://localhost:3000/callback"],
              "grantTypes": ["authorization_code", "client_credentials", "refresh_token",
                             "password"]},
             {"clientId": "spa", "clientSecret": "",
              "redirectUris": ["http://localhost:3000/callback"],
              "grantTypes": ["authorization_code", "refresh_token"]}],
         "users": [{"username": "alice", "password": "wonderland", "claims": {
             "sub": "user-alice", "email": "alice@example.com", "name": "Alice Liddell"}}]}}},
    {"id": "graphql-users", "type": "graphql", "name": "GraphQL users API",
     "description": "A GraphQL API at /graphql from a schema alone: every field without a "
                    "resolver answers fake data of its type; Query.user echoes its id "
                    "argument, and Subscription.userAdded streams two events.",
     "mock": {"type": "graphql", "name": "Users API", "graphql": {
         "path": "/graphql",
         "schema": "type User { id: ID!, name: String, email: String, age: Int }\n"
                   "type Query { user(id: ID!): User, users: [User!]! }\n"
                   "type Mutation { createUser(name: String!): User }\n"
                   "type Subscription { userAdded: User }",
         "introspection": True,
         "resolvers": {"Query.user": {"response": {"id": "{{args.id}}",
                                                   "name": "{{faker.name}}"}}},
         "subscriptions": {"userAdded": {
             "events": [{"data": {"id": "1", "name": "Ada"}},
                        {"data": {"id": "2", "name": "Alan"}}],
             "timing": {"fixedDelay": "500ms"}}}}}},
    {"id": "websocket-chat", "type": "websocket", "name": "WebSocket chat room",
     "description": "A chat endpoint at /ws/chat/{room}: answers ping with pong, greets a "
                    "join message by name and room, and echoes anything else.",
     "mock": {"type": "websocket", "name": "Chat room", "websocket": {
         "path": "/ws/chat/{room}",
         "matchers": [
             {"match": {"type": "exact", "value": "ping"},
              "response": {"type": "text", "value": "pong"}},
             {"match": {"type": "json", "path": "$.type", "value": "join"},
              "response": {"type": "json", "value": {
                  "event": "joined", "user": "{{message.user}}",
                  "room": "{{request.pathParam.room}}"}}}],
         "echoMode": True}}},
    {"id": "soap-service", "type": "soap", "name": "SOAP service",
     "description": "A SOAP 1.1/1.2 service at /soap/users: GetUser answers the id it was "
                    "sent (read with XPath), DeleteUser answers a SOAP fault.",
     "mock": {"type": "soap", "name": "User service", "soap": {
         "path": "/soap/users",
         "operations": {
             "GetUser": {"soapAction": "urn:users/GetUser",
                         "response": "<GetUserResponse><id>{{xpath '//GetUser/id'}}</id>"
                                     "<name>{{faker.name}}</name></GetUserResponse>"},
             "DeleteUser": {"soapAction": "urn:users/DeleteUser",
                            "fault": {"code": "soap:Client",
                                      "string": "users cannot be deleted here"}}}}}},
    {"id": "grpc-service", "type": "grpc", "name": "gRPC service",
     "description": "A gRPC Greeter on port 50051 from an inline .proto, with reflection: "
                    "SayHello greets the name it was sent, SayHello for 'nobody' answers "
                    "NOT_FOUND with error details.",
     "mock": {"type": "grpc", "name": "Greeter", "grpc": {
         "port": 50051, "reflection": True,
         "protoContent": 'syntax = "proto3";\npackage helloworld;\n'
                         'service Greeter { rpc SayHello (HelloRequest) returns (HelloReply); }\n'
                         'message HelloRequest { string name = 1; }\n'
                         'message HelloReply { string message = 1; }\n',
         "services": {"helloworld.Greeter": {"methods": {"SayHello": {
             "response": {"message": "Hello {{request.name}}"},
             "variants": [{"match": {"request": {"name": "nobody"}},
                           "error": {"code": "NOT_FOUND", "message": "no such person",
                                     "details": [{
                                         "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                         "reason": "UNKNOWN_PERSON",
                                         "domain": "example.com"}]}}]}}}}}}},
    {"id": "mqtt-devices", "type": "mqtt", "name": "MQTT broker with devices",
     "description": "An MQTT broker on port 1883: five simulated thermostats publish "
                    "sensors/<device>/temp every 5 s; a client publishing "
                    "{\"level\": N} on cmd/<device>/set gets an ack on cmd/<device>/ack.",
     "mock": {"type": "mqtt", "name": "Thermostats", "mqtt": {
         "port": 1883, "topics": [
             {"topic": "sensors/+/temp", "qos": 0,
              "deviceSimulation": {"enabled": True, "deviceCount": 5,
                                   "deviceIdPattern": "thermo-{n}"},
              "messages": [{"payload": '{"device": "{{device.id}}", '
                                       '"celsius": {{random.int(18, 24)}}}',
                            "interval": "5s", "repeat": True}]},
             {"topic": "cmd/+/set", "qos": 1, "onPublish": {"response": {
                 "topic": "cmd/{{wildcard.0}}/ack",
                 "payload": '{"device": "{{wildcard.0}}", "level": "{{payload.level}}", '
                            '"ok": true}'}}}]}}},
)


def list_templates(mock_type: str | None = None) -> list[dict[str, Any]]:
    """Copies of the templates (all, or those of ``mock_type``), in :data:`TEMPLATES` order."""
    return [copy.deepcopy(template) for template in TEMPLATES
            if mock_type is None or template["type"] == mock_type]


def get_template(template_id: str) -> dict[str, Any] | None:
    """A copy of one template, or None."""
    for template in TEMPLATES:
        if template["id"] == template_id:
            return copy.deepcopy(template)
    return None
