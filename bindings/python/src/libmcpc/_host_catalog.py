"""What a host lists (docs/host.md): its servers' states and events, and the catalogs
of their tools, prompts and resources, parsed from the JSON the host gives. Kept apart from
the handle classes (_host.py): they are plain values and call no library."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any, Dict, Generic, Iterator, List, Mapping, Optional, TypeVar

__all__ = ["Catalog", "Collision", "HostEvent", "HostPrompt", "HostResource", "HostResources", "HostTemplate",
           "HostTool", "PromptCatalog", "ResourceCollision", "ServerState"]


class ServerState(str, enum.Enum):
    """A server's state (mcpc_server_state_t). Each equals the name :meth:`Host.status`
    gives, such as ``"ready"``."""

    ADDED = "added"  # added, not started yet
    STARTING = "starting"
    READY = "ready"  # its tools are in the catalog
    FAILED = "failed"  # did not start, or its connection ended: the detail says why
    NEEDS_LOGIN = "needs_login"  # its authorization needs a login
    DISABLED = "disabled"  # disabled in its configuration; never started
    RESTARTING = "restarting"  # died, and is being started again (``restart=``)
    IDLE = "idle"  # not started: its saved tools are in the catalog; its first call starts it


class HostEvent(str, enum.Enum):
    """What a host reports to its event callback (mcpc_host_event_t)."""

    SERVER_STATE = "server_state"  # a server's state changed; detail: its error, or None
    SETTLED = "settled"  # start() settled; detail: the summary, a dict
    CATALOG_CHANGED = "catalog_changed"  # a server became ready, failed or was removed


_STATES = list(ServerState)  # in the order of their C values, 0 to 6
_EVENTS = {1: HostEvent.SERVER_STATE, 2: HostEvent.SETTLED, 3: HostEvent.CATALOG_CHANGED}


def _state(value: Any) -> Any:
    """A state as ServerState; one a newer library added stays as it came."""
    if isinstance(value, int):
        return _STATES[value] if 0 <= value < len(_STATES) else value
    try:
        return ServerState(value)
    except ValueError:
        return value



E = TypeVar("E")


class _Listing(Generic[E]):
    """What a host's listings share: a sequence of their entries, each found by its
    key (``name``, the qualified name; or ``uri``)."""

    _key = "name"

    def _entries(self) -> List[E]:
        raise NotImplementedError

    def __iter__(self) -> Iterator[E]:
        return iter(self._entries())

    def __len__(self) -> int:
        return len(self._entries())

    def __getitem__(self, index: int) -> E:
        return self._entries()[index]

    def _keys(self) -> List[str]:
        return [getattr(e, self._key) for e in self._entries()]

    def get(self, key: str) -> Optional[E]:
        """The entry of this qualified name (or URI), or None."""
        return next((e for e in self._entries() if getattr(e, self._key) == key), None)


class _Named(_Listing[E]):
    """A listing keyed by qualified name: the tools' and the prompts'."""

    @property
    def names(self) -> List[str]:
        """The qualified names, in the catalog's order."""
        return self._keys()


@dataclass(frozen=True)
class HostTool:
    """One tool of a host's catalog: ``name`` is its qualified name (``SERVER__TOOL``,
    what :meth:`Host.call` takes), ``tool`` the tool as its server listed it (with its
    own name)."""

    name: str
    server: str
    tool: Dict[str, Any]


@dataclass(frozen=True)
class Collision:
    """Two tools (or two prompts) that would have shared the qualified name ``name``:
    ``kept``'s kept it, ``renamed``'s was given ``renamed_to``."""

    name: str
    kept: str
    renamed: str
    renamed_to: str


def _collisions(raw: Mapping[str, Any]) -> List[Collision]:
    return [Collision(c["name"], c["kept"], c["renamed"], c["renamedTo"]) for c in raw.get("collisions", [])]


@dataclass(frozen=True)
class Catalog(_Named[HostTool]):
    """The tools of a host's ready servers (a sequence of :class:`HostTool`), and the
    collisions their names had."""

    tools: List[HostTool]
    collisions: List[Collision]
    #: The catalog's JSON as the host gave it: what :meth:`Host.load_catalog` takes back.
    json: str = field(default="", repr=False, compare=False)

    def _entries(self) -> List[HostTool]:
        return self.tools

    @classmethod
    def _parse(cls, text: str) -> "Catalog":
        raw = json.loads(text)
        return cls([HostTool(t["name"], t["server"], t["tool"]) for t in raw.get("tools", [])], _collisions(raw), text)


@dataclass(frozen=True)
class HostPrompt:
    """One prompt of a host's servers: ``name`` is its qualified name (named as tools
    are, what :meth:`Host.get_prompt` takes), ``prompt`` the prompt as its server
    listed it (with its own name)."""

    name: str
    server: str
    prompt: Dict[str, Any]


@dataclass(frozen=True)
class PromptCatalog(_Named[HostPrompt]):
    """The prompts of a host's ready servers (a sequence of :class:`HostPrompt`), and
    the collisions their names had."""

    prompts: List[HostPrompt]
    collisions: List[Collision]

    def _entries(self) -> List[HostPrompt]:
        return self.prompts

    @classmethod
    def _parse(cls, text: str) -> "PromptCatalog":
        raw = json.loads(text)
        return cls([HostPrompt(p["name"], p["server"], p["prompt"]) for p in raw.get("prompts", [])], _collisions(raw))


@dataclass(frozen=True)
class HostResource:
    """One resource of a host's servers, as ``server`` listed it. URIs are the
    servers' own, never qualified."""

    uri: str
    server: str
    resource: Dict[str, Any]


@dataclass(frozen=True)
class HostTemplate:
    """One resource template, as ``server`` listed it."""

    server: str
    template: Dict[str, Any]


@dataclass(frozen=True)
class ResourceCollision:
    """A URI two servers listed: reads go to ``kept``'s (the one added first);
    ``dropped``'s is not listed."""

    uri: str
    kept: str
    dropped: str


@dataclass(frozen=True)
class HostResources(_Listing[HostResource]):
    """The resources of a host's servers (a sequence of :class:`HostResource`, each
    found by its URI with :meth:`get`), their templates, and the URIs two servers
    listed."""

    _key = "uri"

    resources: List[HostResource]
    templates: List[HostTemplate]
    collisions: List[ResourceCollision]

    def _entries(self) -> List[HostResource]:
        return self.resources

    @property
    def uris(self) -> List[str]:
        """The URIs, in the listing's order."""
        return self._keys()

    @classmethod
    def _parse(cls, text: str) -> "HostResources":
        raw = json.loads(text)
        return cls([HostResource(r["uri"], r["server"], r["resource"]) for r in raw.get("resources", [])],
                   [HostTemplate(t["server"], t["template"]) for t in raw.get("templates", [])],
                   [ResourceCollision(c["uri"], c["kept"], c["dropped"]) for c in raw.get("collisions", [])])
