# mockd: one image for `mockd start` (admin + mock server) and `mockd engine` (replicas).
#
#   docker build -t mockd .
#   docker run --rm -p 4280:4280 -p 4290:4290 -v "$PWD/examples:/config:ro" \
#       -e MOCKD_API_KEY=mk_change_me mockd start --host 0.0.0.0 -c /config/quickstart.yaml
#
# Ports: 4280 mock server (data plane, /health without a key), 4290 admin API (key required
# except /health, /ready, /metrics), 4281 engine control of `mockd engine` (token required).
# gRPC and MQTT mocks listen on the ports their config names: publish those too.
# Volumes: /config (config files, read-only is fine), /data (MOCKD_DATA_DIR: SQLite store,
# admin-api-key, engine-token, files/ for bodyFile). See docs/deployment.md.

ARG PYTHON_IMAGE=python:3.11-slim

# ---- build: a virtualenv with mockd and its dependencies (wheels only, no compiler) ----
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /app
# Dependencies first, so that a source change does not reinstall them.
COPY pyproject.toml README.md LICENSE ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
 && pip install --only-binary=:all: -r /tmp/requirements.txt
COPY . .
# Editable: Django finds templates/ and static/ beside the packages (settings.BASE_DIR).
RUN pip install --no-deps -e . \
 && python -m compileall -q mockd mockd_project mocks tables oidc proxy recordings chaos

# ---- runtime ----
FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="mockd" \
      org.opencontainers.image.description="Local multi-protocol mock server" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --system --gid 10001 mockd \
 && useradd --system --uid 10001 --gid mockd --home-dir /home/mockd --create-home mockd \
 && mkdir -p /config /data \
 && chown mockd:mockd /data && chmod 0700 /data
COPY --from=build /opt/venv /opt/venv
COPY --from=build /app /app
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    MOCKD_DATA_DIR=/data \
    MOCKD_HEALTH_URL=http://127.0.0.1:4280/health
USER mockd
WORKDIR /home/mockd
VOLUME ["/config", "/data"]
EXPOSE 4280 4290 4281
# No curl in the image: the standard library asks the data port's /health (no key needed).
# `mockd start --engines-only` has no data port: set MOCKD_HEALTH_URL to
# http://127.0.0.1:4290/health (the admin's /health also answers without a key).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os,sys,urllib.request as u; sys.exit(0 if u.urlopen(os.environ['MOCKD_HEALTH_URL'], timeout=2).status == 200 else 1)"]
ENTRYPOINT ["mockd"]
# Binding every interface is what a container needs; the admin still requires its API key
# (MOCKD_API_KEY, else /data/admin-api-key, generated on first start).
CMD ["start", "--host", "0.0.0.0", "--port", "4280", "--admin-port", "4290"]
