"""OAuth 2.1 settings for HTTP endpoints (mcpc_oauth_t) and the host's callbacks."""

from __future__ import annotations

from ctypes import c_size_t, memmove, string_at
from typing import Any, Callable, Optional, Tuple, Union

from . import _ffi
from ._decls import ASSERTION_CB, AUTHORIZE_CB, SIGN_CB, STORE_LOAD_CB, STORE_SAVE_CB
from ._ffi import lib, registry

__all__ = ["AssertionSource", "AuthorizeCallback", "OAuth", "OAuthStore", "Signer"]

AuthorizeCallback = Callable[[str], Optional[str]]
"""authorize(url): show the authorization URL to the user and return the URL the
authorization server redirected to (with ``code`` and ``state``), or None to cancel."""

AssertionSource = Union[str, Callable[[], Optional[str]]]
"""The JWT bearer grant's assertion: a fixed JWT, or a callable returning a fresh one
(None, or an exception, for none)."""

Signer = Tuple[str, Callable[[bytes], bytes]]
"""A key the host keeps (an HSM, the OS key store, a cloud KMS): ``(public_key_pem,
sign)``, where ``sign(data)`` returns the ES256 signature of ``data`` (ECDSA P-256
over its SHA-256), raw (r then s) or DER. mcpc checks every signature against the
public key before it sends one; an exception or a bad signature fails the request
with :class:`~libmcpc.AuthError`."""

_GRANTS = {"authorization_code": 0, "client_credentials": 1, "jwt_bearer": 2}


class OAuthStore:
    """Where tokens and client registrations are kept between runs. Subclass it, or
    pass any object with these two methods. Keys name the server or the
    authorization server; values are JSON text holding secrets: keep them private.
    Both run on an mcpc thread; calls for one client never overlap. Exceptions
    from ``load`` count as "nothing stored"; those from ``save`` are dropped (the
    credentials still serve this client, the next one logs in again)."""

    def load(self, key: str) -> Optional[str]:
        raise NotImplementedError

    def save(self, key: str, value: Optional[str]) -> None:
        """Stores ``value`` under ``key``; None deletes the key."""
        raise NotImplementedError


def _authorize_py(userdata: Optional[int], request: Optional[int]) -> None:
    # Completes the request exactly once, whatever the callable does.
    redirect: Optional[bytes] = None
    try:
        fn = registry.get(userdata)
        url = _ffi.text(lib.mcpc_auth_request_url(request))
        back = fn(url) if fn is not None else None
        if back is not None:
            redirect = str(back).encode("utf-8")
    except BaseException:  # noqa: BLE001 - an exception cancels the login
        redirect = None
    try:
        if redirect is not None and b"\0" not in redirect:
            lib.mcpc_auth_request_complete(request, redirect)
        else:
            lib.mcpc_auth_request_cancel(request)
    except BaseException:  # noqa: BLE001 - nothing may unwind into C
        pass


def _load_py(userdata: Optional[int], key: Optional[bytes], buf: Optional[int], size: int) -> int:
    try:
        store = registry.get(userdata)
        if store is None or key is None or not buf:
            return 1
        value = store.load(key.decode("utf-8", "replace"))
        if value is None:
            return 1
        return _ffi.put_string(buf, size, str(value))
    except BaseException:  # noqa: BLE001 - an exception means "nothing stored"
        return 1


def _save_py(userdata: Optional[int], key: Optional[bytes], value: Optional[bytes]) -> None:
    try:
        store = registry.get(userdata)
        if store is not None and key is not None:
            store.save(key.decode("utf-8", "replace"), None if value is None else value.decode("utf-8", "replace"))
    except BaseException:  # noqa: BLE001 - see OAuthStore
        pass


def _assertion_py(userdata: Optional[int], buf: Optional[int], size: int) -> int:
    try:
        fn = registry.get(userdata)
        jwt = fn() if fn is not None else None
        if not isinstance(jwt, str) or not jwt or not buf:
            return 1
        return _ffi.put_string(buf, size, jwt)
    except BaseException:  # noqa: BLE001 - an exception means "no assertion"
        return 1


def _sign_py(userdata: Optional[int], data: Optional[int], size: int, sig: Optional[int], sig_len: Optional[int]) -> int:
    try:
        fn = registry.get(userdata)
        if fn is None or not data or not sig or not sig_len:
            return 1
        out = fn(string_at(data, size))
        room = c_size_t.from_address(sig_len)
        if not isinstance(out, (bytes, bytearray)) or not out or len(out) > room.value:
            return 1
        memmove(sig, bytes(out), len(out))
        room.value = len(out)
        return 0
    except BaseException:  # noqa: BLE001 - an exception means "cannot sign"
        return 1


_authorize_trampoline = AUTHORIZE_CB(_authorize_py)
_sign_trampoline = SIGN_CB(_sign_py)
_assertion_trampoline = ASSERTION_CB(_assertion_py)
_load_trampoline = STORE_LOAD_CB(_load_py)
_save_trampoline = STORE_SAVE_CB(_save_py)


def _opt(s: Optional[str]) -> Optional[bytes]:
    return None if s is None else s.encode("utf-8")


class OAuth:
    """OAuth 2.1 for an HTTP endpoint: pass it as ``Client.http(url, oauth=...)``.
    After a 401 the client discovers the authorization server, identifies itself
    (``client_id``, else a client ID metadata document at ``client_metadata_url``,
    else registration), gets a token by the ``grant`` and keeps it fresh.

    - ``grant``: ``"authorization_code"`` (a user logs in; needs ``redirect_uri``
      and ``authorize``), ``"client_credentials"`` (needs ``client_id`` and
      ``client_secret`` or ``client_key``) or ``"jwt_bearer"`` (no user: needs
      ``assertion``). The default: ``"jwt_bearer"`` with an ``assertion``, else
      ``"authorization_code"``.
    - ``client_key``: the client's PKCS#8 P-256 private key (PEM), to authenticate
      with ``private_key_jwt`` instead of a secret (needs ``client_id``);
      ``client_signer``, a :data:`Signer`, instead when the key stays with the host.
    - ``assertion``: for ``"jwt_bearer"``, a JWT (a workload's identity token), or a
      callable returning a fresh one before each token request that needs one (it
      runs on an mcpc thread and may block); None or an exception gives none, and
      the request raises :class:`~libmcpc.LoginRequiredError`.
    - ``identity_provider``: ``(token_endpoint, client_id)`` of the enterprise's
      identity provider: the assertion is then its ID token, exchanged there for an
      ID-JAG first (enterprise-managed authorization).
    - ``dpop``: bind tokens to a key with DPoP where the authorization server
      offers ES256 (the default); ``dpop_key`` is that key (PKCS#8 P-256 PEM)
      instead of a fresh one per client, or ``dpop_signer`` a :data:`Signer`.
    - ``authorize(url)``: shows the login to the user and returns the URL the
      authorization server redirected to, or None to cancel. It runs on an mcpc
      thread, may block for as long as the login takes (the connect or call
      timeout bounds it), and an exception it raises cancels the login.
    - ``store``: an :class:`OAuthStore`, so that later clients need no login.
    - ``headless``: never log in; use stored or refreshed credentials, else raise
      :class:`~libmcpc.LoginRequiredError`.

    A login the user cancels raises :class:`~libmcpc.LoginCancelledError`; an
    authorization server that fails or breaks the rules raises
    :class:`~libmcpc.AuthServerError`. The secret is never shown in messages.
    The callables are kept alive for as long as any client made with them.
    """

    def __init__(
        self,
        *,
        client_id: Optional[str] = None,
        client_secret: Optional[str] = None,
        redirect_uri: Optional[str] = None,
        scope: Optional[str] = None,
        client_metadata_url: Optional[str] = None,
        grant: Optional[str] = None,
        headless: bool = False,
        authorize: Optional[AuthorizeCallback] = None,
        store: Optional[Any] = None,
        client_key: Optional[str] = None,
        assertion: Optional[AssertionSource] = None,
        identity_provider: Optional[Tuple[str, str]] = None,
        dpop: bool = True,
        dpop_key: Optional[str] = None,
        client_signer: Optional[Signer] = None,
        dpop_signer: Optional[Signer] = None,
    ) -> None:
        if grant is None:
            grant = "jwt_bearer" if assertion is not None else "authorization_code"
        if grant not in _GRANTS:
            raise ValueError("grant must be 'authorization_code', 'client_credentials' or 'jwt_bearer'")
        if client_secret is not None and client_id is None:
            raise ValueError("client_secret needs client_id")
        if client_key is not None and (client_id is None or client_secret is not None):
            raise ValueError("client_key needs client_id and no client_secret")
        if client_signer is not None and (client_id is None or client_secret is not None or client_key is not None):
            raise ValueError("client_signer needs client_id, and no client_secret or client_key")
        if dpop_signer is not None and dpop_key is not None:
            raise ValueError("give dpop_key or dpop_signer, not both")
        for signer in (client_signer, dpop_signer):
            if signer is not None and not (isinstance(signer, tuple) and len(signer) == 2 and
                                           isinstance(signer[0], str) and callable(signer[1])):
                raise TypeError("a signer must be (public_key_pem, sign)")
        if (assertion is None) != (grant != "jwt_bearer"):
            raise ValueError("assertion goes with grant='jwt_bearer', and that grant needs one")
        if assertion is not None and not (isinstance(assertion, str) or callable(assertion)):
            raise TypeError("assertion must be a str or a callable returning one")
        if identity_provider is not None:
            if assertion is None:
                raise ValueError("identity_provider needs an assertion (the ID token)")
            if not (isinstance(identity_provider, tuple) and len(identity_provider) == 2 and
                    all(isinstance(x, str) for x in identity_provider)):
                raise TypeError("identity_provider must be (token_endpoint, client_id)")
        if authorize is not None and not callable(authorize):
            raise TypeError("authorize must be a callable taking the URL")
        if store is not None and not (callable(getattr(store, "load", None)) and
                                      callable(getattr(store, "save", None))):
            raise TypeError("store must have load(key) and save(key, value) methods")
        self.client_id = client_id
        self.client_secret = client_secret
        self.redirect_uri = redirect_uri
        self.scope = scope
        self.client_metadata_url = client_metadata_url
        self.grant = grant
        self.headless = headless
        self.authorize = authorize
        self.store = store
        self.client_key = client_key
        self.assertion = assertion
        self.identity_provider = identity_provider
        self.dpop = dpop
        self.dpop_key = dpop_key
        self.client_signer = client_signer
        self.dpop_signer = dpop_signer

    def __repr__(self) -> str:
        return "OAuth(client_id=%r, grant=%r, headless=%r)" % (self.client_id, self.grant, self.headless)

    def _attach(self, options: int, check: Callable[[int], None]) -> None:
        """Sets these settings on an mcpc_options_t (``check`` raises for a status)."""
        h = lib.mcpc_oauth_new()
        if not h:
            raise MemoryError("mcpc_oauth_new failed")
        try:
            if self.client_id is not None:
                check(lib.mcpc_oauth_set_client(h, _opt(self.client_id), _opt(self.client_secret)))
            if self.redirect_uri is not None:
                check(lib.mcpc_oauth_set_redirect_uri(h, _opt(self.redirect_uri)))
            if self.client_metadata_url is not None:
                check(lib.mcpc_oauth_set_client_metadata_url(h, _opt(self.client_metadata_url)))
            if self.scope is not None:
                check(lib.mcpc_oauth_set_scope(h, _opt(self.scope)))
            check(lib.mcpc_oauth_set_grant(h, _GRANTS[self.grant]))
            check(lib.mcpc_oauth_set_headless(h, 1 if self.headless else 0))
            if self.client_key is not None:
                check(lib.mcpc_oauth_set_client_key(h, _opt(self.client_key)))
            if isinstance(self.assertion, str):
                check(lib.mcpc_oauth_set_assertion(h, _opt(self.assertion)))
            elif self.assertion is not None:
                key = registry.add(self.assertion)
                check(lib.mcpc_oauth_set_assertion_callback(h, _assertion_trampoline, key, _ffi.free_userdata))
            if self.identity_provider is not None:
                endpoint, idp_client = self.identity_provider
                check(lib.mcpc_oauth_set_identity_provider(h, _opt(endpoint), _opt(idp_client)))
            check(lib.mcpc_oauth_set_dpop(h, 1 if self.dpop else 0))
            if self.dpop_key is not None:
                check(lib.mcpc_oauth_set_dpop_key(h, _opt(self.dpop_key)))
            for signer, setter in ((self.client_signer, lib.mcpc_oauth_set_client_signer),
                                   (self.dpop_signer, lib.mcpc_oauth_set_dpop_signer)):
                if signer is not None:
                    key = registry.add(signer[1])
                    check(setter(h, _opt(signer[0]), _sign_trampoline, key, _ffi.free_userdata))
            # Each registry entry is dropped by userdata_free, which runs exactly once:
            # when the last client made with these settings is freed.
            if self.authorize is not None:
                key = registry.add(self.authorize)
                check(lib.mcpc_oauth_set_authorize_callback(h, _authorize_trampoline, key, _ffi.free_userdata))
            if self.store is not None:
                key = registry.add(self.store)
                check(lib.mcpc_oauth_set_store(h, _load_trampoline, _save_trampoline, key, _ffi.free_userdata))
            check(lib.mcpc_options_set_oauth(options, h))
        finally:
            lib.mcpc_oauth_free(h)
