"""Writing files so that a reader never sees half of one, and so that a
set of files changes all at once or not at all."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

# shutil and tempfile (which imports random, and shutil the compression
# modules) are imported by the writers that use them: a check only reads.
if TYPE_CHECKING:
    from types import TracebackType
    from typing import BinaryIO


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def fsync_dir(folder: str) -> None:
    """Make the names in `folder` durable (where the system allows opening a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_file(path: str, text: str) -> None:
    """Write `text` to a new file `path` and fsync it."""
    with open(path, "x", encoding="utf-8", newline="") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


# What a database file (a snapshot, its wheel records, a curated or catalog
# file of a layer) may weigh. The largest bundled snapshot is under 2 MiB,
# the largest TOML file under 200 KiB; a file past its bound is refused
# before it is read (a symbolic link to /dev/zero would be read until memory
# ran out).
MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024
MAX_TEXT_BYTES = 16 * 1024 * 1024


class NotAFile(OSError):
    """A path that is not a regular file (a device, pipe, socket or folder),
    or one larger than its bound: refused before it is read. Its `strerror`
    says which, for the callers' "cannot be read: ..." messages."""


def _limit_text(max_bytes: int) -> str:
    return f"larger than {max_bytes // (1024 * 1024)} MiB, the limit for this file" if max_bytes >= 1024 * 1024 \
        else f"larger than {max_bytes} bytes, the limit for this file"


def open_regular(path: str, max_bytes: int = MAX_SNAPSHOT_BYTES) -> BinaryIO:
    """`path` opened for reading bytes, once it is known to be a regular file
    (after following symbolic links) of at most `max_bytes`: a device
    (/dev/zero), a pipe (opened without blocking, so that a FIFO with no
    writer cannot hang the caller), a socket or a folder raises `NotAFile`,
    as does a larger file. Other failures raise OSError as open() does.
    The caller still reads no more than `max_bytes` + 1 (a file may grow)."""
    import errno
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a device, pipe or socket"
            raise NotAFile(errno.EINVAL, f"not a regular file ({kind})")
        if info.st_size > max_bytes:
            raise NotAFile(errno.EFBIG, _limit_text(max_bytes))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return handle


def is_regular(path: str) -> bool:
    """Whether `path` is (or links to) a regular file; never opens it."""
    import stat

    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def read_bytes(path: str, max_bytes: int = MAX_SNAPSHOT_BYTES) -> bytes:
    """The bytes of a regular file of at most `max_bytes` (`open_regular`);
    raises OSError (`NotAFile` for a device, pipe, folder or larger file)."""
    import errno

    with open_regular(path, max_bytes) as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise NotAFile(errno.EFBIG, _limit_text(max_bytes))
    return data


def read_text(path: str, max_bytes: int = MAX_SNAPSHOT_BYTES) -> str | None:
    """The text of `path`, or None when it cannot be read as UTF-8 text (or
    is not a regular file, or is larger than `max_bytes`). Universal
    newlines are not applied: the text is as the file holds it."""
    try:
        return read_bytes(path, max_bytes).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def write_output(path: str, text: str) -> None:
    """Write `text` to a file the user names for output (``-o``), as a
    shell redirection would, but atomically where it can: a regular file
    (or one that does not exist yet) is replaced through a temporary file,
    through a symbolic link to its target; a device or a pipe (/dev/null,
    /dev/stdout, a process substitution) is written to as it is, never
    replaced by a file. A folder, or a folder that does not exist, is
    refused (OSError): compat creates no folders the user did not ask for."""
    import stat

    target = os.path.realpath(path) if os.path.islink(path) else path
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        folder = os.path.dirname(os.path.abspath(target))
        if not os.path.isdir(folder):
            raise OSError(f"{folder}: no such folder") from None
        mode = stat.S_IFREG
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
        return
    if not stat.S_ISREG(mode):
        raise OSError(f"{path}: not a file; give the path of a file to write (or - for standard output)")
    write_atomic(target, text)


def write_atomic(path: str, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder, an fsync and a rename."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; the result is not
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(folder)


def link_or_copy(source: str, target: str) -> None:
    """A hard link of `source` at `target`, or a copy where links are not allowed."""
    try:
        os.link(source, target)
    except OSError:
        import shutil

        shutil.copyfile(source, target)


class Staging:
    """Files written into a temporary folder inside `folder`, then renamed
    into `folder` together.

    `write` stages a file (written and fsynced); `commit` fsyncs the staging
    folder, keeps a hard link (or copy) of every file it will replace, renames
    the staged files into place and fsyncs `folder`. A failure before
    `commit` changes nothing; a failure during it puts back every file it
    already replaced (and removes those it added) before raising. The
    staging folder is removed on leaving the `with` block, whatever happened.

    A process killed on the way (SIGKILL, a power cut) removes nothing: the
    next Staging of the same folder removes what it left, once the process
    that wrote its ``pid`` is gone, and first puts back the files a commit
    it was in the middle of had replaced (``commit.json`` says which), so
    that the set of files is the one before that sync, whole.
    """

    PREFIX = ".sync-"
    PID = "pid"
    COMMITTING = "commit.json"

    def __init__(self, folder: str) -> None:
        self.target = folder
        import tempfile

        self.clean_leftovers(folder)
        self.root = tempfile.mkdtemp(prefix=self.PREFIX, dir=folder)
        write_file(os.path.join(self.root, self.PID), str(os.getpid()))
        self.staged: list[str] = []

    @classmethod
    def clean_leftovers(cls, folder: str) -> list[str]:
        """Remove the staging folders that killed processes left in
        `folder`, each after putting back what its commit had replaced;
        returns their names. One whose process still runs is left alone."""
        import json
        import shutil

        removed = []
        try:
            entries = os.listdir(folder)
        except OSError:
            return removed
        for entry in sorted(entries):
            root = os.path.join(folder, entry)
            if not entry.startswith(cls.PREFIX) or os.path.islink(root) or not os.path.isdir(root):
                continue
            pid = _read_pid(os.path.join(root, cls.PID))
            if _alive(pid) or (pid is None and _younger_than(root, 60)):
                continue  # its process runs (or has just made it, and not yet written its pid)
            committing = os.path.join(root, cls.COMMITTING)
            if os.path.exists(committing):
                try:
                    with open(committing, encoding="utf-8") as handle:
                        kept = json.load(handle)
                except (OSError, ValueError):
                    kept = {}
                for name, had in (kept.items() if isinstance(kept, dict) else ()):
                    if not isinstance(name, str) or os.path.basename(name) != name or name in ("", ".", ".."):
                        continue
                    target = os.path.join(folder, name)
                    backup = os.path.join(root, "old", name)
                    try:
                        if had and os.path.exists(backup):
                            os.replace(backup, target)
                        elif not had and os.path.lexists(target):
                            os.unlink(target)
                    except OSError:
                        pass
                fsync_dir(folder)
            shutil.rmtree(root, ignore_errors=True)
            removed.append(entry)
        return removed

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        import shutil

        shutil.rmtree(self.root, ignore_errors=True)

    def path(self, name: str) -> str:
        return os.path.join(self.root, "new", name)

    def folder(self, name: str) -> str:
        """A scratch folder inside the staging folder (never renamed into place)."""
        path = os.path.join(self.root, name)
        os.makedirs(path, exist_ok=True)
        return path

    def write(self, name: str, text: str) -> None:
        if os.path.basename(name) != name or name in ("", ".", ".."):
            raise ValueError(f"not a file name: {name!r}")
        os.makedirs(os.path.join(self.root, "new"), exist_ok=True)
        write_file(self.path(name), text)
        os.chmod(self.path(name), 0o666 & ~_umask())
        self.staged.append(name)

    def commit(self) -> None:
        if not self.staged:
            return
        fsync_dir(os.path.join(self.root, "new"))
        backups = self.folder("old")
        kept: dict[str, str | None] = {}  # name -> its backup, or None when the file is new
        for name in self.staged:
            current = os.path.join(self.target, name)
            if os.path.lexists(current):
                link_or_copy(current, os.path.join(backups, name))
                kept[name] = os.path.join(backups, name)
            else:
                kept[name] = None
        fsync_dir(backups)
        import json

        # what a process killed from here on leaves for the next Staging to put back (clean_leftovers)
        write_file(os.path.join(self.root, self.COMMITTING), json.dumps({n: b is not None for n, b in kept.items()}))
        done: list[str] = []
        try:
            for name in self.staged:
                os.replace(self.path(name), os.path.join(self.target, name))
                done.append(name)
        except BaseException:
            for name in reversed(done):
                backup = kept[name]
                try:
                    if backup is None:
                        os.unlink(os.path.join(self.target, name))
                    else:
                        os.replace(backup, os.path.join(self.target, name))
                except OSError:
                    pass
            fsync_dir(self.target)
            raise
        fsync_dir(self.target)
        os.unlink(os.path.join(self.root, self.COMMITTING))  # done: nothing to put back


def _read_pid(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as handle:
            text = handle.read(32).strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() and len(text) < 12 else None


def _alive(pid: int | None) -> bool:
    """Whether process `pid` runs (this one counts: its own staging is its own)."""
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by someone else
        return True
    return True


def _younger_than(path: str, seconds: float) -> bool:
    import time

    try:
        return time.time() - os.stat(path).st_mtime < seconds
    except OSError:
        return False
