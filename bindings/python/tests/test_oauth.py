"""OAuth against the loopback authorization server and protected MCP server of
tests/fixtures/oauth_fixture.py, which approves every login at once."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import pytest

import libmcpc

from conftest import PYTHON, REPO, Server, assert_registry_empty

OAUTH_FIXTURE = str(REPO / "tests" / "fixtures" / "oauth_fixture.py")
REDIRECT = "http://127.0.0.1:9/callback"  # never contacted: the test plays the browser


class _Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return None


def browse(url: str) -> Optional[str]:
    """GETs the authorization URL as a browser would and returns where it redirects."""
    try:
        with urllib.request.build_opener(_Stay).open(url, timeout=10) as r:
            return r.headers.get("Location")
    except urllib.error.HTTPError as e:
        return e.headers.get("Location")


class DictStore(libmcpc.OAuthStore):
    def __init__(self) -> None:
        self.items: Dict[str, str] = {}
        self.lock = threading.Lock()

    def load(self, key: str) -> Optional[str]:
        with self.lock:
            return self.items.get(key)

    def save(self, key: str, value: Optional[str]) -> None:
        with self.lock:
            if value is None:
                self.items.pop(key, None)
            else:
                self.items[key] = value


@pytest.fixture
def oauth_server(tmp_path: Path) -> Iterator[Server]:
    log = tmp_path / "oauth.log"
    s = Server([PYTHON, OAUTH_FIXTURE, "--client", "cc-client", "cc-secret", "--log", str(log)], log)
    try:
        yield s
    finally:
        s.stop()


def events(server: Server, name: str) -> List[dict]:
    return [e for e in map(json.loads, server.log_text().splitlines()) if e.get("event") == name]


def test_login_then_stored_tokens_then_headless(oauth_server: Server) -> None:
    store = DictStore()
    shown: List[str] = []

    def authorize(url: str) -> Optional[str]:
        shown.append(url)
        return browse(url)

    oauth = libmcpc.OAuth(redirect_uri=REDIRECT, authorize=authorize, store=store)
    with libmcpc.Client.http(oauth_server.url, oauth=oauth, timeout=20) as c:
        assert c.call("echo", {"text": "hi"}).text == "hi"
        assert [t["name"] for t in c.tools()] == ["echo"]
    assert len(shown) == 1 and "code_challenge_method=S256" in shown[0]
    assert any(k.startswith("tokens ") for k in store.items)

    headless = libmcpc.OAuth(headless=True, store=store)
    with libmcpc.Client.http(oauth_server.url, oauth=headless, timeout=20) as c:
        assert c.call("echo", {"text": "again"}).text == "again"
    assert len(events(oauth_server, "authorize")) == 1
    assert_registry_empty()


def test_headless_without_store_needs_a_login(oauth_server: Server) -> None:
    with pytest.raises(libmcpc.LoginRequiredError) as e:
        libmcpc.Client.http(oauth_server.url, oauth=libmcpc.OAuth(headless=True), timeout=20)
    assert e.value.status == libmcpc.Status.LOGIN_REQUIRED
    assert isinstance(e.value, libmcpc.McpcError)


@pytest.mark.parametrize("how", ["none", "raise"])
def test_authorize_cancels(oauth_server: Server, how: str) -> None:
    def authorize(url: str) -> Optional[str]:
        if how == "raise":
            raise RuntimeError("the user closed the window")
        return None

    oauth = libmcpc.OAuth(redirect_uri=REDIRECT, authorize=authorize)
    with pytest.raises(libmcpc.LoginCancelledError):
        libmcpc.Client.http(oauth_server.url, oauth=oauth, timeout=20)
    assert_registry_empty()


def test_a_forged_redirect_is_refused(oauth_server: Server) -> None:
    def authorize(url: str) -> Optional[str]:
        back = browse(url)
        assert back is not None
        return back.replace("state=", "state=forged")

    oauth = libmcpc.OAuth(redirect_uri=REDIRECT, authorize=authorize)
    with pytest.raises(libmcpc.AuthServerError):
        libmcpc.Client.http(oauth_server.url, oauth=oauth, timeout=20)


def test_client_credentials(oauth_server: Server) -> None:
    oauth = libmcpc.OAuth(client_id="cc-client", client_secret="cc-secret", grant="client_credentials")
    with libmcpc.Client.http(oauth_server.url, oauth=oauth, timeout=20) as c:
        assert c.call("echo", {"text": "cc"}).text == "cc"
    wrong = libmcpc.OAuth(client_id="cc-client", client_secret="wrong-secret", grant="client_credentials")
    with pytest.raises(libmcpc.AuthServerError) as e:
        libmcpc.Client.http(oauth_server.url, oauth=wrong, timeout=20)
    assert "wrong-secret" not in str(e.value)


def test_a_store_that_raises_is_no_store(oauth_server: Server) -> None:
    class Broken(libmcpc.OAuthStore):
        def load(self, key: str) -> Optional[str]:
            raise OSError("disk gone")

        def save(self, key: str, value: Optional[str]) -> None:
            raise OSError("disk gone")

    oauth = libmcpc.OAuth(redirect_uri=REDIRECT, authorize=browse, store=Broken())
    with libmcpc.Client.http(oauth_server.url, oauth=oauth, timeout=20) as c:
        assert c.call("echo", {"text": "ok"}).text == "ok"


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError):
        libmcpc.OAuth(grant="password")
    with pytest.raises(ValueError):
        libmcpc.OAuth(client_secret="s")
    with pytest.raises(TypeError):
        libmcpc.OAuth(store=object())
    with pytest.raises(libmcpc.InvalidArgumentError):
        libmcpc.Client.http("http://127.0.0.1:1/mcp", oauth=libmcpc.OAuth(redirect_uri="not a url"))
    with pytest.raises(TypeError):
        libmcpc.Client.stdio(["true"], oauth=libmcpc.OAuth())  # type: ignore[call-arg]


def test_http_async_logs_in(oauth_server: Server) -> None:
    store = DictStore()

    async def main() -> str:
        oauth = libmcpc.OAuth(redirect_uri=REDIRECT, authorize=browse, store=store)
        async with await libmcpc.Client.http_async(oauth_server.url, oauth=oauth, timeout=20) as c:
            return (await c.call_async("echo", {"text": "async"})).text

    assert asyncio.run(main()) == "async"
    assert len(events(oauth_server, "authorize")) == 1
    assert_registry_empty()


# No user: private_key_jwt, the JWT bearer grant and the ID-JAG flow, against the
# fixture's key client (whose ES256 signatures it verifies), assertion and
# identity provider. The fixture offers DPoP (and verifies its proofs).
ASSERTION = "eyJhbGciOiJSUzI1NiJ9.wif-python.sig"
ID_TOKEN = "eyJhbGciOiJSUzI1NiJ9.idt-python.sig"


def p256_key(tmp_path: Path, name: str) -> str:
    """A fresh PKCS#8 P-256 private key (PEM); its public key goes to NAME.pub."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl makes the test keys")
    key = tmp_path / (name + ".pem")
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-out", str(key)], check=True, capture_output=True)
    subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(tmp_path / (name + ".pub"))],
                   check=True, capture_output=True)
    return key.read_text()


@pytest.fixture
def workload_server(tmp_path: Path) -> Iterator[Server]:
    p256_key(tmp_path, "client")
    log = tmp_path / "oauth27.log"
    s = Server([PYTHON, OAUTH_FIXTURE, "--key-client", "key-client", str(tmp_path / "client.pub"),
                "--assertion", ASSERTION, "--id-token", ID_TOKEN, "--dpop", "--log", str(log)], log)
    try:
        yield s
    finally:
        s.stop()


def test_private_key_jwt(workload_server: Server, tmp_path: Path) -> None:
    key = (tmp_path / "client.pem").read_text()
    for dpop in (True, False):
        oauth = libmcpc.OAuth(client_id="key-client", client_key=key, grant="client_credentials", dpop=dpop)
        with libmcpc.Client.http(workload_server.url, oauth=oauth, timeout=20) as c:
            assert c.call("echo", {"text": "key"}).text == "key"
    assert [(e["auth"], e["dpop"]) for e in events(workload_server, "token")] == [
        ("private_key_jwt", True), ("private_key_jwt", False)]
    assert [e["scheme"] for e in events(workload_server, "mcp") if e["method"] == "tools/call"] == ["DPoP", "Bearer"]
    other = libmcpc.OAuth(client_id="key-client", client_key=p256_key(tmp_path, "other"), grant="client_credentials")
    with pytest.raises(libmcpc.AuthServerError) as e:
        libmcpc.Client.http(workload_server.url, oauth=other, timeout=20)
    assert "PRIVATE KEY" not in str(e.value)


def openssl_signer(tmp_path: Path, name: str, calls: List[int]) -> libmcpc.Signer:
    """A signer that keeps its key out of the process, as an HSM or a KMS does:
    openssl signs (DER) with NAME.pem; the public key is NAME.pub."""
    def sign(data: bytes) -> bytes:
        calls.append(len(data))
        r = subprocess.run(["openssl", "dgst", "-sha256", "-sign", str(tmp_path / (name + ".pem"))],
                           input=data, check=True, capture_output=True)
        return r.stdout
    return ((tmp_path / (name + ".pub")).read_text(), sign)


def test_host_signers(workload_server: Server, tmp_path: Path) -> None:
    p256_key(tmp_path, "dpop")
    client_calls: List[int] = []
    dpop_calls: List[int] = []
    oauth = libmcpc.OAuth(client_id="key-client", grant="client_credentials",
                          client_signer=openssl_signer(tmp_path, "client", client_calls),
                          dpop_signer=openssl_signer(tmp_path, "dpop", dpop_calls))
    with libmcpc.Client.http(workload_server.url, oauth=oauth, timeout=20) as c:
        assert c.call("echo", {"text": "hsm"}).text == "hsm"
    assert [(e["auth"], e["dpop"]) for e in events(workload_server, "token")] == [("private_key_jwt", True)]
    assert [e["scheme"] for e in events(workload_server, "mcp") if e["method"] == "tools/call"] == ["DPoP"]
    assert len(client_calls) == 1 and len(dpop_calls) >= 2
    # A signer that raises, or signs with another key: nothing goes out unsigned.
    p256_key(tmp_path, "other")
    wrong = ((tmp_path / "dpop.pub").read_text(), openssl_signer(tmp_path, "other", [])[1])

    def broken(data: bytes) -> bytes:
        raise RuntimeError("the token is not plugged in")

    for signer in (wrong, ((tmp_path / "dpop.pub").read_text(), broken)):
        bad = libmcpc.OAuth(client_id="key-client", client_key=(tmp_path / "client.pem").read_text(),
                            grant="client_credentials", dpop_signer=signer)
        with pytest.raises(libmcpc.AuthError):
            libmcpc.Client.http(workload_server.url, oauth=bad, timeout=20)
    assert len(events(workload_server, "token")) == 1
    with pytest.raises(ValueError):
        libmcpc.OAuth(client_id="c", client_key="k", client_signer=("pem", broken))
    with pytest.raises(TypeError):
        libmcpc.OAuth(dpop_signer="pem")  # type: ignore[arg-type]
    assert_registry_empty()


def test_jwt_bearer_fixed_and_callable(workload_server: Server) -> None:
    with libmcpc.Client.http(workload_server.url, oauth=libmcpc.OAuth(assertion=ASSERTION), timeout=20) as c:
        assert c.call("echo", {"text": "fixed"}).text == "fixed"
    calls: List[int] = []

    def fresh() -> Optional[str]:
        calls.append(1)
        return ASSERTION

    with libmcpc.Client.http(workload_server.url, oauth=libmcpc.OAuth(assertion=fresh), timeout=20) as c:
        assert c.call("echo", {"text": "cb"}).text == "cb"
    assert calls == [1]
    assert [e["grant"] for e in events(workload_server, "token")] == [
        "urn:ietf:params:oauth:grant-type:jwt-bearer"] * 2
    assert_registry_empty()


@pytest.mark.parametrize("how", ["none", "raise", "not-a-str", "empty"])
def test_no_assertion_is_login_required(workload_server: Server, how: str) -> None:
    def source() -> Optional[str]:
        if how == "raise":
            raise RuntimeError("the metadata service is down")
        return {"none": None, "not-a-str": 42, "empty": ""}[how]  # type: ignore[return-value]

    with pytest.raises(libmcpc.LoginRequiredError):
        libmcpc.Client.http(workload_server.url, oauth=libmcpc.OAuth(assertion=source), timeout=20)
    assert events(workload_server, "token") == []
    assert_registry_empty()


def test_identity_provider(workload_server: Server) -> None:
    idp = (workload_server.url.replace("/mcp", "/idp/token"), "idp-client")
    oauth = libmcpc.OAuth(assertion=lambda: ID_TOKEN, identity_provider=idp)
    with libmcpc.Client.http(workload_server.url, oauth=oauth, timeout=20) as c:
        assert c.call("echo", {"text": "sso"}).text == "sso"
    assert [(e["ok"], e["client_id"]) for e in events(workload_server, "idp-exchange")] == [(True, "idp-client")]
    wrong = libmcpc.OAuth(assertion="not-the-id-token", identity_provider=idp)
    with pytest.raises(libmcpc.AuthServerError):
        libmcpc.Client.http(workload_server.url, oauth=wrong, timeout=20)


def test_workload_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        libmcpc.OAuth(client_key="k")  # no client_id
    with pytest.raises(ValueError):
        libmcpc.OAuth(client_id="c", client_secret="s", client_key="k")
    with pytest.raises(ValueError):
        libmcpc.OAuth(grant="jwt_bearer")  # no assertion
    with pytest.raises(ValueError):
        libmcpc.OAuth(assertion="a", grant="client_credentials")
    with pytest.raises(TypeError):
        libmcpc.OAuth(assertion=42)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        libmcpc.OAuth(identity_provider=("http://127.0.0.1:1/t", "c"))
    with pytest.raises(TypeError):
        libmcpc.OAuth(assertion="a", identity_provider="http://127.0.0.1:1/t")  # type: ignore[arg-type]
    url = "http://127.0.0.1:1/mcp"
    for bad in (libmcpc.OAuth(client_id="c", client_key="not a key", grant="client_credentials"),
                libmcpc.OAuth(assertion="a", dpop_key="not a key"),
                libmcpc.OAuth(assertion="a", identity_provider=("not a url", "c"))):
        with pytest.raises(libmcpc.InvalidArgumentError):
            libmcpc.Client.http(url, oauth=bad)
    assert_registry_empty()
