"""The ceiling for the data-plane benchmark: a raw ASGI hello-world under the same server
settings mockd uses (uvicorn, uvloop, httptools, lifespan off, no access log, no proxy
headers).

Run: python bench/raw_asgi.py PORT
"""
from __future__ import annotations

import sys

import uvicorn

BODY = b'{"message":"hello"}'
HEADERS = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": BODY})


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), http="httptools", loop="uvloop",
                lifespan="off", access_log=False, log_level="warning", server_header=False,
                proxy_headers=False)
