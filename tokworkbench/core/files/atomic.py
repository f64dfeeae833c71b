"""Output files: checked before any work is done, then written atomically and never over
something that is not a file.

The rules, and why:
- A symlink is written through: the file it points to is replaced and the link stays a link
  (replacing the link itself would silently detach whatever else uses it).
- The target must be absent or a regular file. A device, FIFO, socket or folder is refused:
  `os.replace` would turn `/dev/null` into a 0600 regular file for the whole machine.
- A regular file with more than one hard link is refused. `os.replace` gives the name a new
  inode, so the other names would keep the old content; writing in place would keep the links
  but give up the atomic write (a crash mid-write leaves a half model under every name). Neither
  is what the user asked for, so they choose: remove the file first, or write elsewhere.
- The replaced file's permission bits (and owner and group, where this process may set them)
  carry over; a new file gets 0o666 less the umask, as `open()` would give it.
- The temp file sits beside the target as `.NAME.tokworkbench-tmp-HOST-PID-XXXXXXXX`, so one
  left by a killed process can be recognised: the next write to that folder removes those whose
  process (same host, PID no longer running) is gone.
- A file we write unasked into a folder of our own (the derived cache) goes through
  `write_in_folder` instead: relative to a descriptor of the folder, the temp created O_EXCL and
  O_NOFOLLOW, and the rename replacing whatever the name is. A link planted there is replaced,
  never written through, and the file is 0600 whatever it was.
- An output that is one of the inputs (the same inode, whatever the path) is refused before
  any work, by `check_output`: training on c.txt must not end by overwriting c.txt.
- Files that belong together (tiktoken's ranks and companion) go through `write_atomic_all`:
  every temp file is written in full and synced before any target is replaced, so a full disk
  or any failed write leaves every old file as it was. The renames come last, in order; before
  each but the last, the old file gets a second name (a hard link, which costs no data), so a
  rename that fails puts back the ones before it. Where hard links are not possible, a failed
  rename can leave a mix, which the companion's hash then names at load.
"""

import errno
import os
import re
import secrets
import socket
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from tokworkbench.core.errors import OutputError
from tokworkbench.core.text.corpus import kind_of as file_kind
from tokworkbench.core.text.corpus import os_reason

TMP_TAG = ".tokworkbench-tmp-"
_TMP_NAME = re.compile(r"^\..*" + re.escape(TMP_TAG) + r"(?P<host>[A-Za-z0-9_-]*)-(?P<pid>\d+)-[A-Za-z0-9_]+$")
_NAME_IN_TMP = 64  # characters of the target's name kept in the temp name (which must fit NAME_MAX)
def resolve_output(path: str | Path) -> Path:
    """The file a write to `path` would replace, with symlinks followed; refuses what
    `write_atomic` must not write (see the module docstring). Raises OutputError.

    The file is looked at through `path` itself first, so a link such as /dev/stdout is judged
    by what it reaches (a pipe, a terminal) rather than by the name it resolves to."""
    shown = str(path)
    if not shown:  # os.stat("") is the working directory's: "cannot write : Is a directory"
        raise OutputError("the output path is empty; name a file")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"cannot write {shown}: {os_reason(exc)}") from None
    target = Path(os.path.realpath(path))
    if st is None:
        _check_new_file(shown, target)
        return target
    if not stat.S_ISREG(st.st_mode):
        raise OutputError(f"refusing to write {shown}: it is {file_kind(st.st_mode)}, not a regular file")
    if st.st_nlink > 1:
        raise OutputError(
            f"refusing to write {shown}: it has {st.st_nlink} hard links, and an atomic replace would "
            "split them; remove it first or write elsewhere")
    if _identity(target) != (st.st_dev, st.st_ino):
        raise OutputError(f"refusing to write {shown}: it does not lead to a file name that can be replaced")
    return target


def _check_new_file(shown: str, target: Path) -> None:
    """A file that does not exist yet: its folder must exist and its name must fit."""
    parent = target.parent
    try:
        pst = os.stat(parent)
    except OSError as exc:
        reason = "the folder does not exist" if exc.errno == errno.ENOENT else os_reason(exc)
        raise OutputError(f"cannot write {shown}: {parent}: {reason}") from None
    if not stat.S_ISDIR(pst.st_mode):
        raise OutputError(f"cannot write {shown}: {parent} is {file_kind(pst.st_mode)}, not a folder")
    limit = _name_max(parent)
    size = len(os.fsencode(target.name))
    if size > limit:
        raise OutputError(f"cannot write {shown}: its name is {size} bytes long; this file system allows {limit}")


def _name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 255


def _identity(path: str | Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def check_output(path: str | Path, inputs: Iterable[str | Path] = ()) -> Path:
    """Call before any work: refuse an output that cannot be written safely, or that is one of
    `inputs` (the same file by device and inode, whatever path names it). Returns the target."""
    target = resolve_output(path)
    mine = _identity(target)
    if mine is not None:
        for source in inputs:
            if _identity(source) == mine:
                same = "" if str(source) == str(path) else f" (the same file as {source})"
                raise OutputError(f"refusing to write {path}: it is one of the inputs{same}; "
                                  "choose another output")
    return target


def write_atomic(path: str | Path, data: bytes) -> Path:
    """Write `data` to `path` through a temp file and `os.replace`, by the rules above.
    Returns the file written (symlinks resolved). Raises OutputError."""
    target = resolve_output(path)
    remove_stale_temps(target.parent)
    try:
        _replace(target, data)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {os_reason(exc)}") from None
    return target


def write_in_folder(folder: int, name: str, data: bytes, mode: int = 0o600) -> None:
    """Write `data` as `name` in the folder open as descriptor `folder`, atomically and without
    following a link anywhere (see the module docstring). Raises OSError."""
    remove_stale_temps(folder)
    tmp = f"{_temp_prefix(name)}{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=folder)
        except FileNotFoundError:
            pass
        raise
    try:
        os.fsync(folder)
    except OSError:
        pass


def _replace(target: Path, data: bytes) -> None:
    tmp = _write_temp(target, data)
    try:
        os.replace(tmp, target)
    except BaseException:
        _unlink(tmp)
        raise
    _sync_folder(target.parent)


def _write_temp(target: Path, data: bytes) -> str:
    """A temp file beside `target` holding `data`, synced, with the old file's mode; removed
    again if anything fails."""
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(target.name), dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            _copy_mode(f.fileno(), old)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _unlink(path: str | None) -> None:
    if path is None:
        return
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def write_atomic_all(items: list[tuple[str | Path, bytes]]) -> list[Path]:
    """Write every `(path, data)` or none: all temp files in full first, then the renames, a
    failed one putting back the files replaced before it (see the module docstring). Returns
    the files written. Raises OutputError, with every old file as it was."""
    targets = [resolve_output(path) for path, _ in items]
    for folder in dict.fromkeys(t.parent for t in targets):
        remove_stale_temps(folder)
    temps: list[str] = []
    shown = items[0][0]
    try:
        for (path, data), target in zip(items, targets):
            shown = path
            temps.append(_write_temp(target, data))
        _rename_all(targets, temps)
    except OSError as exc:
        kept = "nothing was changed" if getattr(exc, "restored", True) else \
            "some files are new and some old: write them again"
        raise OutputError(f"cannot write {shown}: {os_reason(exc)}; {kept}") from None
    finally:
        for tmp in temps:
            _unlink(tmp)
    for folder in dict.fromkeys(t.parent for t in targets):
        _sync_folder(folder)
    return targets


def _rename_all(targets: list[Path], temps: list[str]) -> None:
    """Each temp over its target, in order; if one rename fails, the targets replaced before it
    get their old files back (kept under a second name), or are removed again if they are new,
    and the error goes on."""
    undo: list[tuple[Path, str | None, bool]] = []  # target, its old file's second name, whether it existed
    try:
        for k, (target, tmp) in enumerate(zip(targets, temps)):
            if k < len(targets) - 1:
                undo.append((target, *_second_name(target)))
            os.replace(tmp, target)
    except BaseException as exc:
        restored = True
        for target, backup, existed in undo[:k]:
            try:
                if backup is not None:
                    os.replace(backup, target)
                elif existed:
                    restored = False  # no second name could be made: the new file stays
                else:
                    os.unlink(target)
            except OSError:
                restored = False  # the companion's hash names the mix at load
        if isinstance(exc, OSError):
            exc.restored = restored
        raise
    finally:
        for _, backup, _ in undo:
            _unlink(backup)


def _second_name(target: Path) -> tuple[str | None, bool]:
    """A hard link to the file at `target` (None if there is none or links are not possible),
    and whether there was a file."""
    name = os.path.join(target.parent, _temp_prefix(target.name) + secrets.token_hex(4))
    try:
        os.link(target, name, follow_symlinks=False)
    except FileNotFoundError:
        return None, False
    except OSError:
        return None, os.path.lexists(target)
    return name, True


def _temp_prefix(name: str) -> str:
    return f".{name[:_NAME_IN_TMP]}{TMP_TAG}{_host()}-{os.getpid()}-"


def _host() -> str:
    """This machine's name as it may appear in a temp name (a PID means nothing elsewhere)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname())[:32]


def _copy_mode(fd: int, old: os.stat_result | None) -> None:
    """The replaced file's owner and mode, or the umask's mode for a new file (mkstemp makes 0600)."""
    if old is None:
        os.fchmod(fd, 0o666 & ~current_umask())
        return
    try:
        os.fchown(fd, old.st_uid, old.st_gid)  # before chmod: chown may clear set-id bits
    except OSError:
        pass  # not permitted (another user's file): the mode still carries over
    os.fchmod(fd, stat.S_IMODE(old.st_mode))


def current_umask() -> int:
    """The umask, read without changing it where Linux allows (os.umask both sets and reads,
    which would race with a thread creating a file at that moment)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable; some file systems cannot, which is harmless."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_stale_temps(folder: str | Path | int) -> list[str]:
    """Remove temp files of ours in `folder` (a path, or an open descriptor of it) left by a
    process that is gone (killed mid-write); returns their names. Temps of running processes and
    of other hosts are left alone."""
    host = _host()
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        m = _TMP_NAME.match(entry.name)
        if not m or m["host"] != host or _alive(int(m["pid"])):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                if isinstance(folder, int):
                    os.unlink(entry.name, dir_fd=folder)
                else:
                    os.unlink(entry.path)
                removed.append(entry.name)
        except OSError:
            pass
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # exists under another user (or cannot be asked): leave its file alone
    return True
