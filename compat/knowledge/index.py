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

Standard library only (urllib, zipfile, tarfile): nothing here runs during a
check. One client may be shared by threads.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from packaging.metadata import parse_email
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from ..errors import PackageIndexError

__all__ = ["IndexClient", "IndexFile", "NotFound", "ReleaseMetadata", "DEFAULT_INDEX"]

DEFAULT_INDEX = "https://pypi.org/simple/"
_JSON = "application/vnd.pypi.simple.v1+json"
_USER_AGENT = "compat-db-sync (+https://github.com/compat-dev/compat)"

SDIST_LIMIT = 200 * 1024 * 1024  # the largest sdist downloaded to read its PKG-INFO
PKG_INFO_LIMIT = 4 * 1024 * 1024  # the largest PKG-INFO accepted (a long description, not more)


class NotFound(PackageIndexError):
    """The index has no such project or file (HTTP 404 or 410)."""


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

    @property
    def is_wheel(self) -> bool:
        return self.filename.endswith(".whl")

    @property
    def tag(self) -> str:
        """A wheel's tag as its filename writes it (``cp312-cp312-manylinux_2_28_x86_64``)."""
        return "-".join(self.filename[: -len(".whl")].split("-")[-3:])

    @property
    def build(self) -> tuple[int, str] | tuple[()]:
        """A wheel's PEP 427 build tag, as packaging compares them (``()`` when it has none)."""
        return parse_wheel_filename(self.filename)[2]


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
    known: bool = True  # False: the requirements could not be read, and are not "none"


class IndexClient:
    """A small, patient client of one index."""

    def __init__(
        self,
        index_url: str = DEFAULT_INDEX,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        opener: Callable[..., Any] | None = None,
    ) -> None:
        self.index_url = index_url if index_url.endswith("/") else index_url + "/"
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._open = opener or urllib.request.urlopen
        self._count = threading.Lock()
        self.requests = 0

    # -- HTTP ---------------------------------------------------------------

    def _request(
        self, url: str, *, headers: dict[str, str] | None = None, method: str = "GET", limit: int | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """One request, retried with backoff; a body over `limit` bytes raises _TooLarge unread."""
        headers = {"User-Agent": _USER_AGENT, **(headers or {})}
        last: Exception | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            with self._count:  # `+=` on an attribute is not atomic across threads
                self.requests += 1
            request = urllib.request.Request(url, headers=headers, method=method)
            try:
                with self._open(request, timeout=self.timeout) as response:
                    answer = {k.lower(): v for k, v in response.headers.items()}
                    if method == "HEAD" or ("Range" in headers and response.status == 200):
                        # A server that ignores Range would send the whole
                        # file: stop before reading it.
                        return response.status, answer, b""
                    return response.status, answer, _body(response, answer, limit)
            except urllib.error.HTTPError as exc:
                if exc.code in (404, 410):
                    raise NotFound(f"{url}: not found on the index (HTTP {exc.code})") from None
                if exc.code == 416:
                    return 416, {k.lower(): v for k, v in exc.headers.items()}, b""
                last = exc
                if exc.code < 500 and exc.code != 429:
                    break
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                last = exc
        reason = getattr(last, "reason", None) or last
        if isinstance(last, urllib.error.HTTPError):
            reason = f"HTTP {last.code}"
        raise PackageIndexError(f"{url}: {reason} (after {self.retries + 1} attempts)")

    # -- the simple API --------------------------------------------------------

    def files(self, name: str) -> list[IndexFile]:
        """Every file of project `name`, from its PEP 691 JSON page."""
        url = urllib.parse.urljoin(self.index_url, f"{canonicalize_name(name)}/")
        status, headers, body = self._request(url, headers={"Accept": f"{_JSON}, application/json;q=0.5"})
        kind = headers.get("content-type", "")
        if "json" not in kind:
            raise PackageIndexError(f"{url}: the index answered {kind or 'no content type'}, not the JSON simple API (PEP 691)")
        try:
            page = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise PackageIndexError(f"{url}: malformed JSON ({exc})") from None
        if not isinstance(page, dict) or not isinstance(page.get("files"), list):
            raise PackageIndexError(f"{url}: malformed project page (no files list)")
        out = []
        for entry in page["files"]:
            try:
                file = _file(entry, url)
            except (KeyError, TypeError, ValueError):
                raise PackageIndexError(f"{url}: malformed file entry {str(entry)[:80]!r}") from None
            if file is not None:
                out.append(file)
        return out

    # -- metadata -------------------------------------------------------------

    def metadata(self, file: IndexFile) -> tuple[str, str]:
        """The METADATA text of a wheel, and how it was obtained."""
        if file.metadata:
            status, _, body = self._request(file.url + ".metadata")
            expected = file.metadata.get("sha256") if isinstance(file.metadata, dict) else None
            if expected and hashlib.sha256(body).hexdigest() != expected:
                raise PackageIndexError(f"{file.url}.metadata: sha256 does not match the index's")
            return _text(body, file.url + ".metadata"), "metadata-file"
        try:
            return self._metadata_by_ranges(file), "range"
        except _NoRanges:
            return self._metadata_by_download(file), "download"

    def _metadata_by_ranges(self, file: IndexFile) -> str:
        status, headers, _ = self._request(file.url, method="HEAD")
        size = headers.get("content-length")
        if status != 200 or size is None or headers.get("accept-ranges", "").lower() == "none":
            raise _NoRanges
        reader = _RangeReader(self, file.url, int(size))
        try:
            with zipfile.ZipFile(reader) as wheel:
                return _read_member(wheel, file)
        except zipfile.BadZipFile as exc:
            raise PackageIndexError(f"{file.url}: not a valid wheel ({exc})") from None

    def _metadata_by_download(self, file: IndexFile) -> str:
        _, _, body = self._request(file.url)
        if file.sha256 and hashlib.sha256(body).hexdigest() != file.sha256:
            raise PackageIndexError(f"{file.url}: sha256 does not match the index's")
        try:
            with zipfile.ZipFile(io.BytesIO(body)) as wheel:
                return _read_member(wheel, file)
        except zipfile.BadZipFile as exc:
            raise PackageIndexError(f"{file.url}: not a valid wheel ({exc})") from None

    def sdist_metadata(self, file: IndexFile) -> tuple[str | None, str]:
        """The PKG-INFO text of an sdist and how it was obtained; None when
        the sdist is too large, or holds no PKG-INFO this reader accepts."""
        if file.metadata:
            return self.metadata(file)
        if file.size is not None and file.size > SDIST_LIMIT:
            return None, "unreadable"
        try:
            _, _, body = self._request(file.url, limit=SDIST_LIMIT)
        except _TooLarge:
            return None, "unreadable"
        if file.sha256 and hashlib.sha256(body).hexdigest() != file.sha256:
            raise PackageIndexError(f"{file.url}: sha256 does not match the index's")
        member = _pkg_info(body, file.filename)
        if member is None:
            return None, "unreadable"
        try:
            return member.decode("utf-8"), "sdist"
        except UnicodeDecodeError:
            return None, "unreadable"

    def release(self, files: list[IndexFile]) -> ReleaseMetadata:
        """Metadata of one release, from the file an installer would most likely use.

        That is a wheel when the release has one. Otherwise it is the sdist,
        whose requirements count only where PEP 643 makes them binding; when
        they are not, the release is recorded with `known` False, never as a
        release without requirements.
        """
        candidates = _installable(files)
        wheels = [f for f in candidates if f.is_wheel]
        raw: dict[str, Any]
        if wheels:
            chosen = _preferred_wheel(wheels)
            text, how = self.metadata(chosen)
            raw, known = parse_email(text)[0], True
        else:
            chosen = _preferred_sdist(candidates)
            pkg_info, how = self.sdist_metadata(chosen)
            raw = parse_email(pkg_info)[0] if pkg_info is not None else {}
            known = pkg_info is not None and _static_requirements(raw)
        return ReleaseMetadata(
            version=str(chosen.version),
            uploaded=min((f.uploaded for f in files if f.uploaded), default=None),
            requires_python=raw.get("requires_python") if known else None,
            requires_dist=list(raw.get("requires_dist", [])) if known else [],
            yanked=all(f.yanked for f in files),
            filename=chosen.filename,
            how=how,
            wheels=tuple(
                {k: v for k, v in (("file", f.filename), ("url", f.url), ("sha256", f.sha256), ("size", f.size)) if v}
                for f in sorted(files, key=lambda f: f.filename)
                if f.is_wheel and not f.yanked
            ),
            tags=tuple(sorted({f.tag for f in wheels})),
            known=known,
        )


class _NoRanges(Exception):
    pass


class _TooLarge(Exception):
    pass


def _body(response: Any, headers: dict[str, str], limit: int | None) -> bytes:
    """The response body, refused unread when it announces more than `limit` bytes."""
    if limit is None:
        return response.read()
    announced = headers.get("content-length", "")
    if announced.isdigit() and int(announced) > limit:
        raise _TooLarge
    body = response.read(limit + 1)
    if len(body) > limit:
        raise _TooLarge
    return body


class _RangeReader(io.RawIOBase):
    """A seekable file over HTTP range requests, reading ahead in blocks."""

    BLOCK = 64 * 1024

    def __init__(self, client: IndexClient, url: str, size: int) -> None:
        self.client = client
        self.url = url
        self.size = size
        self.position = 0
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
            start = index * self.BLOCK
            end = min(self.size, start + self.BLOCK) - 1
            status, _, body = self.client._request(self.url, headers={"Range": f"bytes={start}-{end}"})
            if status != 206:
                raise _NoRanges
            if len(body) != end - start + 1:
                raise PackageIndexError(f"{self.url}: short range response ({len(body)} bytes for {start}-{end})")
            self._blocks[index] = body
        return self._blocks[index]

    def read(self, size: int = -1) -> bytes:
        if self.position >= self.size:
            return b""
        end = self.size if size is None or size < 0 else min(self.size, self.position + size)
        out = bytearray()
        while self.position < end:
            index, offset = divmod(self.position, self.BLOCK)
            chunk = self._block(index)[offset: offset + (end - self.position)]
            out += chunk
            self.position += len(chunk)
        return bytes(out)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _text(body: bytes, where: str) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise PackageIndexError(f"{where}: METADATA is not UTF-8") from None


def _read_member(wheel: zipfile.ZipFile, file: IndexFile) -> str:
    names = [n for n in wheel.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
    if not names:
        raise PackageIndexError(f"{file.url}: the wheel has no .dist-info/METADATA")
    return _text(wheel.read(names[0]), file.url)


def _file(entry: dict[str, Any], page: str) -> IndexFile | None:
    filename = entry["filename"]
    try:
        if filename.endswith(".whl"):
            _, version, _, _ = parse_wheel_filename(filename)
        else:
            _, version = parse_sdist_filename(filename)
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None  # an egg, an installer, a name pip rejects: not something pip installs from here
    metadata = entry.get("core-metadata", entry.get("dist-info-metadata", False))
    yanked = entry.get("yanked", False)
    return IndexFile(
        filename=filename,
        url=urllib.parse.urljoin(page, entry["url"]),
        version=version,
        uploaded=entry.get("upload-time"),
        yanked=bool(yanked),
        metadata=metadata if isinstance(metadata, dict) else bool(metadata),
        sha256=(entry.get("hashes") or {}).get("sha256"),
        size=entry.get("size") if isinstance(entry.get("size"), int) else None,
    )


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


def _preferred_sdist(sdists: list[IndexFile]) -> IndexFile:
    """The sdist to read: the standard .tar.gz (PEP 625) before a legacy .zip."""
    return min(sdists, key=lambda f: (not f.filename.endswith(".tar.gz"), f.filename))


def _static_requirements(raw: dict[str, Any]) -> bool:
    """Whether an sdist's Requires-Dist and Requires-Python are the ones its
    wheels will have: PEP 643 promises so from Metadata-Version 2.2 on, for
    fields not listed in ``Dynamic``; before it, nothing is promised."""
    try:
        version = Version(raw.get("metadata_version", ""))
    except InvalidVersion:
        return False
    dynamic = {field.lower() for field in raw.get("dynamic", [])}
    return version >= Version("2.2") and not dynamic & {"requires-dist", "requires-python"}


def _pkg_info(body: bytes, filename: str) -> bytes | None:
    """The ``<name>-<version>/PKG-INFO`` member of an sdist, or None.

    The member is read into memory, never extracted, and refused above
    PKG_INFO_LIMIT bytes. A malformed archive gives None: pip could not
    build it either.
    """
    stem = filename[: -len(".tar.gz")] if filename.endswith(".tar.gz") else filename[: -len(".zip")]
    try:
        if filename.endswith(".zip"):
            return _zip_pkg_info(body, stem)
        return _tar_pkg_info(body, stem)
    except (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, OSError):
        return None


def _pick_pkg_info(names: list[str], stem: str) -> str | None:
    """``<stem>/PKG-INFO``, else the only top-level ``*/PKG-INFO`` (an older
    sdist whose folder is spelled unlike its file)."""
    if f"{stem}/PKG-INFO" in names:
        return f"{stem}/PKG-INFO"
    top = [n for n in names if n.count("/") == 1 and n.endswith("/PKG-INFO")]
    return top[0] if len(top) == 1 else None


def _zip_pkg_info(body: bytes, stem: str) -> bytes | None:
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        name = _pick_pkg_info(archive.namelist(), stem)
        if name is None or archive.getinfo(name).file_size > PKG_INFO_LIMIT:
            return None
        with archive.open(name) as member:
            data = member.read(PKG_INFO_LIMIT + 1)
    return data if len(data) <= PKG_INFO_LIMIT else None


def _tar_pkg_info(body: bytes, stem: str) -> bytes | None:
    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as archive:
        members = {m.name: m for m in archive.getmembers() if m.isfile()}
        name = _pick_pkg_info(list(members), stem)
        if name is None or members[name].size > PKG_INFO_LIMIT:
            return None
        handle = archive.extractfile(members[name])
        return handle.read() if handle is not None else None
