"""The deployment files (issue #32 item 4): ``Dockerfile``, ``deploy/compose.yaml``,
``deploy/haproxy.cfg`` and ``deploy/kubernetes/*.yaml`` are parsed and their references
checked, without Docker or a cluster:

* every ``mockd`` command line (the image's ``ENTRYPOINT`` + ``CMD``, compose ``command``,
  Kubernetes ``args``) parses with the click command of ``mockd_project/cli.py``, so a renamed
  or missing flag fails here, naming it;
* compose: ``depends_on`` names services, every host in a command URL or HAProxy backend is a
  service listening on that port, named volumes are declared, bind mounts exist, the admin's
  Host guard lets the engines in;
* Kubernetes: selectors match pod labels, Service ``targetPort`` names a container port,
  Secrets, ConfigMaps and claims referenced exist, URL hosts are Services with that port, and
  every HTTP probe asks a path the server answers without the API key (the data plane's
  built-in routes, driven in process; the admin's key-exempt routes).
"""
from __future__ import annotations

import asyncio
import json
import re
import shlex
from functools import cache
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

import click
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
HAPROXY = DEPLOY / "haproxy.cfg"
KUBERNETES = DEPLOY / "kubernetes"
DOCKERFILE = ROOT / "Dockerfile"

#: Ports of the images that are not mockd (their documented defaults).
OTHER_IMAGE_PORTS = {"redis": 6379}
#: ``mockd`` defaults (SPEC "Ports"): data plane, admin, engine control.
DEFAULT_PORTS = {"data": 4280, "admin": 4290, "engine": 4281}
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


# ---------------------------------------------------------------------------- mockd argv
def mockd_command(name: str) -> click.Command:
    """The click command ``mockd NAME`` (``start``, ``engine``...), from ``cli.main``."""
    from mockd_project.cli import main

    context = click.Context(main)
    command = main.get_command(context, name)
    assert command is not None, f"'mockd {name}' is not a command of mockd_project/cli.py"
    return command


def check_mockd_argv(argv: list[str], where: str) -> dict[str, Any]:
    """Parse ``argv`` (``[subcommand, options...]``, without ``mockd``) with the real click
    command and return its parameters; an unknown flag, a missing value or a bad choice fails
    the test naming ``where`` and the flag."""
    assert argv, f"{where}: empty mockd command"
    command = mockd_command(argv[0])
    try:
        context = command.make_context(argv[0], list(argv[1:]))
    except click.NoSuchOption as error:
        pytest.fail(f"{where}: 'mockd {argv[0]}' has no option {error.option_name!r} "
                    f"(mockd_project/cli.py)")
    except click.ClickException as error:
        pytest.fail(f"{where}: 'mockd {' '.join(argv)}' is refused by click: "
                    f"{error.format_message()}")
    return context.params


def ports_of(params: dict[str, Any]) -> dict[str, int]:
    """``{"data", "admin", "engine"}`` ports a parsed ``mockd start|engine`` listens on."""
    return {"data": params.get("port") or DEFAULT_PORTS["data"],
            "admin": params.get("admin_port") or DEFAULT_PORTS["admin"],
            "engine": params.get("engine_port") or DEFAULT_PORTS["engine"]}


def urls_in(values: list[str]) -> Iterator[tuple[str, int | None]]:
    """``(host, port)`` of every ``scheme://host:port`` value, loopback hosts left out."""
    for value in values:
        for match in re.finditer(r"\b[a-z][a-z0-9+.-]*://[^\s\"']+", str(value)):
            parts = urlsplit(match.group(0))
            if parts.hostname and parts.hostname not in LOOPBACK:
                yield parts.hostname, parts.port


# ---------------------------------------------------------------------------- Dockerfile
@cache
def dockerfile() -> dict[str, list[str]]:
    """``{INSTRUCTION: [argument text, ...]}`` of the runtime (last) stage."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text(encoding="utf-8"))
    stages: list[dict[str, list[str]]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, rest = line.partition(" ")
        if instruction.upper() == "FROM":
            stages.append({})
        if stages:
            stages[-1].setdefault(instruction.upper(), []).append(rest.strip())
    return stages[-1]


def docker_env() -> dict[str, str]:
    """The ``ENV`` values of the runtime stage."""
    env: dict[str, str] = {}
    for text in dockerfile().get("ENV", []):
        for token in shlex.split(text):
            key, _, value = token.partition("=")
            env[key] = value
    return env


def test_dockerfile_runs_mockd_as_non_root_with_volumes_and_health_check():
    stage = dockerfile()
    assert json.loads(stage["ENTRYPOINT"][-1]) == ["mockd"]
    params = check_mockd_argv(json.loads(stage["CMD"][-1]), "Dockerfile CMD")
    assert params["host"] == "0.0.0.0"
    ports = ports_of(params)
    exposed = {int(port) for text in stage["EXPOSE"] for port in text.split()}
    assert {ports["data"], ports["admin"], DEFAULT_PORTS["engine"]} <= exposed
    user = stage["USER"][-1]
    assert user not in ("root", "0") and not user.startswith("0:")
    volumes = {path for text in stage["VOLUME"] for path in json.loads(text)}
    env = docker_env()
    assert volumes == {"/config", "/data"} and env["MOCKD_DATA_DIR"] == "/data"
    # The health check asks the data port's /health with the standard library (no curl).
    health = stage["HEALTHCHECK"][-1]
    assert "CMD" in health and "python" in health and "curl" not in health
    url = urlsplit(env[re.search(r"environ\['(\w+)'\]", health).group(1)])
    assert (url.hostname, url.port, url.path) == ("127.0.0.1", ports["data"], "/health")
    assert url.path in data_plane_answers()


def test_dockerignore_keeps_the_image_small_and_secret_free():
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert {".git", ".venv", "tests", "**/__pycache__"} <= set(ignored)
    assert not {"mockd", "mocks", "templates", "static", "pyproject.toml"} & set(ignored)


# ---------------------------------------------------------------------------- compose
@cache
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


def is_mockd(service: dict[str, Any]) -> bool:
    return "build" in service or str(service.get("image", "")).startswith("mockd")


def compose_listening_ports() -> dict[str, set[int]]:
    """``{service: ports it listens on}``: from the mockd command, else the image's default."""
    ports: dict[str, set[int]] = {}
    for name, service in compose()["services"].items():
        if is_mockd(service):
            params = check_mockd_argv(service["command"], f"compose service {name}")
            listening = ports_of(params)
            ports[name] = ({listening["admin"]} if params.get("engines_only") else
                           {listening["data"], listening["engine"]}
                           if service["command"][0] == "engine" else
                           {listening["data"], listening["admin"]})
        else:
            image = str(service.get("image", "")).split("/")[-1].split(":")[0]
            ports[name] = {OTHER_IMAGE_PORTS[image]} if image in OTHER_IMAGE_PORTS else set()
    return ports


def test_compose_mockd_commands_parse_and_name_the_scale_flags():
    services = compose()["services"]
    engines = [name for name, service in services.items()
               if is_mockd(service) and service["command"][0] == "engine"]
    assert len(engines) == 3
    for name in engines:
        params = check_mockd_argv(services[name]["command"], f"compose service {name}")
        assert params["host"] == "0.0.0.0"
        assert params["join"].startswith("http://") and params["join_api_key"]
        assert params["state_store"].startswith("redis://")
        # The admin pushes to the engine-control port: bound on every interface, advertised
        # under this service's own name and port.
        url = urlsplit(params["engine_url"])
        assert params["engine_host"] == "0.0.0.0"
        assert (url.hostname, url.port) == (name, ports_of(params)["engine"])
    admin = check_mockd_argv(services["admin"]["command"], "compose service admin")
    assert admin["engines_only"] is True


def test_compose_references_name_services_volumes_and_files():
    document = compose()
    services = document["services"]
    declared_volumes = set(document.get("volumes") or {})
    listening = compose_listening_ports()
    for name, service in services.items():
        for dependency in service.get("depends_on") or {}:
            assert dependency in services, f"{name} depends on unknown service {dependency}"
        values = [str(item) for item in service.get("command") or []]
        values += [str(value) for value in (service.get("environment") or {}).values()]
        for host, port in urls_in(values):
            assert host in services, f"{name} names host {host!r}, not a service"
            assert port is None or port in listening[host], \
                f"{name} calls {host}:{port}; {host} listens on {sorted(listening[host])}"
        for mount in service.get("volumes") or []:
            source = mount.split(":")[0]
            if source.startswith((".", "/")):
                assert (DEPLOY / source).exists(), f"{name} mounts missing {source}"
            else:
                assert source in declared_volumes, f"{name} uses undeclared volume {source}"
        build = service.get("build")
        if build:
            assert (DEPLOY / build["context"] / build["dockerfile"]).is_file()


def test_compose_host_guards_let_callers_in_and_the_admin_config_is_mounted():
    services = compose()["services"]
    for name, service in services.items():
        for host, port in urls_in(service.get("command") or []):
            target = services[host]
            if not is_mockd(target):
                continue
            listening = ports_of(check_mockd_argv(target["command"], f"compose service {host}"))
            if port in (listening["admin"], listening["engine"]):  # the Host-guarded ports
                allowed = (target.get("environment") or {}).get("MOCKD_ALLOWED_HOSTS", "")
                names = {item.strip() for item in allowed.split(",")}
                assert host in names or "*" in names, \
                    f"{name} calls {host}:{port}, which its Host guard refuses"
    admin = services["admin"]
    params = check_mockd_argv(admin["command"], "compose service admin")
    mounts = dict(mount.split(":")[1::-1] for mount in admin["volumes"])  # target -> source
    config = Path(params["config"])
    assert (DEPLOY / mounts[str(config.parent)] / config.name).is_file()
    # --engines-only has no data port: its health check asks the admin's /health.
    url = urlsplit(admin["environment"]["MOCKD_HEALTH_URL"])
    assert url.port == ports_of(params)["admin"] and url.path in admin_answers()


def haproxy_backends() -> list[tuple[str, str, int]]:
    """``(server name, host, port)`` of every ``server`` line of haproxy.cfg."""
    servers = []
    for line in HAPROXY.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if fields[:1] == ["server"]:
            host, _, port = fields[2].rpartition(":")
            servers.append((fields[1], host, int(port)))
    return servers


def test_haproxy_round_robins_over_the_engines_data_ports_with_health_checks():
    services = compose()["services"]
    text = HAPROXY.read_text(encoding="utf-8")
    assert re.search(r"^\s*balance\s+roundrobin\s*$", text, re.M)
    check_path = re.search(r"http-check send meth GET uri (\S+)", text).group(1)
    assert check_path in data_plane_answers()
    backends = haproxy_backends()
    engines = {name for name, service in services.items()
               if is_mockd(service) and service["command"][0] == "engine"}
    assert {host for _, host, _ in backends} == engines
    for _, host, port in backends:
        params = check_mockd_argv(services[host]["command"], f"compose service {host}")
        assert port == ports_of(params)["data"], f"HAProxy sends {host}:{port}"
    haproxy = next(service for service in services.values()
                   if str(service.get("image", "")).startswith("haproxy"))
    assert engines <= set(haproxy["depends_on"])
    assert any(mount.startswith("./haproxy.cfg:") for mount in haproxy["volumes"])


# ---------------------------------------------------------------------------- Kubernetes
@cache
def kubernetes() -> list[dict[str, Any]]:
    documents = []
    for path in sorted(KUBERNETES.glob("*.yaml")):
        documents += [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8"))
                      if doc and doc.get("kind") != "Kustomization"]
    return documents


def of_kind(kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in kubernetes() if doc["kind"] == kind}


def pod_specs() -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """``(deployment name, pod labels, pod spec)``."""
    for name, deployment in of_kind("Deployment").items():
        template = deployment["spec"]["template"]
        yield name, template["metadata"]["labels"], template["spec"]


def container_ports(container: dict[str, Any]) -> dict[str | int, int]:
    """``{name or number: containerPort}`` of a container."""
    ports: dict[str | int, int] = {}
    for port in container.get("ports") or []:
        ports[port["containerPort"]] = port["containerPort"]
        if "name" in port:
            ports[port["name"]] = port["containerPort"]
    return ports


def test_kustomization_lists_every_manifest():
    listed = set(yaml.safe_load((KUBERNETES / "kustomization.yaml").read_text())["resources"])
    assert listed == {path.name for path in KUBERNETES.glob("*.yaml")} - {"kustomization.yaml"}


def test_kubernetes_selectors_match_pod_labels_and_target_ports_exist():
    pods = list(pod_specs())
    for name, labels, _ in pods:
        selector = of_kind("Deployment")[name]["spec"]["selector"]["matchLabels"]
        assert selector.items() <= labels.items(), f"Deployment {name} selects no pod of its own"
    for name, service in of_kind("Service").items():
        selector = service["spec"]["selector"]
        selected = [spec for _, labels, spec in pods if selector.items() <= labels.items()]
        assert len(selected) == 1, f"Service {name} selects {len(selected)} Deployments"
        ports = {key: value for container in selected[0]["containers"]
                 for key, value in container_ports(container).items()}
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in ports, f"Service {name} targets {port['targetPort']}"
    assert of_kind("Deployment")["mockd-engine"]["spec"]["replicas"] == 3


def test_kubernetes_references_exist_and_urls_name_services():
    secrets, config_maps = of_kind("Secret"), of_kind("ConfigMap")
    claims = of_kind("PersistentVolumeClaim")
    service_ports = {name: {port["port"] for port in service["spec"]["ports"]}
                     for name, service in of_kind("Service").items()}
    for name, _, spec in pod_specs():
        for volume in spec.get("volumes") or []:
            if "configMap" in volume:
                assert volume["configMap"]["name"] in config_maps
            if "persistentVolumeClaim" in volume:
                assert volume["persistentVolumeClaim"]["claimName"] in claims
        for container in spec["containers"]:
            for variable in container.get("env") or []:
                reference = (variable.get("valueFrom") or {}).get("secretKeyRef")
                if reference:
                    secret = secrets[reference["name"]]
                    assert reference["key"] in {**secret.get("data", {}),
                                                **secret.get("stringData", {})}
            defined = {variable["name"] for variable in container.get("env") or []}
            for host, port in urls_in(container.get("args") or []):
                variable = re.fullmatch(r"\$\((\w+)\)", host, re.I)
                if variable:  # $(POD_IP): Kubernetes expands it from the container's env
                    assert variable.group(1).upper() in defined, f"{name} uses unset {host}"
                    continue
                assert host in service_ports, f"{name} names host {host!r}, not a Service"
                assert port in service_ports[host], f"{name} calls {host}:{port}"
            mounted = {mount["name"] for mount in container.get("volumeMounts") or []}
            assert mounted <= {volume["name"] for volume in spec.get("volumes") or []}
    # The ConfigMap carries the same config as deploy/config/mockd.yaml.
    config = config_maps["mockd-config"]["data"]["mockd.yaml"]
    assert yaml.safe_load(config) == yaml.safe_load((DEPLOY / "config" / "mockd.yaml").read_text())


def test_kubernetes_mockd_args_parse_and_probes_ask_paths_answered_without_a_key():
    probes = 0
    for name, _, spec in pod_specs():
        for container in spec["containers"]:
            if not str(container["image"]).startswith("mockd"):
                continue
            params = check_mockd_argv(container["args"], f"Deployment {name}")
            listening = ports_of(params)
            ports = container_ports(container)
            for kind in ("readinessProbe", "livenessProbe"):
                probe = container[kind]["httpGet"]
                port = ports[probe["port"]]
                if container["args"][0] == "engine":
                    assert port == listening["data"], f"{name} {kind} asks port {port}"
                    assert probe["path"] in data_plane_answers(), f"{name} {kind}"
                else:
                    assert port == listening["admin"], f"{name} {kind} asks port {port}"
                    assert probe["path"] in admin_answers(), f"{name} {kind}"
                probes += 1
            if container["args"][0] == "engine":
                assert params["join"] and params["state_store"] and params["join_api_key"]
                assert params["engine_host"] == "0.0.0.0"
                url = urlsplit(params["engine_url"])
                assert url.port == listening["engine"] and url.port in ports.values()
                admin_env = next(c for _, _, s in pod_specs() for c in s["containers"]
                                 if c["args"][0] == "start")["env"]
                allowed = next(v["value"] for v in admin_env
                               if v["name"] == "MOCKD_ALLOWED_HOSTS").split(",")
                assert urlsplit(params["join"]).hostname in allowed
    assert probes == 4


# ---------------------------------------------------------------------------- answers
@cache
def data_plane_answers() -> frozenset[str]:
    """Probe paths the data plane answers 200 to, with the deploy config loaded, driven in
    process through :class:`mocks.engine.app.DataPlaneApp`."""
    from mocks.loader import validate_config
    from mocks.engine.app import DataPlaneApp
    from mocks.engine.core import Engine

    engine = Engine()
    config_path = DEPLOY / "config" / "mockd.yaml"
    engine.load(validate_config(yaml.safe_load(config_path.read_text())),
                base_dir=config_path.parent)
    app = DataPlaneApp(engine)

    async def status(path: str) -> int:
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "GET", "path": path, "query_string": b"",
                 "headers": [(b"host", b"engine1:4280")], "scheme": "http",
                 "server": ("127.0.0.1", 4280), "client": ("10.0.0.9", 5000)}
        await app(scope, receive, send)
        return next(m["status"] for m in sent if m["type"] == "http.response.start")

    async def answered() -> frozenset[str]:
        paths = ("/health", "/__mockd/health", "/__mockd/ready", "/ready", "/no-such-route")
        return frozenset([path for path in paths if await status(path) == 200])

    return asyncio.run(answered())


@cache
def admin_answers() -> frozenset[str]:
    """Admin paths a probe may ask: ``GET`` routes declared on the admin's health router
    (``mocks/api.py``, read as text: importing the admin API costs seconds) that need no key
    (:func:`mockd_project.auth.is_exempt`; behavior notes §1 "Health", §2 "Exempt")."""
    from mockd_project import auth

    source = (ROOT / "mocks" / "api.py").read_text(encoding="utf-8")
    declared = re.findall(r'@health_router\.get\("([^"]+)"', source)
    return frozenset(path for path in declared if auth.is_exempt(path, "GET"))


def test_answer_helpers_know_the_health_routes():
    assert {"/health", "/__mockd/ready"} <= data_plane_answers()
    assert "/no-such-route" not in data_plane_answers()  # a 404 is no answer
    assert {"/health", "/ready"} <= admin_answers() and "/status" not in admin_answers()
