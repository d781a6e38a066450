"""Files that are complete or absent, and read within bounds: atomic writes, bounded reads.

A foundation module: it imports nothing from gpal, and every stage may use it.

Everything gpal writes is either complete or absent: files go to a temporary
name beside the target and are moved into place only when fully written, so an
interrupted run never leaves a half-written table, figure or model (and
`remove_leftovers` deletes what a killed process left under a temporary name; saved
models are `gpal.saved_models`). Every file gpal reads goes through a bound (`read_bytes`,
`read_json`, the npz member check of `gpal.saved_models`): a FIFO, a device, a symlink loop, a gzip or zip bomb or JSON nested
past `MAX_DEPTH` is a ValueError naming the file, never a hang, a MemoryError or a
RecursionError.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import zlib
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

__all__ = [
    "MANIFEST",
    "REPORT_FILE",
    "atomic_output",
    "file_sha256",
    "memory_bytes",
    "nesting_depth",
    "read_bytes",
    "read_json",
    "regular_file",
    "remove",
    "remove_leftovers",
    "remove_written",
    "temporary_dir",
    "usable_cores",
    "json_text",
    "write_bytes_atomic",
    "write_files",
    "write_json_atomic",
    "write_text_atomic",
]


#: A run folder's list of what gpal wrote in it, one relative path a line: all that ``--force`` may remove.
MANIFEST = ".gpal-written"
#: The page a run folder's report is written to (`gpal.evaluation.reports.write_report`).
REPORT_FILE = "report.md"


def note_written(path: str | os.PathLike) -> None:
    """List ``path`` in the manifest of the run folder that holds it (if any), before it is written.

    Listed first, written second: a process killed in between leaves a listed name with no
    file, never a gpal file that ``--force`` would not know to remove.
    """
    path = Path(os.path.abspath(path))
    for folder in path.parents:
        manifest = folder / MANIFEST
        if manifest.is_file():
            with open(manifest, "a", encoding="utf-8") as fh:
                fh.write(path.relative_to(folder).as_posix() + "\n")
            return


def remove_written(folder: Path) -> list[Path]:
    """Delete what gpal listed in ``folder``'s manifest, then the manifest; nothing else is touched.

    Folders are removed only when they held gpal's files and are left empty. A listed name
    that leads outside ``folder`` (an edited manifest, a link) is skipped. Returns what
    remains in ``folder``: the files gpal did not write.
    """
    folder = Path(folder)
    manifest = folder / MANIFEST
    root = folder.resolve()
    listed = dict.fromkeys(line for line in manifest.read_text(encoding="utf-8").splitlines() if line.strip())
    parents: set[Path] = set()
    for name in listed:
        entry = folder / name
        if Path(name).is_absolute() or ".." in Path(name).parts or not _inside(entry, root):
            continue
        if entry.exists() or entry.is_symlink():
            remove(entry)
        parents.update(p for p in entry.parents if p != folder and folder in p.parents)
    for parent in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        if parent.is_dir() and not parent.is_symlink() and not any(parent.iterdir()):
            parent.rmdir()
    remove_leftovers(folder)
    manifest.unlink()
    return sorted(folder.iterdir())


def _inside(entry: Path, root: Path) -> bool:
    """Whether ``entry``'s folder, links resolved, lies in ``root`` (the entry itself may be a link: it is unlinked, not followed)."""
    parent = entry.parent.resolve()
    return parent == root or root in parent.parents


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; it replaces ``path`` only if the block succeeds."""
    path = Path(path)
    tmp = _temporary_beside(path)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _temporary_beside(path: Path) -> Path:
    """A new empty file beside ``path`` (listed in the run's manifest first), to be renamed to it once written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    note_written(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    # Created as an ordinary file would be (mode 0o666 minus the umask), unlike mkstemp's 0o600.
    try:
        os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    except OSError as exc:  # named by the file the user asked for, not by the temporary one
        raise type(exc)(exc.errno, f"cannot write {path} ({exc.strerror}): check the folder {path.parent} is writable") from None
    return tmp


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` so that ``path`` holds either its old content or all of ``data``.

    The data reach the disk (fsync) before the rename, so a checkpoint survives a crash.
    """
    with atomic_output(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(path)


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """`write_bytes_atomic` of UTF-8 text."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def json_text(obj: Any, allow_nan: bool = False) -> str:
    """The JSON text gpal writes (indented by one): NaN and infinities are refused unless ``allow_nan``, as they are
    not valid JSON."""
    return json.dumps(obj, indent=1, allow_nan=allow_nan)


def write_json_atomic(path: str | os.PathLike, obj: Any, allow_nan: bool = False) -> Path:
    """JSON-encode first (`json_text`: an unserialisable object writes nothing), then write atomically."""
    return write_text_atomic(path, json_text(obj, allow_nan))


def write_files(folder: str | os.PathLike, files: Mapping[str, bytes | str]) -> None:
    """Write each of ``files`` (a path relative to ``folder`` -> its bytes, or text as UTF-8) atomically, in order.

    What a job made in memory reaches its folder here, each file complete or absent."""
    folder = Path(folder)
    for name, content in files.items():
        write_bytes_atomic(folder / name, content.encode("utf-8") if isinstance(content, str) else content)


def replace_files(folder: str | os.PathLike, files: Mapping[str, bytes | str], remove: Sequence[str] = ()) -> None:
    """`write_files`, all or nothing as far as an interruption goes: every file is written under a temporary name
    first, then they are renamed in turn and the files ``remove`` names deleted; Ctrl-C or a failure while writing
    leaves every earlier file as it was."""
    folder = Path(folder)
    written: list[tuple[Path, Path]] = []
    try:
        for name, content in files.items():
            path = folder / name
            written.append((_temporary_beside(path), path))
            written[-1][0].write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    except BaseException:
        for tmp, _ in written:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, path in written:
        os.replace(tmp, path)
    for name in remove:
        (folder / name).unlink(missing_ok=True)


def temporary_dir(beside: Path) -> Path:
    """A new hidden folder next to ``beside``, with the permissions of any other folder (not mkdtemp's 0700)."""
    tmp = beside.with_name(f".{beside.name}.{secrets.token_hex(6)}.tmp")
    try:
        tmp.mkdir()
    except OSError as exc:
        raise type(exc)(exc.errno, f"cannot write {beside} ({exc.strerror}): check the folder {beside.parent} is "
                        "writable") from None
    return tmp


#: Temporary names this module writes (``atomic_output``, ``save_model_dir``), and mkdtemp's of gpal <= 0.2.
_TEMPORARY = re.compile(r"^\..+\.[0-9a-f]{12}\.tmp$|^\.model\.(old\.)?[A-Za-z0-9_]{8}$")


def remove_leftovers(folder: Path) -> None:
    """Delete what a killed process left half-written below ``folder`` (this module's temporary names)."""
    for entry in sorted(folder.rglob(".*"), key=lambda e: len(e.parts), reverse=True):
        if _TEMPORARY.match(entry.name) and entry.exists():
            remove(entry)


def remove(entry: Path) -> None:
    """Delete a file, a link or a folder with everything in it."""
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry)
    else:
        entry.unlink()


# ------------------------------------------------------------------ bounded reads
#: A record gpal writes (config.json, training.json, run.json) is a few kB; nothing it reads nests deeper than this.
MAX_DEPTH = 64
MAX_JSON_BYTES = 64 * 2**20


def memory_bytes() -> int:
    """The machine's physical memory: the bound of any one read or allocation gpal makes."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # not POSIX: assume a small machine
        return 8 * 2**30


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system keeps one): the bound of any pool of
    workers or threads gpal starts."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def regular_file(path: str | os.PathLike, what: str = "file") -> Path:
    """``path`` if it is a regular file (after links); a FIFO, a device, a folder or a link loop is a clear error.

    A missing file is a FileNotFoundError; anything else that is not a file a ValueError
    naming it, so that nothing blocks on a FIFO or reads /dev/zero forever.
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{what} {path} is a symbolic link loop; expected a regular file") from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR) and not path.is_symlink():
            raise FileNotFoundError(f"{what} not found: {path}") from None
        if exc.errno == errno.ENOENT:
            raise FileNotFoundError(f"{what} {path} is a symbolic link to a missing file") from None
        raise
    if not stat.S_ISREG(mode):
        kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "not a regular file")
        raise ValueError(f"{what} {path} is {kind}; expected a regular file")
    return path


def read_bytes(path: str | os.PathLike, what: str = "file", limit: int | None = None) -> bytes:
    """A regular file's bytes, decompressed when it is gzip, refused when it (or its content) passes ``limit``.

    ``limit`` defaults to a quarter of `memory_bytes`: a gzip bomb stops at the bound, not at a MemoryError.
    """
    path = regular_file(path, what)
    limit = memory_bytes() // 4 if limit is None else limit
    bound = f"the {limit / 2**20:.0f} MiB gpal reads as a {what}"
    size = path.stat().st_size
    if size > limit:
        raise ValueError(f"{what} {path} holds {size / 2**20:.0f} MiB, more than {bound}")
    data = path.read_bytes()
    if data[:2] != _GZIP_MAGIC:
        return data
    try:
        out = _gunzip(data, limit)
    except (EOFError, zlib.error) as exc:
        raise ValueError(f"{what} {path} is truncated or corrupt: its gzip stream cannot be read to the end ({exc})") from None
    if len(out) > limit:
        raise ValueError(f"{what} {path} decompresses to more than {bound}: a gzip bomb or not such a file")
    return out


_GZIP_MAGIC = b"\x1f\x8b"


def _gunzip(data: bytes, limit: int) -> bytes:
    """The gzip ``data`` decompressed as `gzip.decompress` does (members one after another, zero padding after the
    last), stopping once past ``limit`` bytes.

    Each member is one call into zlib, which releases the GIL for all of it: `gzip.GzipFile` reads in chunks and
    takes the GIL back for each, so beside a thread holding it (the main job's TensorFlow import) its 8 MB of
    catalog took 0.9 s instead of 0.06 s."""
    out = bytearray()
    while data:
        member = zlib.decompressobj(wbits=31)  # 16 + 15: a gzip header and trailer around the deflate stream
        out += member.decompress(data, limit + 1 - len(out))
        if len(out) > limit:
            break
        if not member.eof:
            raise EOFError("the stream ends before the end-of-member marker")
        data = member.unused_data.lstrip(b"\0")
        if data and data[:2] != _GZIP_MAGIC:
            raise zlib.error("data after the last member is not a gzip member")
    return bytes(out)


def nesting_depth(text: str) -> int:
    """How deep the ``[`` / ``{`` of JSON or flow-style YAML ``text`` nest (brackets inside quoted strings do not
    count): measured in one vectorised pass, where a parser would recurse (and PyYAML's scanner slow
    quadratically) into RecursionError."""
    bare = re.sub(r"'[^']*'", "", re.sub(r'"(?:[^"\\]|\\.)*"', "", text)).encode()
    step = np.frombuffer(bare, dtype=np.uint8)
    step = np.isin(step, (ord("["), ord("{"))).astype(np.int64) - np.isin(step, (ord("]"), ord("}")))
    return int(np.cumsum(step).max(initial=0))


def read_json(path: str | os.PathLike, what: str = "JSON file", *, damaged: str = "", **options: Any) -> Any:
    """A JSON file read within bounds: a ValueError naming it when it is unreadable, too large or too deeply nested.

    ``damaged`` ends each message where the file belongs to something larger (``"the model folder is corrupt"``).
    """
    path = Path(path)
    tail = f"; {damaged}" if damaged else ""
    data = read_bytes(path, what, limit=MAX_JSON_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: it is not UTF-8 text ({exc}){tail}") from None
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise ValueError(f"{path} is not a record gpal writes: it nests {depth} levels deep (at most {MAX_DEPTH}){tail}")
    try:
        return json.loads(text, **options)
    except ValueError as exc:  # JSONDecodeError is a ValueError
        raise ValueError(f"{path} is not valid JSON ({exc}){tail}") from None


def file_sha256(path: str | os.PathLike) -> str:
    """The checksum of a file's bytes, read in blocks (a file of any size in bounded memory)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(2**20), b""):
            digest.update(block)
    return digest.hexdigest()
