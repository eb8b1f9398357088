"""The HTTP protocol handler: plain HTTP mocks (matcher conditions, request validation,
static, templated, bound and streaming responses).

Owns: one condition class per matcher field (:mod:`.conditions`), request validation
(:mod:`.validation`) and the handler that compiles an ``http`` mock into a match candidate
(:mod:`.handler`). Django-free.
"""
