"""Exceptions: one class per kind of failure, each carrying the library's status.

Every exception raised for a failed mcpc call is a :class:`McpcError` with:

- ``status``: the numeric ``mcpc_status_t`` value (see :class:`Status`),
- ``status_name``: its name, such as ``"MCPC_ERR_TIMEOUT"``,
- ``message``: the library's message naming what failed and why,
- ``rpc_code``: the JSON-RPC error code for :class:`RpcError` (and a handshake
  refused with one), else ``None``.

The hierarchy::

    McpcError
    ├── InvalidArgumentError (also ValueError)   INVALID_ARG, INVALID_UTF8
    │   └── InsecureUrlError                     INSECURE_URL
    ├── TransportError (also ConnectionError)    TRANSPORT
    │   ├── SpawnError                           SPAWN
    │   ├── TlsError                             TLS
    │   ├── ProxyAuthError                       PROXY_AUTH
    │   ├── ServerExitedError                    SERVER_EXITED
    │   └── HttpError                            HTTP
    │       ├── AuthError                        AUTH
    │       └── SessionExpiredError              SESSION_EXPIRED
    ├── ProtocolError                            PROTOCOL
    │   ├── MessageTooLargeError                 MESSAGE_TOO_LARGE
    │   └── ListingError                         CURSOR_REPEATED, DUPLICATE_TOOL, TOO_MANY_PAGES
    ├── HandshakeError                           HANDSHAKE
    │   └── UnsupportedVersionError              UNSUPPORTED_VERSION
    ├── RpcError                                 RPC (see rpc_code)
    ├── ToolError                                TOOL (see result)
    ├── OutputSchemaError                        OUTPUT_SCHEMA (see result)
    ├── IntegrityError                           INTEGRITY (a skill's file failed verification)
    ├── TaskDetachedError                        TASK_DETACHED (see reference)
    ├── ConfigError                              CONFIG (a host's configuration file)
    ├── UnknownNameError (also LookupError)      UNKNOWN_NAME (no such tool or server in a host)
    ├── TimeoutError (also builtins.TimeoutError) TIMEOUT
    ├── CancelledError                           CANCELLED
    ├── ClosedError                              CLOSED
    ├── WouldDeadlockError                       WOULD_DEADLOCK
    ├── NotSupportedError                        NOT_SUPPORTED
    ├── LoginRequiredError                       LOGIN_REQUIRED
    ├── LoginCancelledError                      LOGIN_CANCELLED
    ├── AuthServerError                          AUTH_SERVER
    └── PanicError                               PANIC

A status this module does not know (a newer library) raises plain McpcError.
"""

from __future__ import annotations

import builtins
import enum
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple, Type

if TYPE_CHECKING:  # pragma: no cover
    from ._results import CallResult


class Status(enum.IntEnum):
    """mcpc_status_t. The numeric values are stable."""

    OK = 0
    INVALID_ARG = 1
    INVALID_UTF8 = 2
    PANIC = 3
    TRANSPORT = 4
    PROTOCOL = 5
    HANDSHAKE = 6
    RPC = 7
    TOOL = 8
    TIMEOUT = 9
    CANCELLED = 10
    CLOSED = 11
    CURSOR_REPEATED = 12
    DUPLICATE_TOOL = 13
    TOO_MANY_PAGES = 14
    MESSAGE_TOO_LARGE = 15
    SPAWN = 16
    WOULD_DEADLOCK = 17
    INSECURE_URL = 18
    TLS = 19
    HTTP = 20
    AUTH = 21
    SESSION_EXPIRED = 22
    UNSUPPORTED_VERSION = 23
    NOT_SUPPORTED = 24
    HEADER_MISMATCH = 25
    MISSING_CAPABILITY = 26
    INPUT_REQUIRED = 27
    LOGIN_REQUIRED = 28
    LOGIN_CANCELLED = 29
    AUTH_SERVER = 30
    SERVER_EXITED = 31
    ALREADY_COMPLETED = 32
    INPUT_INVALID = 33
    PROXY_AUTH = 34
    OUTPUT_SCHEMA = 35
    INTEGRITY = 36
    TASK_DETACHED = 37
    CONFIG = 38
    UNKNOWN_NAME = 39


class McpcError(Exception):
    """A failed mcpc call. See the module docstring for the hierarchy."""

    status: int
    status_name: str
    message: str
    rpc_code: Optional[int]

    def __init__(self, message: str, status: int = -1, rpc_code: Optional[int] = None,
                 status_name: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.rpc_code = rpc_code
        if status_name is None:
            try:
                status_name = "MCPC_" + ("OK" if status == 0 else "ERR_" + Status(status).name)
            except ValueError:
                status_name = "MCPC_UNKNOWN_STATUS"
        self.status_name = status_name

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return "%s(%r, status=%s)" % (type(self).__name__, self.message, self.status_name)

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (self.message, self.status, self.rpc_code, self.status_name))


class InvalidArgumentError(McpcError, ValueError):
    """An argument was refused before anything was sent (NULL, malformed JSON, not UTF-8...)."""


class InsecureUrlError(InvalidArgumentError):
    """A URL refused by policy before connecting (``http://`` to a non-loopback host)."""


class TransportError(McpcError, ConnectionError):
    """The connection failed: the server exited, a pipe broke, a connection failed."""


class SpawnError(TransportError):
    """The server process could not be started."""


class TlsError(TransportError):
    """TLS failed (untrusted certificate, wrong host)."""


class OutputSchemaError(McpcError):
    """The result does not fit its tool's outputSchema (``validate_output=True``);
    ``.result`` is the result all the same."""


class IntegrityError(McpcError):
    """A skill's file failed verification (size, sha256 digest, frontmatter), or no
    listed skill names it; nothing of it is handed out."""


class TaskDetachedError(McpcError):
    """The call stopped following its task because ``on_task`` asked it to; the task
    runs on on the server. ``reference`` (a JSON text) resumes it:
    :meth:`Client.resume_task`."""

    reference: Optional[str] = None


class ConfigError(McpcError):
    """A host's configuration file was refused: unreadable, a malformed value, or a
    variable without a value. The message names the file, the server and the field,
    never a value."""


class UnknownNameError(McpcError, LookupError):
    """A host has no tool of that qualified name in its catalog (never listed,
    excluded, or its server is not ready), or no server of that name."""


class ServerExitedError(TransportError):
    """The stdio server died while the call was in flight, and ``restart`` is on:
    the server is being started again, and the call may be made again (it may or
    may not have run)."""


class ProxyAuthError(TransportError):
    """The HTTP proxy wants credentials, or refused those given (407)."""


class HttpError(TransportError):
    """An unexpected HTTP status or content type, or a refused redirect."""


class AuthError(HttpError):
    """401 after the token callback had its chance, or 403."""


class SessionExpiredError(HttpError):
    """The HTTP session expired (404); a fresh one was started for later calls."""


class ProtocolError(McpcError):
    """The server broke the protocol."""


class MessageTooLargeError(ProtocolError):
    """A server message exceeded the size limit."""


class ListingError(ProtocolError):
    """tools/list repeated a cursor, named a tool twice, or needed too many pages."""


class HandshakeError(McpcError):
    """The initialize handshake failed."""


class UnsupportedVersionError(HandshakeError):
    """The server speaks no protocol version this client does."""


class RpcError(McpcError):
    """The server answered with a JSON-RPC error; ``rpc_code`` is its code."""


class ToolError(McpcError):
    """The tool ran and reported failure (``isError: true``). ``result`` is the
    :class:`~libmcpc.CallResult`, whose text says what went wrong."""

    result: "CallResult"

    def __init__(self, message: str, status: int = Status.TOOL, rpc_code: Optional[int] = None,
                 status_name: Optional[str] = None, result: "Optional[CallResult]" = None) -> None:
        super().__init__(message, status, rpc_code, status_name)
        self.result = result  # type: ignore[assignment]

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (self.message, self.status, self.rpc_code, self.status_name, self.result))


class TimeoutError(McpcError, builtins.TimeoutError):  # noqa: A001 - deliberate: also a builtins.TimeoutError
    """The request did not complete in time; ``notifications/cancelled`` was sent.
    Also a ``builtins.TimeoutError``, so ``except TimeoutError`` catches it."""


class CancelledError(McpcError):
    """Cancelled by a :class:`~libmcpc.Cancel`; ``notifications/cancelled`` was sent.
    (Cancelling an asyncio task raises ``asyncio.CancelledError`` as usual.)"""


class ClosedError(McpcError):
    """The client was closed, or its connection had failed before this call."""


class WouldDeadlockError(McpcError):
    """A blocking call from an mcpc callback thread, where it would deadlock."""


class NotSupportedError(McpcError):
    """Not supported by this transport or protocol version."""


class LoginRequiredError(McpcError):
    """OAuth needs a login that cannot happen: headless mode without usable stored
    credentials, or no ``authorize`` callable or redirect URI."""


class LoginCancelledError(McpcError):
    """The login was cancelled (``authorize`` returned None or raised) or the user
    denied access at the authorization server."""


class AuthServerError(McpcError):
    """The authorization server (or the server's authorization metadata) failed or
    broke the OAuth rules; the message says which."""


class PanicError(McpcError):
    """An internal panic was caught at the library boundary."""


_BY_STATUS: Dict[int, Type[McpcError]] = {
    Status.INVALID_ARG: InvalidArgumentError,
    Status.INVALID_UTF8: InvalidArgumentError,
    Status.PANIC: PanicError,
    Status.TRANSPORT: TransportError,
    Status.PROTOCOL: ProtocolError,
    Status.HANDSHAKE: HandshakeError,
    Status.RPC: RpcError,
    Status.TOOL: ToolError,
    Status.TIMEOUT: TimeoutError,
    Status.CANCELLED: CancelledError,
    Status.CLOSED: ClosedError,
    Status.CURSOR_REPEATED: ListingError,
    Status.DUPLICATE_TOOL: ListingError,
    Status.TOO_MANY_PAGES: ListingError,
    Status.MESSAGE_TOO_LARGE: MessageTooLargeError,
    Status.SPAWN: SpawnError,
    Status.WOULD_DEADLOCK: WouldDeadlockError,
    Status.INSECURE_URL: InsecureUrlError,
    Status.TLS: TlsError,
    Status.HTTP: HttpError,
    Status.AUTH: AuthError,
    Status.SESSION_EXPIRED: SessionExpiredError,
    Status.UNSUPPORTED_VERSION: UnsupportedVersionError,
    Status.NOT_SUPPORTED: NotSupportedError,
    Status.LOGIN_REQUIRED: LoginRequiredError,
    Status.LOGIN_CANCELLED: LoginCancelledError,
    Status.AUTH_SERVER: AuthServerError,
    Status.PROXY_AUTH: ProxyAuthError,
    Status.SERVER_EXITED: ServerExitedError,
    Status.OUTPUT_SCHEMA: OutputSchemaError,
    Status.INTEGRITY: IntegrityError,
    Status.TASK_DETACHED: TaskDetachedError,
    Status.CONFIG: ConfigError,
    Status.UNKNOWN_NAME: UnknownNameError,
}


def error_for(status: int, message: str, rpc_code: Optional[int] = None,
              status_name: Optional[str] = None, result: "Optional[CallResult]" = None) -> McpcError:
    """The exception for a status (not raised)."""
    cls = _BY_STATUS.get(status, McpcError)
    if cls is ToolError:
        return ToolError(message, status, rpc_code, status_name, result)
    return cls(message, status, rpc_code, status_name)
