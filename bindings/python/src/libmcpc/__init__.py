"""libmcpc: mcpc, a Model Context Protocol client, for Python: ctypes over libmcpc.so.

Quick start::

    import libmcpc

    with libmcpc.Client.stdio(["python3", "demo/server.py"]) as client:
        for tool in client.tools():
            print(tool["name"], tool["inputSchema"])
        result = client.call("add", {"a": 2, "b": 3})
        print(result.structured)        # {'sum': 5}

- :class:`Client` connects over stdio (:meth:`Client.stdio`), Streamable HTTP
  (:meth:`Client.http`) or a transport implemented in Python
  (:meth:`Client.transport` with a :class:`Transport` subclass).
- ``await client.call_async(...)`` / ``await client.tools_async()`` and the
  ``*_async`` connect functions are the asyncio forms, on the library's async API:
  cancelling the awaiting task cancels the request.
- ``on_elicitation=``, ``on_sampling=`` and ``roots=``/``on_roots=`` answer the
  server's requests for input: the handler gets an :class:`InputRequest` and returns
  the answer (an :class:`Elicitation` for a form).
- :class:`OAuth` passed as ``Client.http(url, oauth=...)`` authorizes with OAuth 2.1.
- :class:`Host` (and :class:`AsyncHost`, for asyncio) puts many servers behind one
  handle: configuration files, servers started together, one catalog of their tools
  under qualified names, calls routed by those names, and their prompts and
  resources (docs/host.md).
- Failures raise :class:`McpcError` subclasses (see :mod:`libmcpc.errors`).

The library is found through ``MCPC_LIBRARY`` (a path), else the copy bundled in this
package, else ``target/release`` or ``target/debug`` of the source tree this package
sits in, else the system's library path. :data:`library_path` says which was loaded.
"""

from ._ffi import library_path
from ._call import Cancel, ProgressCallback
from ._client import Client, version
from ._host import (
    AsyncHost,
    Catalog,
    Collision,
    Host,
    HostEvent,
    HostPrompt,
    HostResource,
    HostResources,
    HostTemplate,
    HostTool,
    PromptCatalog,
    ResourceCollision,
    ServerState,
)
from ._input import Elicitation, InputHandler, InputKind, InputRequest, Root
from ._options import NotificationCallback, StderrCallback, TokenCallback
from ._results import CallResult
from ._transport import Exchange, RequestTransport, Transport
from ._content import Content, ResourceContents, UiView
from ._oauth import AssertionSource, AuthorizeCallback, OAuth, OAuthStore, Signer
from .errors import (
    AuthError,
    AuthServerError,
    CancelledError,
    ClosedError,
    ConfigError,
    HandshakeError,
    HttpError,
    InsecureUrlError,
    InvalidArgumentError,
    ListingError,
    LoginCancelledError,
    LoginRequiredError,
    McpcError,
    MessageTooLargeError,
    NotSupportedError,
    OutputSchemaError,
    IntegrityError,
    TaskDetachedError,
    PanicError,
    ProtocolError,
    ProxyAuthError,
    RpcError,
    ServerExitedError,
    SessionExpiredError,
    SpawnError,
    Status,
    TimeoutError,
    TlsError,
    ToolError,
    TransportError,
    UnknownNameError,
    UnsupportedVersionError,
    WouldDeadlockError,
)

__version__ = "0.1.0"

# TimeoutError is left out of __all__ so that `from libmcpc import *` does not shadow the
# builtin (libmcpc.TimeoutError subclasses it, but the builtin would no longer catch
# other timeouts). Use libmcpc.TimeoutError, or catch the builtin TimeoutError.
__all__ = [
    "AssertionSource",
    "AsyncHost",
    "AuthError",
    "AuthServerError",
    "AuthorizeCallback",
    "CallResult",
    "Cancel",
    "CancelledError",
    "Catalog",
    "Client",
    "ClosedError",
    "Collision",
    "ConfigError",
    "Elicitation",
    "Content",
    "Exchange",
    "HandshakeError",
    "Host",
    "HostEvent",
    "HostPrompt",
    "HostResource",
    "HostResources",
    "HostTemplate",
    "HostTool",
    "HttpError",
    "InputHandler",
    "InputKind",
    "InputRequest",
    "InsecureUrlError",
    "InvalidArgumentError",
    "ListingError",
    "LoginCancelledError",
    "LoginRequiredError",
    "McpcError",
    "MessageTooLargeError",
    "NotSupportedError",
    "NotificationCallback",
    "OAuth",
    "OAuthStore",
    "OutputSchemaError",
    "IntegrityError",
    "TaskDetachedError",
    "PanicError",
    "ProgressCallback",
    "PromptCatalog",
    "ProtocolError",
    "ProxyAuthError",
    "RequestTransport",
    "ResourceCollision",
    "ResourceContents",
    "Root",
    "UiView",
    "RpcError",
    "ServerExitedError",
    "ServerState",
    "SessionExpiredError",
    "Signer",
    "SpawnError",
    "Status",
    "StderrCallback",
    "TlsError",
    "TokenCallback",
    "ToolError",
    "Transport",
    "TransportError",
    "UnknownNameError",
    "UnsupportedVersionError",
    "WouldDeadlockError",
    "library_path",
    "version",
]
