"""Real SOAP clients built from the served ``?wsdl`` URL alone: zeep reaches every imported
file through the mock (``wsdl:import``, ``xs:import``, chameleon ``xs:include``, the JAX-WS
``?xsd=1`` layout), calls operations and reads the sample answers; one-way operations are
accepted with 202. The transport refuses any URL that is not on 127.0.0.1, so a file left
pointing at its production host fails the test instead of being fetched. Real files: the
example WSDLs of the npm package strong-soap (SPEC "SOAP mock"; behavior notes §10, §13)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

zeep = pytest.importorskip("zeep")
from zeep.transports import Transport  # noqa: E402

from tests.helpers import run_mockd, start_engine, start_server  # noqa: E402
from tests.soap_files import xsd_query_layout  # noqa: E402
from tests.thirdparty import npm_file  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "soap"
STRONG_SOAP = "strong-soap@" + os.environ.get("MOCKD_TEST_STRONG_SOAP", "6.0.1")
SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"


class LoopbackTransport(Transport):
    """A zeep transport that fetches and posts to 127.0.0.1 only."""

    def __init__(self) -> None:
        session = __import__("requests").Session()
        session.trust_env = False  # never a proxy
        super().__init__(session=session, timeout=10)
        self.fetched: list[str] = []

    @staticmethod
    def _check(url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname != "127.0.0.1":
            raise AssertionError(f"the client was sent to {url!r}, not to the mock")

    def load(self, url: str) -> bytes:
        self._check(url)
        self.fetched.append(url)
        return super().load(url)

    def post(self, address: str, message: str, headers: dict) -> object:
        self._check(address)
        return super().post(address, message, headers)


def client_of(url: str) -> tuple[object, LoopbackTransport]:
    transport = LoopbackTransport()
    return zeep.Client(url, transport=transport), transport


def soap_engine(folder: Path, mocks: dict[str, tuple[str, str]]) -> object:
    """``mockd engine`` serving one WSDL-only SOAP mock per ``{id: (path, wsdlFile)}``."""
    return start_engine(folder, {"version": "1.0", "mocks": [
        {"id": mock_id, "type": "soap", "soap": {"path": path, "wsdlFile": wsdl}}
        for mock_id, (path, wsdl) in mocks.items()]})


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """One engine for every WSDL of the module: the fixture layouts and, when the npm
    package can be had, strong-soap's two examples (their paths and files are their own).
    When it cannot, ``strong_soap_missing`` keeps the skip (or the CI failure) that
    :func:`npm_file` raised, for :func:`strong_soap` to raise in the tests that need it."""
    folder = tmp_path_factory.mktemp("wsdl-files")
    shutil.copytree(FIXTURES / "orders", folder / "orders")
    shutil.copy(FIXTURES / "eutils-like.wsdl", folder)
    xsd_query_layout(folder / "jaxws")
    mocks = {"orders": ("/services/orders", "orders/orders.wsdl"),
             "users": ("/soap/users", "jaxws/UserService.wsdl"),
             "eutils": ("/eutils", "eutils-like.wsdl")}
    missing = None
    try:
        for name in ("weather.wsdl", "stockquote.wsdl"):
            shutil.copy(npm_file(STRONG_SOAP, f"example/wsdls/{name}"), folder / name)
    except (pytest.skip.Exception, pytest.fail.Exception) as outcome:
        missing = outcome
    else:
        mocks.update({"weather": ("/WeatherWS/Weather.asmx", "weather.wsdl"),
                      "quotes": ("/stockquote.asmx", "stockquote.wsdl")})
    with soap_engine(folder, mocks) as process:
        process.strong_soap_missing = missing
        yield process


@pytest.mark.parametrize("port", ["OrderSoap", "OrderSoap12"])
def test_zeep_builds_the_split_layout_from_the_served_wsdl_alone(engine, port):
    client, transport = client_of(f"{engine.base}/services/orders?wsdl")
    # the WSDL, the imported WSDL and the three schema files, all from the mock
    assert len(transport.fetched) == 5
    service = client.bind("OrderService", port)
    order = service.GetOrder(id="ORD-000001")
    assert order.id == "ORD-000000" and order.status == "OPEN" and order["version"] == 1
    assert len(order.line) == 2 and order.line[0].sku == "samplexx"
    assert order.total.net.currency == "AAA"
    assert order.delivery.city == "sample" and order.pickupPoint is None
    listed = service.ListOrders()
    assert listed.count == 0 and len(listed.order) == 1
    assert service.CancelOrder(id="ORD-000001") is None  # one-way: 202, nothing to read


def test_one_way_operation_is_accepted_with_202_and_no_body(engine):
    body = (f'<s:Envelope xmlns:s="{SOAP11}"><s:Body><CancelOrder xmlns="urn:example:orders:'
            f'types"><id>ORD-000001</id></CancelOrder></s:Body></s:Envelope>')
    with httpx.Client(trust_env=False, timeout=10) as client:
        answer = client.post(f"{engine.base}/services/orders", content=body, headers={
            "Content-Type": "text/xml", "SOAPAction": '"urn:example:orders/CancelOrder"'})
    assert answer.status_code == 202 and answer.content == b""


def test_zeep_reads_the_xsd_query_layout(engine):
    client, transport = client_of(f"{engine.base}/soap/users?wsdl")
    assert transport.fetched[1] == f"{engine.base}/soap/users?xsd=1"
    user = client.bind("UserService", "UserSoap").GetUser(id="1")
    assert user.name == "sample"


def test_zeep_tells_clashing_local_names_apart(engine):
    client, _ = client_of(f"{engine.base}/eutils?wsdl")
    service = client.bind("eUtilsService", "eUtilsServiceSoap")
    assert service.run_eInfo().DbList.DbName == ["sample"]
    found = service.run_eSearch(db="pmc", term="x")
    assert found.IdList.Id == ["PMC0"] and found.Count == 0


@pytest.fixture
def strong_soap(engine):
    """The module engine, which serves strong-soap's examples; skips (or fails under CI) as
    :func:`npm_file` did when the package could not be had."""
    if engine.strong_soap_missing is not None:
        raise engine.strong_soap_missing
    return engine


@pytest.mark.parametrize("port", ["WeatherSoap", "WeatherSoap12"])
def test_zeep_calls_strong_soap_weather_example(strong_soap, port):
    client, _ = client_of(f"{strong_soap.base}/WeatherWS/Weather.asmx?wsdl")
    service = client.bind("Weather", port)
    weather = service.GetCityWeatherByZIP(ZIP="10001")
    assert weather.Success is True and weather.City == "sample" and weather.WeatherID == 0
    forecast = service.GetCityForecastByZIP(ZIP="10001")
    assert forecast.ForecastResult.Forecast[0].Temperatures.MorningLow == "sample"


def test_zeep_calls_strong_soap_stockquote_example_and_every_address_is_the_mock(strong_soap):
    url = f"{strong_soap.base}/stockquote.asmx"
    client, _ = client_of(f"{url}?wsdl")
    assert client.bind("StockQuote", "StockQuoteSoap").GetQuote(symbol="X") == "sample"
    with httpx.Client(trust_env=False) as http:
        text = http.get(f"{url}?wsdl").text
    assert "webservicex" not in text
    assert text.count(f'location="{url}"') == 4  # soap, soap12 and two http:address


def test_mockd_import_of_a_split_wsdl_serves_every_file(tmp_path):
    shutil.copytree(FIXTURES / "orders", tmp_path / "orders")
    with start_server(tmp_path) as server:
        result = run_mockd(["import", str(tmp_path / "orders" / "orders.wsdl"),
                            "--admin-url", server.admin], tmp_path)
        assert result.returncode == 0, result.stderr
        shutil.rmtree(tmp_path / "orders")  # the imported mock carries its files
        client, transport = client_of(f"{server.base}/services/orders?wsdl")
        assert len(transport.fetched) == 5
        order = client.bind("OrderService", "OrderSoap").GetOrder(id="ORD-000001")
        assert order.id == "ORD-000000"
