"""Reading release metadata from a package index.

The index is spoken to as pip and uv do: the PEP 691 JSON simple API lists a
project's files; a file's core metadata comes from its PEP 658 / PEP 714
``.metadata`` companion when the index serves one, otherwise from the
wheel's ``*.dist-info/METADATA`` member read with HTTP range requests (the
way pip's lazy wheel does: the end of the zip, its central directory, then
the one member), and only when the server will not serve ranges, from the
whole wheel. A release with no wheel is read from its sdist's ``PKG-INFO``,
which PEP 643 makes binding from Metadata-Version 2.2 on, for the fields it
does not mark ``Dynamic``.

Of a release's files, the one read is the one an installer would take: not a
yanked file when the release has others, and among wheels that differ only by
their build tag, the highest build (PEP 427).

Nothing the index sends is trusted (docs/reliability.md, "db sync"): only
http(s) URLs are fetched, on the index's host or the hosts allowed, never
downgraded from https to http; every reply has a size bound and every
request a deadline on its whole duration, not only on each read; archives
are inflated as streams with a bound; each file entry and each metadata
field a snapshot stores is checked (the METADATA must name the project and
version of its file; Requires-Python and Requires-Dist must parse). A reply
that breaks a rule is a PackageIndexError naming the package, the URL (its
credentials masked) and the rule; metadata that breaks one refuses its
release (``ReleaseMetadata.refused``).

Standard library only (urllib, http.client, zipfile, tarfile): nothing here
runs during a check. One client may be shared by threads.
"""

from __future__ import annotations

import base64
import datetime
import gzip
import hashlib
import heapq
import http.client
import io
import itertools
import json
import netrc
import os
import re
import socket
import ssl
import struct
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from packaging.metadata import parse_email
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from .. import _toml
from ..errors import CompatError, PackageIndexError
from .snapshot import (LEGACY_BUILD_SYSTEM, UNKNOWN, build_system_problem, fetches_wheel, lacks_linux_wheel,
                       requirement_problem, tag_problem, wheel_problem)

__all__ = [
    "IndexClient",
    "IndexFile",
    "NotFound",
    "ReleaseMetadata",
    "DEFAULT_INDEX",
    "mask_url",
    "project_name",
]

DEFAULT_INDEX = "https://pypi.org/simple/"
_JSON = "application/vnd.pypi.simple.v1+json"
_USER_AGENT = "compat-db-sync (+https://github.com/compat-dev/compat)"

# -- limits ------------------------------------------------------------------------
# Every bound `db sync` puts on what an index sends, in one place; docs/reliability.md
# lists them. A reply over a bound is refused with a message naming it, never read whole.

KiB, MiB, GiB = 1024, 1024 * 1024, 1024 * 1024 * 1024
PAGE_LIMIT = 32 * MiB  # a project's JSON page (PyPI's largest pages are a few MiB)
METADATA_LIMIT = 16 * MiB  # a .metadata file, and a wheel's METADATA member once inflated
RANGE_BLOCK = 64 * KiB  # the size of one range request into a wheel
RANGE_TAIL = 128 * KiB  # the end of a wheel read first: its zip directory and .dist-info, for most wheels
RANGE_SLACK = 1 * KiB  # the most a range reply may exceed what was asked (the excess is dropped)
RANGE_TOTAL_LIMIT = 64 * MiB  # the most of one wheel read by range requests (central directory + METADATA)
WHEEL_LIMIT = 1 * GiB  # a wheel downloaded whole (a server without ranges), to a temporary file
SDIST_LIMIT = 200 * 1024 * 1024  # the largest sdist downloaded to read its PKG-INFO
PKG_INFO_LIMIT = 4 * 1024 * 1024  # the largest PKG-INFO accepted (a long description, not more)
SDIST_INFLATE_LIMIT = 1 * GiB  # the most of a .tar.gz sdist inflated while looking for PKG-INFO
BUILD_SYSTEM_LIMIT = 64 * MiB  # the most of an sdist downloaded to find its pyproject.toml (then "unknown")
PYPROJECT_LIMIT = 1 * MiB  # the largest pyproject.toml read
REQUEST_TIMEOUT = 30.0  # seconds for one request, its whole duration (`--timeout`)
PACKAGE_DEADLINE = 600.0  # seconds of wall-clock time with one package's requests in flight (`--package-deadline`)
RUN_DEADLINE = 3600.0  # seconds: the whole run (`--deadline`)
MAX_REDIRECTS = 5  # redirects followed for one request
SHOWN_URL = 300  # characters of a URL a message prints: an index may name a URL of any length


class NotFound(PackageIndexError):
    """The index has no such project or file (HTTP 404 or 410)."""


class _Refused(PackageIndexError):
    """A reply or URL that breaks a rule: refused at once, never retried."""


class _NoRanges(Exception):
    pass


class _TooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


def _size(n: float) -> str:
    for unit, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n:g} bytes"


# -- names and URLs ------------------------------------------------------------------

_PROJECT_NAME = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)
_HOST = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$")


def project_name(text: Any) -> str | None:
    """The normalized project name `text` spells (PEP 508, PEP 503), or None
    when it is not one: a path, a URL, an empty or decorated string."""
    if not isinstance(text, str) or not _PROJECT_NAME.match(text):
        return None
    return str(canonicalize_name(text))


def host_name(text: Any) -> str | None:
    """A host name or IP address as `allow_hosts` and `--allow-host` give it, lower-cased; None if not one."""
    if not isinstance(text, str):
        return None
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    if ":" in bare:  # an IPv6 address
        try:
            import ipaddress

            return str(ipaddress.IPv6Address(bare))
        except ValueError:
            return None
    return bare.lower().rstrip(".") if _HOST.match(bare) else None


def mask_url(url: str) -> str:
    """`url` with its credentials masked: ``https://user:***@host/simple`` (a
    user alone may be a token: ``https://***@host/``), and cut to SHOWN_URL
    characters (masked first, so a cut never leaves part of a secret)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        parts = None
    netloc = parts.netloc if parts is not None else ""
    if "@" not in netloc:
        if parts is None and "@" in url:  # not even a URL: mask what looks like userinfo
            return _shorten(re.sub(r"//[^/@]*@", "//***@", url))
        return _shorten(url)
    userinfo, _, hostport = netloc.rpartition("@")
    user, colon, _ = userinfo.partition(":")
    shown = f"{user}:***" if colon else "***"
    return _shorten(urllib.parse.urlunsplit(parts._replace(netloc=f"{shown}@{hostport}")))


def _shorten(text: str) -> str:
    """`text` cut in its middle to SHOWN_URL characters: the start names the
    host and the end the file, which is what a reader of the message needs."""
    if len(text) <= SHOWN_URL:
        return text
    return f"{text[: SHOWN_URL - 63]}...{text[-60:]}"


def _origin(parts: urllib.parse.SplitResult) -> tuple[str, str, int]:
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.scheme, (parts.hostname or "").rstrip("."), port


# -- HTTP with a deadline on each whole request --------------------------------------

_active = threading.local()  # the _Watch of the request this thread is making


class _Watch:
    """The deadline of one request (with its redirects): when it passes, the
    request's sockets are shut down, which ends a connect, a TLS handshake or
    a read blocked on them. A socket timeout bounds each read; this bounds
    their sum, so a server trickling a byte at a time cannot hold a request."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.expired = False
        self.done = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        _WATCHDOG.add(self)

    def register(self, sock: socket.socket) -> socket.socket:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shutdown(sock)
        return sock

    def expire(self) -> None:
        with self._lock:
            if self.done:
                return
            self.expired = True
            for sock in self._sockets:
                _shutdown(sock)

    def passed(self) -> bool:
        return self.expired or time.monotonic() > self.deadline

    def close(self) -> None:
        with self._lock:
            self.done = True


class _Watchdog:
    """One thread for the deadlines of every request: it sleeps until the
    earliest one and expires the watches that are due. (A timer thread per
    request cost more than the request itself to a near index.) The thread
    starts with the first request and ends after a minute without any."""

    IDLE = 60.0

    def __init__(self) -> None:
        self._due: list[tuple[float, int, _Watch]] = []
        self._wake = threading.Condition()
        self._order = itertools.count()  # breaks ties between equal deadlines
        self._thread: threading.Thread | None = None

    def add(self, watch: _Watch) -> None:
        with self._wake:
            heapq.heappush(self._due, (watch.deadline, next(self._order), watch))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="compat-request-deadlines", daemon=True)
                self._thread.start()
            elif self._due[0][2] is watch:  # earlier than what the thread sleeps until
                self._wake.notify()

    def _run(self) -> None:
        with self._wake:
            while True:
                while self._due and self._due[0][2].done:
                    heapq.heappop(self._due)
                if not self._due:
                    if not self._wake.wait(self.IDLE) and not self._due:
                        self._thread = None
                        return
                    continue
                deadline, _, watch = self._due[0]
                left = deadline - time.monotonic()
                if left > 0:
                    self._wake.wait(left)
                    continue
                heapq.heappop(self._due)
                watch.expire()


_WATCHDOG = _Watchdog()


def _shutdown(sock: socket.socket) -> None:
    """End what is blocked on `sock` from another thread. A TLS socket is shut
    down underneath its TLS layer: its own shutdown drops that layer, and a
    handshake or read under way then fails with AttributeError instead of
    the OSError the request's error handling expects (a full sync hit it)."""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except (OSError, ValueError):
        pass


def _watched(sock: Any) -> Any:
    watch = getattr(_active, "watch", None)
    return watch.register(sock) if watch is not None else sock


# A host's addresses, looked up once a few minutes: a sync opens thousands
# of connections to two hosts, and a lookup for each (concurrent ones on
# every worker) made the resolver the bottleneck, and sometimes fail.
_ADDRESS_TTL = 300.0
_addresses: dict[tuple[str, int], tuple[float, list[Any]]] = {}
_addresses_lock = threading.Lock()


def _lookup(host: str, port: int) -> list[Any]:
    now = time.monotonic()
    with _addresses_lock:
        cached = _addresses.get((host, port))
    if cached is not None and now - cached[0] < _ADDRESS_TTL:
        return cached[1]
    found = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
    with _addresses_lock:
        _addresses[(host, port)] = (now, found)
    return found


def _connect(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
    """socket.create_connection to the host's addresses from `_lookup` (an
    address given as such is not looked up again), each in turn."""
    host, port = address
    error: OSError | None = None
    for *_, where in _lookup(host, port):
        try:
            return socket.create_connection(where[:2], *args, **kwargs)
        except OSError as exc:
            error = exc
    raise error if error is not None else OSError(f"no address for {host}")


class _HTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = lambda *a, **k: _watched(_connect(*a, **k))


class _HTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = lambda *a, **k: _watched(_connect(*a, **k))

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)  # the TCP connection (and a proxy's tunnel)
        server_hostname = self._tunnel_host or self.host
        # the handshake runs once the TLS socket is watched, so a deadline can end it too
        self.sock = _watched(self._context.wrap_socket(self.sock, server_hostname=server_hostname,  # type: ignore[attr-defined]
                                                       do_handshake_on_connect=False))
        self.sock.do_handshake()


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(_HTTPConnection, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(_HTTPSConnection, req, context=self._context)  # type: ignore[attr-defined]


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to a URL the client may fetch, never from
    https to http; sends the index's credentials only to the index's origin."""

    max_redirections = MAX_REDIRECTS

    def __init__(self, client: IndexClient) -> None:
        self.client = client

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        problem = self.client._url_problem(newurl, came_from=req.full_url)
        if problem is not None:
            fp.close()
            raise _Refused(f"{mask_url(req.full_url)}: redirected to {mask_url(newurl)}, refused: {problem}")
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None:
            self.client._authorize(new)
        return new


def _opener(client: IndexClient) -> Callable[..., Any]:
    """An opener that speaks http and https only: no file:, ftp: or data: handler."""
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        urllib.request.UnknownHandler(),
        _HTTPHandler(),
        _HTTPSHandler(context=ssl.create_default_context()),
        urllib.request.HTTPDefaultErrorHandler(),
        _Redirects(client),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    return opener.open


# -- what the index lists ---------------------------------------------------------------


@dataclass(frozen=True)
class IndexFile:
    """One distribution file as the simple API lists it."""

    filename: str
    url: str
    version: Version
    uploaded: str | None
    yanked: bool
    metadata: bool | dict[str, str]
    sha256: str | None
    size: int | None = None
    project: str = ""  # the normalized project name its filename gives

    @property
    def is_wheel(self) -> bool:
        return self.filename.endswith(".whl")

    @property
    def tag(self) -> str:
        """A wheel's tag as its filename writes it (``cp312-cp312-manylinux_2_28_x86_64``)."""
        return _wheel_tag(self.filename)

    @property
    def build(self) -> tuple[int, str] | tuple[()]:
        """A wheel's PEP 427 build tag, as packaging compares them (``()`` when it has none)."""
        return parse_wheel_filename(self.filename)[2]


def _wheel_tag(filename: str) -> str:
    return "-".join(filename[: -len(".whl")].split("-")[-3:])


@dataclass(frozen=True)
class Page:
    """A project's page: the files kept, and the files ignored with the reason."""

    files: list[IndexFile]
    ignored: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Known:
    """A file's requirements read before (its metadata cannot change: an
    index serves a file name once), and where from: "snapshot" or "journal"."""

    requires_python: str | None
    requires_dist: tuple[str, ...]
    how: str


@dataclass(frozen=True)
class ReleaseMetadata:
    version: str
    uploaded: str | None
    requires_python: str | None
    requires_dist: list[str]
    yanked: bool
    filename: str
    how: str  # "metadata-file", "range", "download", "sdist", or "unreadable" (an sdist not read)
    wheels: tuple[dict[str, Any], ...] = ()  # every wheel of the release: file, url, sha256, size
    tags: tuple[str, ...] = ()  # the distinct tags of the wheels an installer considers, sorted
    sdist: str | bool = False  # the sdist an installer builds when no wheel fits (its file name), or False
    known: bool = True  # False: the requirements could not be read, and are not "none"
    refused: str | None = None  # why the metadata was refused (then `known` is False)
    followed: tuple[str, ...] | None = None  # the lines the closure follows, when not requires_dist
    invalid: int = 0  # Requires-Dist lines that do not parse
    # how its sdist is built (`build_system_of`), read where Linux lacks a wheel of it (lacks_linux_wheel);
    # None when not read
    build_system: dict[str, Any] | str | None = None
    build_bytes: int = 0  # the bytes of the sdist downloaded to read it

    @property
    def walked(self) -> list[str] | tuple[str, ...]:
        """The Requires-Dist lines the closure follows."""
        return self.requires_dist if self.followed is None else self.followed


class IndexClient:
    """A small, patient and suspicious client of one index."""

    def __init__(
        self,
        index_url: str = DEFAULT_INDEX,
        *,
        timeout: float = REQUEST_TIMEOUT,
        retries: int = 3,
        backoff: float = 0.5,
        opener: Callable[..., Any] | None = None,
        allow_hosts: tuple[str, ...] | list[str] | frozenset[str] = (),
        deadline: float = RUN_DEADLINE,
        package_deadline: float = PACKAGE_DEADLINE,
        use_netrc: bool = True,
    ) -> None:
        shown = mask_url(index_url)
        try:
            parts = urllib.parse.urlsplit(index_url.strip())
            parts.port  # noqa: B018 - raises ValueError for a bad port
        except ValueError as exc:
            raise PackageIndexError(f"index URL {shown}: not a valid URL ({exc})") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PackageIndexError(f"index URL {shown}: not an http(s) URL such as https://pypi.org/simple/")
        hostport = parts.netloc.rpartition("@")[2]
        path = parts.path if parts.path.endswith("/") else parts.path + "/"
        self.index_url = urllib.parse.urlunsplit((parts.scheme, hostport, path, parts.query, ""))
        self._index = urllib.parse.urlsplit(self.index_url)
        self._origin = _origin(self._index)
        self._auth: str | None = None
        self._userinfo = ""  # what an index URL prints in place of its credentials
        if parts.username is not None:
            user, password = urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or "")
            self._userinfo = f"{parts.username}:***@" if parts.password is not None else "***@"
            self._auth = _basic(user, password)
        elif use_netrc:
            self._auth = _netrc_auth(self._origin[1])
        hosts = {self._origin[1]}
        for host in allow_hosts:
            name = host_name(host)
            if name is None:
                raise PackageIndexError(f"allowed host {host!r}: not a host name")
            hosts.add(name)
        self.allowed_hosts = frozenset(hosts)
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.package_deadline = package_deadline
        self.deadline = deadline
        self._run_deadline = time.monotonic() + deadline
        self._open = opener or _opener(self)
        self._count = threading.Lock()
        self._spent: dict[str, float] = {}  # project -> wall time with a request in flight, closed spans
        self._busy_since: dict[str, float] = {}  # project -> when its current span of requests began
        self._in_flight: dict[str, int] = {}
        self._stopped = False
        self.requests = 0

    # -- URLs and credentials -------------------------------------------------------

    def display(self, url: str) -> str:
        """`url` as messages print it: a URL of the index's origin with the
        index URL's credentials masked."""
        if not self._userinfo:
            return mask_url(url)
        try:
            parts = urllib.parse.urlsplit(url)
            same = "@" not in parts.netloc and _origin(parts) == self._origin
        except ValueError:
            same = False
        if not same:
            return mask_url(url)
        return _shorten(urllib.parse.urlunsplit(parts._replace(netloc=self._userinfo + parts.netloc)))

    def _url_problem(self, url: str, *, came_from: str | None = None) -> str | None:
        """Why `url` may not be fetched, or None: http(s) only, https only
        unless the index is http, never from https to http, no credentials in
        it, and only on the index's host or an allowed one."""
        try:
            parts = urllib.parse.urlsplit(url)
            parts.port  # noqa: B018
        except ValueError as exc:
            return f"not a valid URL ({exc})"
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            return f"the {scheme + ':' if scheme else 'scheme-less'} URL is not http(s)"
        if scheme == "http" and self._index.scheme == "https":
            return "plain http from an https index"
        if scheme == "http" and came_from is not None and came_from.lower().startswith("https:"):
            return "a redirect from https to plain http"
        if "@" in parts.netloc:
            return "the URL carries credentials"
        host = (parts.hostname or "").rstrip(".")
        if not host:
            return "the URL has no host"
        if host not in self.allowed_hosts:
            return f"host {host} is not the index's and not allowed (allow_hosts in sync.toml, or --allow-host)"
        return None

    def _authorize(self, request: urllib.request.Request) -> None:
        """Credentials go to the index's origin only, never to another host
        (a redirect to a file host does not carry them)."""
        if self._auth is None:
            return
        try:
            same = _origin(urllib.parse.urlsplit(request.full_url)) == self._origin
        except ValueError:
            same = False
        if same:
            request.add_unredirected_header("Authorization", self._auth)

    # -- time ------------------------------------------------------------------------

    def stop(self) -> None:
        """Make every later request fail at once (the run is failing anyway)."""
        self._stopped = True

    def _seconds(self, project: str, url: str) -> tuple[float, str]:
        """The time the next request of `project` may take (the per-request
        timeout, within what is left of the package's and the run's
        deadlines), and what a request cut at that time says."""
        now = time.monotonic()
        if self._stopped:
            raise _Refused(f"{project}: {self.display(url)}: not requested (the sync is stopping)")
        run = f"timed out: the run's deadline ({self.deadline:g} s, --deadline) has passed"
        package = (f"timed out: the package's requests have taken {self.package_deadline:g} s "
                   f"(--package-deadline)")
        left_run = self._run_deadline - now
        if left_run <= 0:
            raise _Refused(f"{project}: {self.display(url)}: {run}")
        left_package = self.package_deadline - self.package_seconds(project, now)
        if left_package <= 0:
            raise _Refused(f"{project}: {self.display(url)}: {package}")
        return min(
            (self.timeout, f"timed out (a request may take {self.timeout:g} s in all, --timeout)"),
            (left_run, run),
            (left_package, package),
            key=lambda bound: bound[0],
        )

    def package_seconds(self, project: str, now: float | None = None) -> float:
        """The wall-clock time during which `project` had a request in flight:
        requests made at once on several threads count once, and the time
        its requests wait behind other packages' does not count at all."""
        with self._count:
            spent = self._spent.get(project, 0.0)
            since = self._busy_since.get(project)
        if since is not None:
            spent += (time.monotonic() if now is None else now) - since
        return spent

    def _begin(self, project: str) -> None:
        with self._count:
            self.requests += 1
            flying = self._in_flight.get(project, 0)
            if not flying:
                self._busy_since[project] = time.monotonic()
            self._in_flight[project] = flying + 1

    def _end(self, project: str) -> None:
        with self._count:
            flying = self._in_flight.get(project, 1) - 1
            self._in_flight[project] = flying
            if not flying:
                since = self._busy_since.pop(project, None)
                if since is not None:
                    self._spent[project] = self._spent.get(project, 0.0) + time.monotonic() - since

    # -- HTTP ---------------------------------------------------------------

    def _request(
        self,
        url: str,
        *,
        project: str,
        headers: dict[str, str] | None = None,
        method: str = "GET",
        limit: int | None = None,
        what: str = "reply",
        sink: BinaryIO | None = None,
        consume: Callable[[BinaryIO], None] | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        """One request, retried with backoff.

        The body is read only up to `limit` bytes (a larger one raises
        _TooLarge, unread when its Content-Length says so), into `sink` when
        given. A Range request answered with the whole file (200) returns an
        empty body, unread. Each attempt has a deadline on its whole duration.
        `consume`, when given, reads the body itself, as a stream that
        raises _TooLarge past `limit` (whatever the Content-Length says), and
        may stop reading at any point: the body returned is then empty.
        """
        problem = self._url_problem(url)
        if problem is not None:
            raise _Refused(f"{project}: {self.display(url)}: refused: {problem}")
        headers = {"User-Agent": _USER_AGENT, **(headers or {})}
        last: str = "no attempt"
        for attempt in range(self.retries + 1):
            if attempt:
                pause = self.backoff * 2 ** (attempt - 1)
                if pause >= self._seconds(project, url)[0]:
                    break
                time.sleep(pause)
            seconds, cut = self._seconds(project, url)
            self._begin(project)
            request = urllib.request.Request(url, headers=headers, method=method)
            self._authorize(request)
            watch = _Watch(seconds)
            _active.watch = watch
            response = None
            try:
                response = self._open(request, timeout=seconds)
                status = response.status
                answer = {k.lower(): v for k, v in response.headers.items()}
                length = _content_length(response.headers)
                if length is False:
                    raise _Refused(f"{project}: {self.display(url)}: malformed Content-Length {answer.get('content-length', '')[:40]!r}")
                ranged = "Range" in headers
                if status not in ((200, 206) if ranged else (200,)):
                    raise _Refused(f"{project}: {self.display(url)}: unexpected HTTP {status}")
                if method == "HEAD" or (ranged and status == 200):
                    # A server that ignores Range would send the whole
                    # file: stop before reading it.
                    return status, answer, b""
                if consume is not None:
                    consume(_Body(response, limit, watch, length))
                    return status, answer, b""
                if limit is not None and isinstance(length, int) and length > limit:
                    raise _TooLarge(limit)
                body = _read_body(response, limit, watch, sink)
                if watch.passed():
                    raise TimeoutError
                got = len(body) if sink is None else sink.tell()
                if isinstance(length, int) and got != length:
                    raise ConnectionError(f"incomplete reply ({got} of {length} bytes)")
                return status, answer, body
            except urllib.error.HTTPError as exc:
                exc.close()
                if exc.code in (404, 410):
                    raise NotFound(f"{project}: {self.display(url)}: not found on the index (HTTP {exc.code})") from None
                if exc.code == 416:
                    return 416, {k.lower(): v for k, v in exc.headers.items()}, b""
                last = f"HTTP {exc.code}"
                if exc.code < 500 and exc.code != 429:
                    break
            except (PackageIndexError, _TooLarge, _NoRanges):
                raise
            except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError, EOFError) as exc:
                if watch.expired or watch.passed():
                    last = cut
                else:
                    reason = getattr(exc, "reason", None) or exc
                    last = str(reason).splitlines()[0][:200] if str(reason) else type(exc).__name__
            finally:
                watch.close()
                _active.watch = None
                if response is not None:
                    try:
                        response.close()
                    except Exception:  # noqa: BLE001 - closing a broken connection
                        pass
                self._end(project)
            if sink is not None:
                sink.seek(0)
                sink.truncate()
        attempts = self.retries + 1
        raise PackageIndexError(f"{project}: {self.display(url)}: {last} (after {attempts} attempt{'s' * (attempts != 1)})")

    # -- the simple API --------------------------------------------------------

    def page(self, name: str, *, fresh: bool = False) -> Page:
        """Every file of project `name`, from its PEP 691 JSON page, with the
        files ignored: another project's, or a name no installer accepts.

        As pip asks, a cache on the way must check the page with the index
        (``max-age=0``) rather than answer with a copy it holds: a listing
        older than the release just uploaded is how a sync misses it.
        `fresh` asks harder (``no-cache``), for a page that seems stale."""
        project = project_name(name)
        if project is None:
            raise PackageIndexError(f"{name!r}: not a package name (PEP 508)")
        url = urllib.parse.urljoin(self.index_url, f"{project}/")
        shown = self.display(url)
        try:
            status, headers, body = self._request(
                url, project=project, limit=PAGE_LIMIT,
                headers={"Accept": f"{_JSON}, application/json;q=0.5",
                         "Cache-Control": "no-cache" if fresh else "max-age=0", **({"Pragma": "no-cache"} if fresh else {})},
            )
        except _TooLarge:
            raise PackageIndexError(f"{project}: {shown}: the project page is larger than {_size(PAGE_LIMIT)} (the limit)") from None
        kind = headers.get("content-type", "")
        if "json" not in kind:
            raise PackageIndexError(f"{project}: {shown}: the index answered {kind[:80] or 'no content type'}, not the JSON simple API (PEP 691)")
        try:
            page = json.loads(body)
        except RecursionError:
            raise PackageIndexError(f"{project}: {shown}: malformed JSON (nested too deeply)") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise PackageIndexError(f"{project}: {shown}: malformed JSON ({str(exc)[:120]})") from None
        if not isinstance(page, dict) or not isinstance(page.get("files"), list):
            raise PackageIndexError(f"{project}: {shown}: malformed project page (no files list)")
        named = page.get("name")
        if named is not None and project_name(named) != project:
            raise PackageIndexError(f"{project}: {shown}: malformed project page (it names the project {str(named)[:80]!r})")
        files: list[IndexFile] = []
        ignored: list[str] = []
        for number, entry in enumerate(page["files"]):
            problem, file = self._file(entry, url, project)
            if problem is not None:
                raise PackageIndexError(f"{project}: {shown}: malformed file entry #{number + 1}: {problem}")
            if isinstance(file, str):
                ignored.append(file)
            elif file is not None:
                files.append(file)
        return Page(files, ignored)

    def files(self, name: str) -> list[IndexFile]:
        """Every file of project `name` that counts (see `page`)."""
        return self.page(name).files

    def _file(self, entry: Any, page: str, project: str) -> tuple[str | None, IndexFile | str | None]:
        """(problem, None) for a malformed entry; (None, reason) for a file
        ignored; (None, None) for a file that is not an installer's (an egg);
        else (None, the file)."""
        if not isinstance(entry, dict):
            return "not an object", None
        filename = entry.get("filename")
        if not isinstance(filename, str) or not filename:
            return f"filename {str(filename)[:80]!r} is not a string", None
        shown = repr(filename[:120])
        if any(c in filename for c in "/\\") or not filename.isprintable():
            return f"filename {shown} is not a file name", None
        url = entry.get("url")
        if not isinstance(url, str) or not url:
            return f"{shown}: url {str(url)[:80]!r} is not a string", None
        try:
            if filename.endswith(".whl"):
                named, version, _, _ = parse_wheel_filename(filename)
            elif filename.endswith((".tar.gz", ".zip")):
                named, version = parse_sdist_filename(filename)
            else:
                return None, None  # an egg, an installer: not something pip installs from here
        except ValueError as exc:  # InvalidWheelFilename, InvalidSdistFilename, InvalidVersion, a number too long
            return None, f"{filename[:120]}: not a valid file name ({str(exc)[:120]})"
        if named != project:
            return None, f"{filename[:120]}: a file of another project ({named})"
        if filename.endswith(".whl"):
            problem = tag_problem(_wheel_tag(filename))
            if problem is not None:  # packaging reads it; a snapshot could not hold it
                return None, f"{filename[:120]}: not a valid file name (its tags: {problem})"
        hashes = entry.get("hashes", {})
        if not isinstance(hashes, dict):
            return f"{shown}: hashes is not an object", None
        sha256 = hashes.get("sha256")
        if sha256 is not None and not (isinstance(sha256, str) and re.fullmatch(r"[0-9a-fA-F]{64}", sha256)):
            return f"{shown}: hashes.sha256 is not a SHA-256 digest", None
        uploaded = entry.get("upload-time")
        if uploaded is not None and not _is_time(uploaded):
            return f"{shown}: upload-time {str(uploaded)[:40]!r} is not an ISO 8601 time", None
        yanked = entry.get("yanked", False)
        if not isinstance(yanked, (bool, str)):
            return f"{shown}: yanked is neither true, false nor a reason", None
        metadata = entry.get("core-metadata", entry.get("dist-info-metadata", False))
        if isinstance(metadata, dict):
            if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
                return f"{shown}: core-metadata is not an object of hashes", None
            digest = metadata.get("sha256")
            if digest is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", digest):
                return f"{shown}: core-metadata.sha256 is not a SHA-256 digest", None
        elif not isinstance(metadata, bool):
            return f"{shown}: core-metadata is neither true, false nor an object of hashes", None
        size = entry.get("size")
        if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
            return f"{shown}: size {str(size)[:40]!r} is not a number of bytes", None
        try:
            absolute = urllib.parse.urldefrag(urllib.parse.urljoin(page, url))[0]
        except ValueError as exc:  # "https://[::1/x": an IPv6 host never closed
            return f"{shown}: url {mask_url(url)[:200]!r} is not a valid URL ({str(exc)[:80]})", None
        problem = self._url_problem(absolute)
        if problem is not None:
            return f"{shown}: url {mask_url(absolute)[:200]} refused: {problem}", None
        return None, IndexFile(
            filename=filename,
            url=absolute,
            version=version,
            uploaded=uploaded,
            yanked=bool(yanked),
            metadata={k: v.lower() for k, v in metadata.items()} if isinstance(metadata, dict) else metadata,
            sha256=sha256.lower() if sha256 else None,
            size=size,
            project=project,
        )

    # -- metadata -------------------------------------------------------------

    def metadata(self, file: IndexFile) -> tuple[str, str]:
        """The METADATA text of a wheel, and how it was obtained."""
        project = file.project or "?"
        if file.metadata:
            url = file.url + ".metadata"
            try:
                _, _, body = self._request(url, project=project, limit=METADATA_LIMIT)
            except _TooLarge:
                raise PackageIndexError(f"{project}: {self.display(url)}: the metadata file is larger than {_size(METADATA_LIMIT)} (the limit)") from None
            expected = file.metadata.get("sha256") if isinstance(file.metadata, dict) else None
            if expected and hashlib.sha256(body).hexdigest() != expected:
                raise PackageIndexError(f"{project}: {self.display(url)}: sha256 does not match the index's")
            return _text(body, f"{project}: {self.display(url)}"), "metadata-file"
        try:
            return self._metadata_by_ranges(file), "range"
        except _NoRanges:
            return self._metadata_by_download(file), "download"

    def _metadata_by_ranges(self, file: IndexFile) -> str:
        """METADATA read from the end of the wheel, where a zip keeps its
        directory and a wheel its .dist-info: the last RANGE_TAIL bytes in
        one request, which for most wheels is all it takes. The size comes
        from the index's page where it gives one (PEP 700), else from a HEAD
        request; a reply that states another size is refused."""
        size = file.size
        if size is None:
            status, headers, _ = self._request(file.url, project=file.project, method="HEAD")
            size = _content_length_text(headers.get("content-length"))
            if status != 200 or not isinstance(size, int) or headers.get("accept-ranges", "").lower() == "none":
                raise _NoRanges
        reader = _RangeReader(self, file, size)
        if size:
            reader.prefetch(max(0, size - RANGE_TAIL), size)
        return self._read_wheel(file, reader)

    def _metadata_by_download(self, file: IndexFile) -> str:
        where = f"{file.project}: {self.display(file.url)}"
        if file.size is not None and file.size > WHEEL_LIMIT:
            raise PackageIndexError(f"{where}: the wheel is larger than {_size(WHEEL_LIMIT)} (the limit for a wheel read whole)")
        with tempfile.TemporaryFile() as spool:
            try:
                self._request(file.url, project=file.project, limit=WHEEL_LIMIT, sink=spool)
            except _TooLarge:
                raise PackageIndexError(f"{where}: the wheel is larger than {_size(WHEEL_LIMIT)} (the limit for a wheel read whole)") from None
            if file.sha256 and _sha256(spool) != file.sha256:
                raise PackageIndexError(f"{where}: sha256 does not match the index's")
            spool.seek(0)
            return self._read_wheel(file, spool)

    def _read_wheel(self, file: IndexFile, source: BinaryIO) -> str:
        where = f"{file.project}: {self.display(file.url)}"
        try:
            with zipfile.ZipFile(source) as wheel:
                return _read_member(wheel, where)
        except (PackageIndexError, _NoRanges):
            raise
        except _ARCHIVE_ERRORS as exc:
            raise PackageIndexError(f"{where}: not a valid wheel ({_reason(exc)})") from None

    def sdist_metadata(self, file: IndexFile) -> tuple[str | None, str]:
        """The PKG-INFO text of an sdist and how it was obtained; None when
        the sdist is too large, or holds no PKG-INFO this reader accepts."""
        if file.metadata:
            return self.metadata(file)
        if file.size is not None and file.size > SDIST_LIMIT:
            return None, "unreadable"
        with tempfile.TemporaryFile() as spool:
            try:
                self._request(file.url, project=file.project, limit=SDIST_LIMIT, sink=spool)
            except _TooLarge:
                return None, "unreadable"
            if file.sha256 and _sha256(spool) != file.sha256:
                raise PackageIndexError(f"{file.project}: {self.display(file.url)}: sha256 does not match the index's")
            spool.seek(0)
            member = _pkg_info(spool, file.filename)
        if member is None:
            return None, "unreadable"
        try:
            return member.decode("utf-8"), "sdist"
        except UnicodeDecodeError:
            return None, "unreadable"

    def build_system(self, file: IndexFile) -> tuple[dict[str, Any] | str, int]:
        """How sdist `file` is built (`build_system_of` its pyproject.toml),
        and the bytes of it downloaded to tell. A .tar.gz is read as a
        stream that stops at its pyproject.toml; a .zip, whose directory is
        at its end, is downloaded whole. Past BUILD_SYSTEM_LIMIT bytes, or
        from an archive that does not open, it is "unknown"; a download that
        fails is a PackageIndexError, as for any file."""
        where = f"{file.project}: {self.display(file.url)}"
        if file.filename.endswith(".zip"):
            with tempfile.TemporaryFile() as spool:
                try:
                    self._request(file.url, project=file.project, limit=BUILD_SYSTEM_LIMIT, sink=spool)
                except _TooLarge:
                    return UNKNOWN, spool.tell()
                size = spool.tell()
                if file.sha256 and _sha256(spool) != file.sha256:
                    raise PackageIndexError(f"{where}: sha256 does not match the index's")
                spool.seek(0)
                try:
                    pyproject = _zip_pyproject(spool)
                except (_Unreadable, PackageIndexError, *_ARCHIVE_ERRORS):
                    return UNKNOWN, size
                return build_system_of(pyproject), size
        read: list[Any] = []

        def consume(body: _Body) -> None:  # once per attempt: a retry starts again
            read[:] = [_tar_build_system(body), body.count]

        try:
            self._request(file.url, project=file.project, limit=BUILD_SYSTEM_LIMIT, consume=consume)  # type: ignore[arg-type]
        except _TooLarge:
            return UNKNOWN, BUILD_SYSTEM_LIMIT
        return read[0], read[1]

    def release(self, files: list[IndexFile], *, build_systems: dict[str, Any] | None = None,
                reuse: Callable[[IndexFile], Known | None] | None = None) -> ReleaseMetadata:
        """Metadata of one release, from the file an installer would most likely use.

        That is a wheel when the release has one. Otherwise it is the sdist,
        whose requirements count only where PEP 643 makes them binding; when
        they are not, the release is recorded with `known` False, never as a
        release without requirements. Metadata that names another project or
        version, or whose Requires-Python or a Requires-Dist line does not
        parse, is refused: `known` False and `refused` says why.

        Where Linux lacks a wheel of it (`lacks_linux_wheel`), how its sdist
        is built is read too (`build_system`), unless `build_systems` (sdist
        file name -> build system: an older snapshot's) holds it: a file on
        the index does not change.

        Nor does its metadata: where `reuse` gives the requirements of the
        file to read (an older snapshot read it, or an interrupted sync),
        nothing is requested for them; they are checked as if just read.
        """
        candidates = _installable(files)
        wheels = [f for f in candidates if f.is_wheel]
        raw: dict[str, Any]
        unparsed: dict[str, Any] = {}
        pkg_info: str | None = None
        chosen = _preferred_wheel(wheels) if wheels else _preferred_sdist(candidates)
        held = reuse(chosen) if reuse is not None else None
        if held is not None:
            raw = {"name": chosen.project, "version": str(chosen.version), "requires_dist": list(held.requires_dist)}
            if held.requires_python is not None:
                raw["requires_python"] = held.requires_python
            how, known = held.how, True
        elif wheels:
            text, how = self.metadata(chosen)
            raw, unparsed = _parse(text, chosen, self)
            known = True
        else:
            pkg_info, how = self.sdist_metadata(chosen)
            raw, unparsed = _parse(pkg_info, chosen, self) if pkg_info is not None else ({}, {})
            known = pkg_info is not None and _static_requirements(raw)
        refused, followed, invalid = None, None, 0
        if wheels or pkg_info is not None or held is not None:
            refused, followed, invalid = _check(raw, unparsed, chosen, known)
        if refused is not None:
            known = False
        tags = tuple(sorted({f.tag for f in wheels}))
        sdists = [f for f in candidates if not f.is_wheel]
        build_system, build_bytes = None, 0
        if sdists and lacks_linux_wheel(tags):
            sdist = _preferred_sdist(sdists)
            build_system = (build_systems or {}).get(sdist.filename)
            if build_system is None:
                build_system, build_bytes = self.build_system(sdist)
        return ReleaseMetadata(
            version=str(chosen.version),
            uploaded=min((f.uploaded for f in files if f.uploaded), default=None),
            requires_python=raw.get("requires_python") if known else None,
            requires_dist=list(raw.get("requires_dist", [])) if known else [],
            yanked=all(f.yanked for f in files),
            filename=chosen.filename,
            how=how,
            wheels=_wheel_records(files),
            tags=tags,
            sdist=sdist_of(candidates),
            known=known,
            refused=refused,
            followed=followed,
            invalid=invalid,
            build_system=build_system,
            build_bytes=build_bytes,
        )


def _is_time(value: Any) -> bool:
    """Whether an upload time starts with a real date (ASCII digits; a
    snapshot keeps that date, and its reader refuses 2026-13-45)."""
    if not isinstance(value, str) or not re.match(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
        return False
    try:
        datetime.date.fromisoformat(value[:10])
    except ValueError:
        return False
    return True


def _wheel_records(files: list[IndexFile]) -> tuple[dict[str, Any], ...]:
    """The release's unyanked wheels as a lock file names them (file, url,
    sha256, size), sorted by file name. A wheel the index gives no SHA-256 or
    size for cannot go into a lock, and a snapshot holding it would be refused
    by its reader (`snapshot.wheel_problem`): it is left out."""
    records = []
    for file in sorted(files, key=lambda f: f.filename):
        if file.is_wheel and not file.yanked:
            record = {"file": file.filename, "url": file.url, "sha256": file.sha256, "size": file.size}
            if wheel_problem(record, file.project, file.version) is None:
                records.append(record)
    return tuple(records)


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def _netrc_path() -> str | None:
    """The .netrc file to read, as pip (through requests) finds it: the file
    the NETRC environment variable names, else ~/.netrc, else ~/_netrc; None
    when there is none."""
    named = os.environ.get("NETRC")
    candidates = [named] if named else ["~/.netrc", "~/_netrc"]
    for candidate in candidates:
        try:
            path = os.path.expanduser(candidate)
        except (KeyError, RuntimeError):  # no home folder to expand ~ to
            continue
        if os.path.isfile(path):
            return path
    return None


def _netrc_auth(host: str) -> str | None:
    """Credentials for `host` from the .netrc file (`_netrc_path`); a missing,
    unreadable or malformed file gives none, and its content is never printed
    (a parse error quotes the file's lines, so it is not shown either)."""
    path = _netrc_path()
    if path is None:
        return None
    try:
        entry = netrc.netrc(path).authenticators(host)
    except (OSError, netrc.NetrcParseError, UnicodeDecodeError, ValueError):
        return None
    if not entry:
        return None
    login, _, password = entry
    return _basic(login or "", password or "")


def _content_length(headers: Any) -> int | None | bool:
    """The Content-Length of a reply: an int, None when absent, False when malformed."""
    values = set(headers.get_all("Content-Length") or []) if hasattr(headers, "get_all") else {headers.get("content-length")} - {None}
    if not values:
        return None
    if len(values) > 1:
        return False
    return _content_length_text(values.pop())


def _content_length_text(value: str | None) -> int | None | bool:
    if value is None:
        return None
    value = value.strip()
    if not value.isdigit() or not value.isascii() or len(value) > 18:
        return False
    return int(value)


def _read_body(response: Any, limit: int | None, watch: _Watch, sink: BinaryIO | None) -> bytes:
    """Read a body in chunks, at most `limit` bytes, checking the deadline between chunks."""
    read = getattr(response, "read1", None) or response.read
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = read(64 * KiB)
        if not chunk:
            break
        total += len(chunk)
        if limit is not None and total > limit:
            raise _TooLarge(limit)
        if watch.passed():
            raise TimeoutError
        if sink is not None:
            sink.write(chunk)
        else:
            chunks.append(chunk)
    return b"".join(chunks)


class _Body(io.RawIOBase):
    """A reply's body as a stream, for a reader that may stop before its
    end: at most `limit` bytes (then _TooLarge), the request's deadline
    checked before each read, the Content-Length checked at the end. What
    the connection raised is kept in `failed`: a reader that takes it for a
    malformed archive raises it again, and the request is retried."""

    def __init__(self, response: Any, limit: int | None, watch: _Watch, length: int | None) -> None:
        self._read = getattr(response, "read1", None) or response.read
        self.limit = limit
        self.watch = watch
        self.length = length
        self.count = 0
        self.failed: BaseException | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            if self.watch.passed():
                raise TimeoutError
            data = self._read(min(len(buffer), 64 * KiB))
            if not data and isinstance(self.length, int) and self.count != self.length:
                raise ConnectionError(f"incomplete reply ({self.count} of {self.length} bytes)")
            self.count += len(data)
            if self.limit is not None and self.count > self.limit:
                raise _TooLarge(self.limit)
        except (_TooLarge, OSError, http.client.HTTPException, ValueError, EOFError) as exc:
            self.failed = exc
            raise
        buffer[: len(data)] = data
        return len(data)


def _sha256(handle: BinaryIO) -> str:
    handle.seek(0)
    digest = hashlib.sha256()
    for block in iter(lambda: handle.read(MiB), b""):
        digest.update(block)
    return digest.hexdigest()


class _RangeReader(io.RawIOBase):
    """A seekable file over HTTP range requests, reading ahead in blocks, at
    most RANGE_TOTAL_LIMIT bytes in all."""

    def __init__(self, client: IndexClient, file: IndexFile, size: int) -> None:
        self.client = client
        self.file = file
        self.url = file.url
        self.size = size
        self.position = 0
        self.fetched = 0
        self._blocks: dict[int, bytes] = {}

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def _block(self, index: int) -> bytes:
        if index not in self._blocks:
            self._fetch(index, index)
        return self._blocks[index]

    def prefetch(self, start: int, end: int) -> None:
        """Read bytes `start` to `end` (the blocks holding them) in one request."""
        self._fetch(start // RANGE_BLOCK, (end - 1) // RANGE_BLOCK)

    def _fetch(self, first: int, last: int) -> None:
        """Blocks `first` to `last`, in one range request (a central
        directory of thousands of entries is one request, not dozens)."""
        where = f"{self.file.project}: {self.client.display(self.url)}"
        start = first * RANGE_BLOCK
        end = min(self.size, (last + 1) * RANGE_BLOCK) - 1
        asked = end - start + 1
        if self.fetched + asked > RANGE_TOTAL_LIMIT:
            raise PackageIndexError(
                f"{where}: reading its METADATA needs more than {_size(RANGE_TOTAL_LIMIT)} of the wheel (the limit)"
            )
        try:
            status, headers, body = self.client._request(
                self.url, project=self.file.project, headers={"Range": f"bytes={start}-{end}"}, limit=asked + RANGE_SLACK
            )
        except _TooLarge:
            raise PackageIndexError(
                f"{where}: a range reply larger than the {asked} bytes asked (bytes {start}-{end}), refused"
            ) from None
        if status != 206:
            raise _NoRanges
        stated = re.fullmatch(r"\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*", headers.get("content-range", ""))
        if headers.get("content-range") is not None and (stated is None or int(stated.group(1)) != start):
            raise PackageIndexError(f"{where}: the range reply covers {headers['content-range'][:60]!r}, not bytes {start}-{end}")
        if len(body) < asked:
            raise PackageIndexError(f"{where}: short range response ({len(body)} bytes for {start}-{end})")
        if stated is not None and stated.group(3) != "*" and int(stated.group(3)) != self.size:
            raise PackageIndexError(f"{where}: the range reply says the file has {stated.group(3)[:20]} bytes, "
                                    f"not the {self.size} the index states")
        body = body[:asked]
        self.fetched += asked
        for index in range(first, last + 1):
            offset = (index - first) * RANGE_BLOCK
            self._blocks[index] = body[offset: offset + RANGE_BLOCK]

    def read(self, size: int | None = -1) -> bytes:
        if self.position >= self.size:
            return b""
        end = self.size if size is None or size < 0 else min(self.size, self.position + size)
        if end - self.position > RANGE_TOTAL_LIMIT:  # what the archive says it needs, before any list of blocks
            where = f"{self.file.project}: {self.client.display(self.url)}"
            raise PackageIndexError(
                f"{where}: reading its METADATA needs more than {_size(RANGE_TOTAL_LIMIT)} of the wheel (the limit)")
        missing = [i for i in range(self.position // RANGE_BLOCK, (end - 1) // RANGE_BLOCK + 1) if i not in self._blocks]
        while missing:  # each run of blocks not read yet, in one request
            run = 1
            while run < len(missing) and missing[run] == missing[0] + run:
                run += 1
            self._fetch(missing[0], missing[run - 1])
            missing = missing[run:]
        out = bytearray()
        while self.position < end:
            index, offset = divmod(self.position, RANGE_BLOCK)
            chunk = self._block(index)[offset: offset + (end - self.position)]
            out += chunk
            self.position += len(chunk)
        return bytes(out)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


# What a malformed archive raises from zipfile, tarfile, gzip and zlib.
_ARCHIVE_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    tarfile.TarError,
    zlib.error,
    struct.error,
    EOFError,
    OSError,
    ValueError,  # UnicodeDecodeError (member names) included
    NotImplementedError,  # an unsupported compression method
    RuntimeError,  # an encrypted member
    OverflowError,
    KeyError,
    IndexError,
)


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0][:160] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _text(body: bytes, where: str) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise PackageIndexError(f"{where}: METADATA is not UTF-8") from None


def _read_member(wheel: zipfile.ZipFile, where: str) -> str:
    """The wheel's one ``*.dist-info/METADATA``, inflated as a stream and
    refused past METADATA_LIMIT (whatever size its header declares)."""
    names = [n for n in wheel.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
    if not names:
        raise PackageIndexError(f"{where}: the wheel has no .dist-info/METADATA")
    if len(names) > 1:
        raise PackageIndexError(f"{where}: the wheel has {len(names)} .dist-info/METADATA members")
    return _text(_member_bytes(wheel, names[0], METADATA_LIMIT, where), where)


def _member_bytes(archive: zipfile.ZipFile, name: str, limit: int, where: str) -> bytes:
    info = archive.getinfo(name)
    if info.flag_bits & 0x1:
        raise PackageIndexError(f"{where}: {name} is encrypted")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise PackageIndexError(f"{where}: {name} uses compression method {info.compress_type} (only stored and deflate are read)")
    if info.file_size > limit:
        raise PackageIndexError(f"{where}: {name} inflates to {_size(info.file_size)}, more than {_size(limit)} (the limit)")
    out = bytearray()
    with archive.open(info) as member:
        while True:
            chunk = member.read(64 * KiB)
            if not chunk:
                break
            out += chunk
            if len(out) > limit:
                raise PackageIndexError(f"{where}: {name} inflates past {_size(limit)} (the limit)")
    return bytes(out)


_CHECKED = ("name", "version", "requires-python", "requires-dist", "metadata-version", "dynamic")


def _parse(text: str, file: IndexFile, client: IndexClient) -> tuple[dict[str, Any], dict[str, Any]]:
    try:
        raw, unparsed = parse_email(text)
    except Exception as exc:  # noqa: BLE001 - a third-party parser over untrusted text
        raise PackageIndexError(f"{file.project}: {client.display(file.url)}: the metadata does not parse ({_reason(exc)})") from None
    return dict(raw), dict(unparsed)


def _check(raw: dict[str, Any], unparsed: dict[str, Any], file: IndexFile, known: bool) -> tuple[str | None, tuple[str, ...] | None, int]:
    """(why the metadata is refused or None, the lines the closure follows, the lines that do not parse).

    The metadata must name the file's project and version (names
    normalized, versions compared as versions); the fields a snapshot stores
    must parse with packaging. A release refused only for its Requires-
    Python or Requires-Dist still has its parseable lines followed (a
    superset of the closure is safe); one that names another project or
    version has none followed.
    """
    bad = sorted({k for k in unparsed if k.lower() in _CHECKED})
    if bad:
        return f"malformed or repeated {', '.join(bad)}", (), 0
    name, version = raw.get("name"), raw.get("version")
    if project_name(name) is None:
        return f"Name {str(name)[:80]!r} is not a project name", (), 0
    if project_name(name) != file.project:
        return f"the metadata names the project {name!r}, not {file.project}", (), 0
    try:
        if Version(str(version)) != file.version:
            return f"the metadata names the version {str(version)[:80]!r}, not {file.version}", (), 0
    except ValueError:  # InvalidVersion, or a number too long to convert
        return f"Version {str(version)[:80]!r} is not a version", (), 0
    if not known:
        return None, None, 0
    valid = []
    invalid: list[tuple[str, str]] = []
    for line in raw.get("requires_dist", []):
        problem = _requirement_problem(line)
        if problem is None:
            valid.append(line)
        else:
            invalid.append((line, problem))
    problems = []
    requires_python = raw.get("requires_python")
    if requires_python is not None:
        try:
            usable = _comparable(SpecifierSet(requires_python))
        except InvalidSpecifier:
            problems.append(f"Requires-Python {requires_python[:80]!r} does not parse")
        else:
            if not usable:
                problems.append(f"Requires-Python {requires_python[:80]!r} names a version too long to compare")
    if invalid:
        (line, problem), more = invalid[0], len(invalid) - 1
        problems.append(f"Requires-Dist {line[:80]!r}{f' and {more} more' if more else ''} {problem}")
    if problems:
        return "; ".join(problems), tuple(valid), len(invalid)
    return None, None, 0


def _requirement_problem(line: str) -> str | None:
    """Why a Requires-Dist line may not be stored, or None: the snapshot
    reader's own rule (`snapshot.requirement_problem`: it parses, names no
    number too long to compare, and has a marker every machine can
    evaluate), so that sync never stores a line the reader, or a check,
    would fail on."""
    problem = requirement_problem(line)
    if problem is None:
        return None
    try:
        Requirement(line)
    except InvalidRequirement:
        return "does not parse"
    except (ValueError, RecursionError):  # a number too long to convert, a marker nested too deeply: said below
        pass
    return f"cannot be evaluated ({problem})"


def _comparable(specifier: SpecifierSet) -> bool:
    """Whether each of `specifier`'s versions can be compared with a version."""
    probe = Version("0")
    try:
        for one in specifier:  # one by one: a set stops at its first mismatch
            one.contains(probe, prereleases=True)
    except ValueError:
        return False
    return True


def _installable(files: list[IndexFile]) -> list[IndexFile]:
    """The files an installer considers: the release's unyanked ones, or all
    of them when the whole release is yanked (pip still installs it for an
    ``==`` pin, PEP 592)."""
    return [f for f in files if not f.yanked] or list(files)


def _newest_builds(wheels: list[IndexFile]) -> list[IndexFile]:
    """Of wheels equal but for their build tag, the highest build: the one
    pip installs (PEP 427: the build tag breaks ties, and no tag sorts lowest)."""
    best: dict[str, IndexFile] = {}
    for wheel in wheels:
        if wheel.tag not in best or wheel.build > best[wheel.tag].build:
            best[wheel.tag] = wheel
    return list(best.values())


def _preferred_wheel(wheels: list[IndexFile]) -> IndexFile:
    """The wheel a Linux x86-64 CPython install would most likely pick.

    Requires-Dist is the same across the wheels of a release for the packages
    tracked here (platform differences are written as markers), so any wheel
    would do; preferring the common one keeps snapshots stable.
    """

    def score(file: IndexFile) -> tuple[int, int, str]:
        name = file.filename
        universal = "-none-any.whl" in name
        linux = "manylinux" in name and "x86_64" in name
        return (universal or linux, "cp312" in name or "abi3" in name or universal, name)

    return max(_newest_builds(wheels), key=score)


def sdist_of(files: list[IndexFile]) -> str | bool:
    """The file name of the sdist an installer builds among `files` (those it
    considers), or False when they hold none."""
    sdists = [f for f in files if not f.is_wheel]
    return _preferred_sdist(sdists).filename if sdists else False


def _preferred_sdist(sdists: list[IndexFile]) -> IndexFile:
    """The sdist to read: the standard .tar.gz (PEP 625) before a legacy .zip."""
    return min(sdists, key=lambda f: (not f.filename.endswith(".tar.gz"), f.filename))


def _static_requirements(raw: dict[str, Any]) -> bool:
    """Whether an sdist's Requires-Dist and Requires-Python are the ones its
    wheels will have: PEP 643 promises so from Metadata-Version 2.2 on, for
    fields not listed in ``Dynamic``; before it, nothing is promised."""
    try:
        version = Version(raw.get("metadata_version", ""))
    except (InvalidVersion, TypeError):
        return False
    dynamic = {field.lower() for field in raw.get("dynamic", [])}
    return version >= Version("2.2") and not dynamic & {"requires-dist", "requires-python"}


def _pkg_info(source: BinaryIO | bytes, filename: str) -> bytes | None:
    """The ``<name>-<version>/PKG-INFO`` member of an sdist, or None.

    The member is read into memory, never extracted, and refused above
    PKG_INFO_LIMIT bytes; a .tar.gz is inflated as a stream, at most
    SDIST_INFLATE_LIMIT bytes of it. A malformed archive gives None: pip
    could not build it either.
    """
    if isinstance(source, (bytes, bytearray)):
        source = io.BytesIO(source)
    stem = filename[: -len(".tar.gz")] if filename.endswith(".tar.gz") else filename[: -len(".zip")]
    try:
        if filename.endswith(".zip"):
            return _zip_pkg_info(source, stem)
        return _tar_pkg_info(source, stem)
    except (_Inflated, PackageIndexError):
        return None
    except _ARCHIVE_ERRORS:
        return None


def _pick_pkg_info(names: list[str], stem: str) -> str | None:
    """``<stem>/PKG-INFO``, else the only top-level ``*/PKG-INFO`` (an older
    sdist whose folder is spelled unlike its file)."""
    if f"{stem}/PKG-INFO" in names:
        return f"{stem}/PKG-INFO"
    top = [n for n in names if n.count("/") == 1 and n.endswith("/PKG-INFO")]
    return top[0] if len(top) == 1 else None


def _zip_pkg_info(source: BinaryIO, stem: str) -> bytes | None:
    with zipfile.ZipFile(source) as archive:
        name = _pick_pkg_info(archive.namelist(), stem)
        if name is None or archive.getinfo(name).file_size > PKG_INFO_LIMIT:
            return None
        return _member_bytes(archive, name, PKG_INFO_LIMIT, stem)


class _Inflated(Exception):
    """An archive inflates past its bound."""


class _Capped(io.RawIOBase):
    """A stream that refuses to give more than `limit` bytes of `inner`."""

    def __init__(self, inner: Any, limit: int) -> None:
        self.inner = inner
        self.left = limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.inner.read(min(len(buffer), 64 * KiB))
        self.left -= len(data)
        if self.left < 0:
            raise _Inflated
        buffer[: len(data)] = data
        return len(data)


def _tar_pkg_info(source: BinaryIO, stem: str) -> bytes | None:
    """Walk the tar as a stream: the stem's PKG-INFO, else the only top-level one."""
    inflated = io.BufferedReader(_Capped(gzip.GzipFile(fileobj=source, mode="rb"), SDIST_INFLATE_LIMIT))
    top: list[tuple[str, bytes | None]] = []
    with tarfile.open(fileobj=inflated, mode="r|") as archive:
        for member in archive:
            name = member.name
            if not (name.count("/") == 1 and name.endswith("/PKG-INFO")):
                continue
            data = None
            if member.isfile() and member.size <= PKG_INFO_LIMIT:
                handle = archive.extractfile(member)
                data = handle.read(PKG_INFO_LIMIT + 1) if handle is not None else None
            if name == f"{stem}/PKG-INFO":
                return data if member.isfile() else None
            if member.isfile() and len(top) < 2:
                top.append((name, data))
    if len(top) != 1:
        return None
    return top[0][1]


# -- how an sdist is built ------------------------------------------------------------


class _Unreadable(Exception):
    """An sdist whose pyproject.toml cannot be told: two of them, or one that is no file or too large."""


def build_system_of(pyproject: bytes | None) -> dict[str, Any] | str:
    """The build system pip uses for an sdist whose pyproject.toml is
    `pyproject` (None: it has none), as a snapshot records it
    (snapshot.build_system_problem): its [build-system] backend and
    requires; without the file, or without the table, setuptools' legacy
    backend and ``setuptools>=40.8.0``, as pip assumes; without a
    build-backend, that backend and the requires given. A wheel_stub
    backend's index (``[tool.wheel_stub] index_url``) is kept. A file that
    is not UTF-8 TOML, or whose table pip would refuse, is "unknown".

    >>> build_system_of(b'[build-system]\\nrequires = ["hatchling"]\\nbuild-backend = "hatchling.build"\\n')
    {'backend': 'hatchling.build', 'requires': ['hatchling']}
    >>> build_system_of(None)["backend"], build_system_of(b"[build-system]\\nbuild-backend = 'x'\\n")
    ('setuptools.build_meta:__legacy__', 'unknown')
    """
    if pyproject is None:
        return {"backend": LEGACY_BUILD_SYSTEM["backend"], "requires": list(LEGACY_BUILD_SYSTEM["requires"])}
    try:
        data = _toml.loads(pyproject.decode("utf-8"), file="pyproject.toml", error=PackageIndexError)
    except (UnicodeDecodeError, CompatError):
        return UNKNOWN
    table = data.get("build-system")
    if table is None:
        return build_system_of(None)
    if not isinstance(table, dict):
        return UNKNOWN
    found: dict[str, Any] = {"backend": table.get("build-backend", LEGACY_BUILD_SYSTEM["backend"]),
                             "requires": table.get("requires")}  # pip refuses a table without requires
    tool = data.get("tool")
    config = tool.get("wheel_stub") if isinstance(tool, dict) else None
    if fetches_wheel(found) and isinstance(config, dict) and isinstance(config.get("index_url"), str):
        found["index_url"] = config["index_url"]
    if isinstance(found["requires"], list):
        found["requires"] = list(found["requires"])
    return UNKNOWN if build_system_problem(found) is not None else found


def unmet_build_requirements(build_system: dict[str, Any], versions: Callable[[str], Any]) -> list[str]:
    """The lines of the build system's ``requires`` that no release meets,
    pre-releases and yanked ones included: `versions(name)` gives the
    versions the index lists of a project (normalized name), or None when
    it has no such project. Markers are not evaluated: some machine may
    meet any of them, and a check evaluates them on the stack's. A
    requirement that names a URL is not the index's to meet."""
    unmet = []
    for text in build_system["requires"]:
        requirement = Requirement(text)
        if requirement.url:
            continue
        listed = versions(str(canonicalize_name(requirement.name)))
        if listed is None or not any(requirement.specifier.contains(v, prereleases=True) for v in listed):
            unmet.append(text)
    return unmet


def _tar_build_system(body: _Body) -> dict[str, Any] | str:
    """The build system of a .tar.gz sdist read from `body` (`build_system_of`)."""
    try:
        pyproject = _tar_pyproject(body)
    except (_Inflated, _Unreadable, PackageIndexError, *_ARCHIVE_ERRORS):
        if body.failed is not None:  # the connection's, not the archive's
            raise body.failed from None
        return UNKNOWN
    return build_system_of(pyproject)


def _tar_pyproject(source: BinaryIO) -> bytes | None:
    """The pyproject.toml of a .tar.gz sdist, walked as a stream that stops
    there: the one in the folder that holds the sdist (the folder of its
    first member: an sdist has one); None when the archive ends without it."""
    inflated = io.BufferedReader(_Capped(gzip.GzipFile(fileobj=source, mode="rb"), SDIST_INFLATE_LIMIT))
    top = None
    with tarfile.open(fileobj=inflated, mode="r|") as archive:
        for member in archive:
            name = member.name.removeprefix("./")
            if top is None:  # the folder of the first member, or none (a file at the top)
                top = name.split("/")[0] + "/" if "/" in name or member.isdir() else ""
            if name != top + "pyproject.toml":
                continue
            if not member.isfile() or member.size > PYPROJECT_LIMIT:
                raise _Unreadable
            handle = archive.extractfile(member)
            return handle.read(PYPROJECT_LIMIT + 1) if handle is not None else None
    return None


def _zip_pyproject(source: BinaryIO) -> bytes | None:
    """The pyproject.toml of a .zip sdist (in its one top folder), or None when it has none."""
    with zipfile.ZipFile(source) as archive:
        names = archive.namelist()
        found = [n for n in names if n.count("/") == 1 and n.endswith("/pyproject.toml")]
        if not found and "pyproject.toml" in names:
            found = ["pyproject.toml"]
        if len(found) > 1:
            raise _Unreadable
        if not found:
            return None
        return _member_bytes(archive, found[0], PYPROJECT_LIMIT, found[0])
