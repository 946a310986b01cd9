"""An installed Python environment, read inside its own interpreter.

``compat check --env [--python PATH]`` runs the interpreter (by default the
one running compat) on a short script that lists, with
``importlib.metadata``, every distribution on its ``sys.path`` (less the
current folder), in path order, as pip does: the first of a name is the one
that imports, and a later one is a duplicate. For each it reports the name,
version, ``Requires-Dist``, ``Requires-Python``, the wheel tags it was built
for and where its metadata lives; and for the interpreter its PEP 508 marker
environment and its glibc. Only the header of each metadata file is read
(never the long description below it), which keeps a large environment
quick.

The script runs on any CPython 3.8 or newer and needs nothing installed;
compat does the judging on this side (engine/installed.py). The
interpreter is not trusted: it runs for a bounded time, its output is read
up to a bound (one that hangs or prints without end is stopped, with the
processes it started), and what it says on standard error is shown as one
escaped line. A distribution whose metadata cannot be judged here (a
marker that cannot be evaluated, a number too long to compare) is reported
as such, and its requirements are not judged.
"""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from .._record import Record
from .._names import normalize
from ..errors import StackError, one_line
from .._strict import MAX_DIGITS, has_long_number, is_string_list
from .stack import MAX_VERSION

__all__ = ["Distribution", "Installed", "Environment", "PendingEnvironment", "read_environment",
           "current_interpreter", "extras_named", "wheel_tags_bounded", "start", "collect",
           "TooMuchOutput"]

TIMEOUT = 120  # seconds the interpreter may take to list its distributions
# Bytes of standard output read from the interpreter (the listing of a few
# thousand distributions is a few megabytes) and of standard error (only its
# last line is shown): a program that prints without end is stopped.
MAX_LISTING = 64 * 1024 * 1024
MAX_STDERR = 64 * 1024
# A metadata file the script reads (METADATA, PKG-INFO, WHEEL, requires.txt):
# larger, or not a regular file (a FIFO would block the interpreter until its
# timeout, /dev/zero fill its memory), is refused, naming it (exit 2).
MAX_METADATA = 16 * 1024 * 1024
# The (interpreter, abi, platform) tags a distribution's WHEEL file may
# expand to, its compressed tag sets multiplied out: "a.b-c.d-e.f" is 8. A
# real wheel has a few dozen; 500 x 500 x 500 would take gigabytes.
MAX_WHEEL_TAGS = 10_000
# pip's test for a distribution name (a leftover such as "~orch" fails it)
_NAME = re.compile(r"[A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9]", re.IGNORECASE)
# the extras a marker names (``extra == "gpu"``, as metadata writes them)
_EXTRA = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]|['"]([^'"]+)['"]\s*==\s*extra""")

# The glibc an interpreter runs on ("2.35"), or None: run by the script in the
# interpreter it reads, and by current_interpreter in this one.
_GLIBC = r'''
def glibc_version():
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        return None
    words = libc.split() if libc else []
    return words[1] if len(words) > 1 and words[0] == "glibc" else None
'''

# Run as `python -c SCRIPT`: prints one JSON object. Kept to what CPython 3.8 has.
_SCRIPT = r'''
import json, os, platform, sys
MAX_METADATA = %d
''' % MAX_METADATA + _GLIBC + r'''
from importlib import metadata

if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]  # the current folder: not part of the environment

def full_version(info):
    text = "%d.%d.%d" % (info.major, info.minor, info.micro)
    if info.releaselevel != "final":
        text += info.releaselevel[0] + str(info.serial)
    return text

def headers(text):
    """The header fields of a core metadata file; the body is never parsed."""
    fields = {}
    last = None
    for line in text.replace("\r\n", "\n").split("\n\n", 1)[0].split("\n"):
        if not line:
            continue
        if line[0] in " \t" and last is not None:
            fields[last][-1] += " " + line.strip()
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue
        last = key.strip().lower()
        fields.setdefault(last, []).append(value.strip())
    return fields

class Refused(Exception):
    """A metadata file that is not read: not a regular file, or too large."""

def read_file(dist, name):
    """A metadata file's text, or None; only a regular file of at most
    MAX_METADATA bytes is read (a FIFO is opened without blocking)."""
    folder = getattr(dist, "_path", None)
    if folder is None:
        return dist.read_text(name)
    import stat
    path = os.path.join(str(folder), name)
    if not os.path.isdir(str(folder)):  # an .egg-info file: it is the PKG-INFO (importlib reads it so)
        if name != "PKG-INFO":
            return None
        path = str(folder)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except IsADirectoryError:
        raise Refused(path, "not a regular file (a folder)")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(path, "not a regular file (a device, pipe or socket)")
        if info.st_size > MAX_METADATA:
            raise Refused(path, "larger than %d MiB, the limit for a metadata file" % (MAX_METADATA // 1048576))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            data = handle.read(MAX_METADATA + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > MAX_METADATA:
        raise Refused(path, "larger than %d MiB, the limit for a metadata file" % (MAX_METADATA // 1048576))
    return data.decode("utf-8")

def read(dist, location):
    text = read_file(dist, "METADATA") or read_file(dist, "PKG-INFO")
    if text is None:  # not dropped: pip skips it, saying so
        return {"error": "it has no METADATA (or PKG-INFO) file", "invalid": True,
                "metadata": str(getattr(dist, "_path", location))}
    fields = headers(text)
    missing = [f for f in ("Name", "Version") if f.lower() not in fields]
    if missing:
        return {"error": "its metadata has no %s" % " and no ".join(missing), "invalid": True,
                "metadata": str(getattr(dist, "_path", location))}
    requires = fields.get("requires-dist")
    if requires is None and read_file(dist, "requires.txt") is not None:
        requires = dist.requires or []  # an .egg-info: importlib turns requires.txt into Requires-Dist
    wheel = read_file(dist, "WHEEL")
    tags = [h for h in headers(wheel).get("tag", [])] if wheel else []
    path = getattr(dist, "_path", None)
    return {
        "name": fields["name"][0], "version": fields["version"][0], "requires": requires or [],
        "requires_python": (fields.get("requires-python") or [None])[0], "tags": tags,
        "extras": fields.get("provides-extra", []),
        "metadata": str(path) if path is not None else location,
    }

found = []
for location in sys.path:
    if location.endswith(".whl") and os.path.isfile(location):
        continue  # a wheel on sys.path is not an installed distribution (as pip)
    try:
        dists = list(metadata.distributions(path=[location]))
    except Exception:
        continue
    for dist in dists:
        try:
            entry = read(dist, location)
        except Refused as exc:
            entry = {"refused": exc.args[1], "file": exc.args[0]}
        except Exception as exc:
            entry = {"error": "%s: %s" % (type(exc).__name__, exc), "metadata": str(getattr(dist, "_path", location))}
        if entry is not None:
            found.append(entry)

glibc = glibc_version()
markers = {
    "implementation_name": sys.implementation.name,
    "implementation_version": full_version(sys.implementation.version),
    "os_name": os.name,
    "platform_machine": platform.machine(),
    "platform_release": platform.release(),
    "platform_system": platform.system(),
    "platform_version": platform.version(),
    "python_full_version": platform.python_version(),
    "platform_python_implementation": platform.python_implementation(),
    "python_version": ".".join(platform.python_version_tuple()[:2]),
    "sys_platform": sys.platform,
}
json.dump({"executable": sys.executable, "markers": markers, "glibc": glibc, "distributions": found}, sys.stdout)
'''


class Distribution(Record):
    """One installed distribution, as its metadata says."""

    name: str  # as the metadata writes it
    version: str
    requires: tuple[str, ...]  # Requires-Dist, as written
    requires_python: str | None
    extras: tuple[str, ...]  # Provides-Extra
    tags: tuple[str, ...]  # the WHEEL file's tags (none for an egg or a source install)
    metadata: str  # its .dist-info (or .egg-info) folder
    error: str | None = None  # metadata that could not be read
    # one pip ignores as invalid ("Ignoring invalid distribution": no METADATA, no Name or Version), and pip check
    # passes on: the environment check warns of it, where metadata pip reads but cannot judge is an error
    invalid: bool = False


class Installed(Record):
    """The distribution of a name that imports (the first on sys.path), parsed."""

    name: str  # normalized
    distribution: Distribution
    version: Version | None  # None: not a PEP 440 version
    requirements: tuple[Requirement, ...]
    problem: str | None = None  # why its metadata cannot be judged


@dataclass(frozen=True)
class Environment:
    """An interpreter and what is installed for it."""

    interpreter: str  # as the command line named it
    executable: str  # sys.executable, as the interpreter says
    markers: dict[str, str]  # its PEP 508 marker environment
    glibc: str | None
    distributions: tuple[Distribution, ...]  # in sys.path order, duplicates included
    # what the judging reads again and again, computed once
    _applies: dict[tuple[str, str], bool] = field(default_factory=dict, init=False, repr=False, compare=False)
    _extras: dict[str, dict[str, list[Requirement]]] = field(default_factory=dict, init=False, repr=False,
                                                             compare=False)
    _extras_met: dict[tuple[str, str], bool] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def python(self) -> str:
        """The interpreter's version as it says it (``3.12.7``, ``3.14.0rc1``, ``3.15.0a1+``)."""
        return self.markers["python_full_version"]

    @property
    def python_release(self) -> Version:
        """The interpreter's version as installers judge Requires-Python
        (pip compares major, minor and micro only) and a stack writes it:
        ``3.14.0rc1`` is 3.14.0.

        >>> Environment("python", "python", {"python_full_version": "3.15.0a1+"}, None, ()).python_release
        <Version('3.15.0')>
        """
        match = re.match(r"([0-9]+)\.([0-9]+)(?:\.([0-9]+))?", self.python)
        if match is None:
            raise StackError(f"says its Python is {self.python[:40]!r}, which is no version", file=self.interpreter,
                             key="--python")
        return Version(".".join(p or "0" for p in match.groups()))

    @property
    def host(self) -> tuple[str, str]:
        """(sys.platform, platform.machine()) as the interpreter says them; the platform table
        (knowledge/platforms.py, ``for_host``) says which platform of a stack that is."""
        return self.markers["sys_platform"], self.markers["platform_machine"]

    @functools.cached_property
    def installed(self) -> dict[str, Installed]:
        """Normalized name -> the distribution that imports, in sys.path order."""
        found: dict[str, Installed] = {}
        for dist in self.distributions:
            name = normalize(dist.name) if _NAME.fullmatch(dist.name) else None
            if name is None or name in found:
                continue  # a name that is no project name is `unnamed`; a later one of a name is a duplicate
            found[name] = _parse(name, dist, self.markers)
        return found

    @functools.cached_property
    def unnamed(self) -> list[Installed]:
        """The distributions whose name (their metadata's, or when it has
        none their folder's) is no project name, such as the ``~orch``
        folder an interrupted pip leaves: nothing can require them, and pip
        ignores them, saying so. Each is named by its folder, and has a
        problem: the environment check reports it (never dropped silently)."""
        from .requirements import quote

        found = []
        for dist in self.distributions:
            if _NAME.fullmatch(dist.name):
                continue
            folder = one_line(os.path.basename(dist.metadata.rstrip("/\\")) or dist.metadata, 200)
            problem = f"its metadata cannot be read ({dist.error})" if dist.error is not None else \
                f"its name {quote(dist.name)} is not a project name (pip ignores it)"
            found.append(Installed(folder, dist._replace(invalid=True), None, (), problem))
        return found

    @functools.cached_property
    def duplicates(self) -> list[tuple[Installed, Distribution]]:
        """Each distribution that a first one of its name hides."""
        seen: set[str] = set()
        hidden = []
        for dist in self.distributions:
            if not _NAME.fullmatch(dist.name):
                continue
            name = normalize(dist.name)
            if name in seen:
                hidden.append((self.installed[name], dist))
            seen.add(name)
        return hidden

    def applies(self, requirement: Requirement, extra: str = "") -> bool:
        """Whether a requirement of an installed distribution applies on this
        interpreter, for `extra` ("" for none: what pip check judges)."""
        if requirement.marker is None:
            return True
        # the same few markers recur across an environment: each is evaluated once per extra
        cache = self._applies
        key = (str(requirement.marker), extra)
        if key not in cache:
            cache[key] = bool(requirement.marker.evaluate({**self.markers, "extra": extra}))
        return cache[key]

    def meets(self, requirement: Requirement) -> bool:
        """Whether what is installed satisfies `requirement`: its
        distribution at a version the specifier admits (pre-releases
        included), and the requirements of the extras it names."""
        there = self.installed.get(normalize(requirement.name))
        if there is None or there.version is None or \
                not requirement.specifier.contains(there.version, prereleases=True):
            return False
        return all(self.extra_met(there, extra) for extra in requirement.extras)

    def extra_requirements(self, installed: Installed, extra: str) -> list[Requirement]:
        """What `extra` of a distribution adds to its requirements here."""
        extras = self._extras
        if installed.name not in extras:
            added: dict[str, list[Requirement]] = {}
            for requirement in installed.requirements:
                marker = str(requirement.marker) if requirement.marker is not None else ""
                for name in extras_named(marker):
                    if self.applies(requirement, name) and not self.applies(requirement):
                        added.setdefault(name, []).append(requirement)
            extras[installed.name] = added
        return extras[installed.name].get(normalize(extra), [])

    def extra_met(self, installed: Installed, extra: str) -> bool:
        """Whether every requirement that `extra` of a distribution adds is
        met, through the extras those name in turn (``vllm[all]`` naming
        ``vllm[audio]``). An extra the distribution does not declare adds
        nothing (pip and uv warn, and go on)."""
        key = (installed.name, normalize(extra))
        cache = self._extras_met
        if key not in cache:
            if key[1] not in {normalize(e) for e in installed.distribution.extras}:
                cache[key] = True
            else:
                cache[key] = True  # while it is judged: an extra that names itself again adds nothing new
                cache[key] = all(self.meets(r) for r in self.extra_requirements(installed, extra))
        return cache[key]


def extras_named(text: str) -> set[str]:
    """The extras a requirement line or marker names, normalized.

    >>> sorted(extras_named('pyyaml>=5.1; extra == "standard" or "All" == extra'))
    ['all', 'standard']
    """
    return {normalize(a or b) for a, b in _EXTRA.findall(text)} if "extra" in text else set()


def _parse(name: str, dist: Distribution, markers: dict[str, str]) -> Installed:
    """A distribution's metadata, parsed; what cannot be judged (on this
    interpreter) is its `problem`, and then none of its requirements is."""
    from .requirements import long_version, marker_problem, quote

    if dist.error is not None:
        return Installed(name, dist, None, (), f"its metadata cannot be read ({dist.error})")
    version: Version | None = None
    if not has_long_number(dist.version):
        try:
            version = Version(dist.version)
        except InvalidVersion:
            pass
    requirements = []
    for text in dist.requires:
        try:
            requirement = Requirement(text)
        except InvalidRequirement as exc:
            return Installed(name, dist, version, (), f"its Requires-Dist {quote(text)} is not PEP 508 "
                             f"({str(exc).splitlines()[0]})")
        problem = long_version(requirement) or marker_problem(requirement.marker, {**markers, "extra": ""})
        if problem:
            return Installed(name, dist, version, (), f"its Requires-Dist {quote(text)} cannot be judged ({problem})")
        requirements.append(requirement)
    if dist.requires_python and has_long_number(dist.requires_python):
        return Installed(name, dist, version, (), f"its Requires-Python names a number of more than {MAX_DIGITS} "
                         "digits")
    if version is None:
        why = f"has a number of more than {MAX_DIGITS} digits" if has_long_number(dist.version) else \
            "is not PEP 440"
        return Installed(name, dist, None, tuple(requirements), f"its version {quote(dist.version)} {why}")
    return Installed(name, dist, version, tuple(requirements))


class PendingEnvironment:
    """An interpreter listing its distributions: started at once, so that
    compat loads its database meanwhile; `result` waits for the answer."""

    def __init__(self, python: str | None = None, timeout: float | None = None) -> None:
        self.interpreter = python or sys.executable
        self.timeout = TIMEOUT if timeout is None else timeout
        self.error: StackError | None = None
        self.process: subprocess.Popen[bytes] | None = None
        try:
            self.process = start([self.interpreter, "-c", _SCRIPT])
        except FileNotFoundError:
            self.error = self._error("no such interpreter")
        except PermissionError:
            self.error = self._error("cannot be run (not executable)")
        except OSError as exc:
            self.error = self._error(f"cannot be run: {exc.strerror or exc}")

    def _error(self, message: str) -> StackError:
        return StackError(message, file=self.interpreter, key="--python")

    def result(self) -> Environment:
        if self.error is not None or self.process is None:
            raise self.error or self._error("cannot be run")
        try:
            out, err = collect(self.process, self.timeout, MAX_LISTING)
        except subprocess.TimeoutExpired:
            raise self._error(f"did not list its distributions within {self.timeout:g} s (stopped)") from None
        except TooMuchOutput:
            raise self._error(f"printed more than {MAX_LISTING // 2**20} MiB while listing its distributions "
                              "(stopped)") from None
        if self.process.returncode != 0:
            raise self._error(f"could not list its distributions (exit {self.process.returncode}: "
                              f"{last_line(err)}); compat reads CPython 3.8 or newer")
        try:
            return _environment(self.interpreter, json.loads(out))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise self._error(f"answered something compat cannot read ({type(exc).__name__}: {exc})") from None

    def cancel(self) -> None:
        """Stop the interpreter (the inputs had another problem)."""
        if self.process is not None and self.process.poll() is None:
            stop(self.process)


def read_environment(python: str | None = None, timeout: float | None = None) -> Environment:
    """List what is installed for the interpreter `python` (a path or a
    command on PATH; by default the one running compat), by running it for
    at most `timeout` seconds (by default `TIMEOUT`)."""
    return PendingEnvironment(python, timeout).result()


# -- running a program that is not trusted ----------------------------------------


class TooMuchOutput(Exception):
    """A program printed more than it was allowed to (it was stopped)."""


def start(argv: list[str]) -> subprocess.Popen[bytes]:
    """Start `argv` with its output piped, in a session of its own, so that
    `stop` ends it with every process it started (a wrapper script's
    children would otherwise hold the pipes open). Raises OSError."""
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=os.name == "posix")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Kill a process `start` started, and its children, and reap it."""
    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            process.kill()
    except OSError:
        pass
    process.wait()


def collect(process: subprocess.Popen[bytes], timeout: float, limit: int) -> tuple[bytes, bytes]:
    """The standard output and error of a process `start` started, once it
    ends. Neither is held whole: output beyond `limit` bytes stops the
    process (TooMuchOutput); of the error output, the last `MAX_STDERR`
    bytes are kept (the end says what went wrong); past `timeout` seconds
    the process is stopped (TimeoutExpired)."""
    assert process.stdout is not None and process.stderr is not None
    done = threading.Event()
    out, err = bytearray(), bytearray()
    overflow: list[bool] = []
    remaining = [2]
    lock = threading.Lock()

    def drain(pipe: Any, kept: bytearray, cap: int, strict: bool) -> None:
        try:
            while chunk := pipe.read1(65536):
                kept += chunk
                if len(kept) > cap:
                    if strict:
                        overflow.append(True)
                        break
                    del kept[: len(kept) - cap]
        except (OSError, ValueError):
            pass  # the pipe was closed under it: the process was stopped
        with lock:
            remaining[0] -= 1
            if remaining[0] == 0 or overflow:
                done.set()

    readers = [threading.Thread(target=drain, args=(process.stdout, out, limit, True), daemon=True),
               threading.Thread(target=drain, args=(process.stderr, err, MAX_STDERR, False), daemon=True)]
    deadline = time.monotonic() + timeout
    for reader in readers:
        reader.start()
    finished = done.wait(timeout)
    if not finished or overflow:
        stop(process)
        for reader in readers:
            reader.join(1)
        raise TooMuchOutput() if overflow else subprocess.TimeoutExpired(process.args, timeout)
    try:
        process.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        stop(process)  # it closed its output and went on running
        raise
    return bytes(out), bytes(err)


def last_line(err: bytes) -> str:
    """The last line a program wrote to standard error, as one printable
    line of bounded length (its control characters escaped)."""
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return one_line(lines[-1].strip(), 300) if lines else "no message"


def _environment(interpreter: str, data: dict[str, Any]) -> Environment:
    distributions = []
    for entry in data["distributions"]:
        if "refused" in entry:
            raise StackError(one_line(str(entry["refused"]), 200), file=one_line(str(entry["file"]), 300))
        if "error" in entry:  # named by its folder (foo-1.0.dist-info: foo)
            name = re.sub(r"\.(dist|egg)-info\Z", "", os.path.basename(str(entry["metadata"]))).split("-", 1)[0]
            distributions.append(Distribution(name, "", (), None, (), (), entry["metadata"], entry["error"],
                                              invalid=entry.get("invalid") is True))
            continue
        if not _text_or_none(entry["requires_python"]) or not is_string_list(entry["tags"]):
            raise TypeError(f"{entry['name']!r}: requires_python must be text or null, tags a list of text")
        wheel_tags_bounded(entry["tags"], str(entry["metadata"]))
        version = str(entry["version"])
        too_long = f"its Version has {len(version):,} characters" if len(version) > MAX_VERSION else None
        distributions.append(Distribution(
            name=str(entry["name"]),
            version=version if too_long is None else one_line(version, 40),  # as every message shows it
            requires=tuple(str(r).strip() for r in entry["requires"]),
            requires_python=entry["requires_python"],
            extras=tuple(str(e) for e in entry["extras"]),
            tags=tuple(entry["tags"]),
            metadata=str(entry["metadata"]),
            error=too_long,
        ))
    markers = {str(k): str(v) for k, v in data["markers"].items()}
    if not _text_or_none(data["glibc"]):
        raise TypeError("glibc must be text or null")
    return Environment(interpreter, str(data["executable"]), markers, data["glibc"], tuple(distributions))


def wheel_tag_count(tags: Sequence[str]) -> int:
    """How many (interpreter, abi, platform) tags a WHEEL file's Tag lines
    expand to, counted without expanding them.

    >>> wheel_tag_count(["py2.py3-none-any", "cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64"])
    4
    """
    total = 0
    for tag in tags:
        parts = tag.strip().split("-")
        if len(parts) == 3:
            total += (parts[0].count(".") + 1) * (parts[1].count(".") + 1) * (parts[2].count(".") + 1)
    return total


def wheel_tags_bounded(tags: Sequence[str], metadata: str) -> None:
    """Raise StackError, naming the WHEEL file in the folder `metadata`, when
    its Tag lines expand to more than `MAX_WHEEL_TAGS` tags."""
    if wheel_tag_count(tags) > MAX_WHEEL_TAGS:
        raise StackError(f"its tags expand to more than {MAX_WHEEL_TAGS:,} (interpreter, abi, platform) tags, "
                         "the limit for a WHEEL file", file=one_line(os.path.join(metadata, "WHEEL"), 300))


def _text_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


def current_interpreter() -> Environment:
    """The interpreter running compat, without its distributions: the
    machine a check of files alone (no stack file, no --env) is for."""
    from packaging.markers import default_environment

    namespace: dict[str, Any] = {"os": os}
    exec(_GLIBC, namespace)  # the script's own code, so that both read glibc alike
    return Environment(sys.executable, sys.executable, dict(default_environment()), namespace["glibc_version"](), ())
