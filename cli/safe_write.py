"""Replacing a user's file so that it is never left damaged.

``replace_file`` writes the new content to a temporary file in the same directory, flushes
it to disk, gives it the original's permission bits and renames it over the original
(``os.replace`` is atomic on POSIX and Windows): a reader sees the old file or the new one,
never a part.  A full disk, a size limit or a read-only file leave the original untouched.
It refuses a file whose bytes differ from what the caller read (an edit saved while the check
ran) and a file the user made read-only.  ``Baseline`` remembers what the check itself read,
before any user module ran: fixes are worked out from what was checked, so a file that
changed after that (an editor save, a ``git pull`` during the check) is never written.
"""
from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from typing import Dict, Iterable, Optional


class NotWritten(Exception):
    """Why a file was left as it was (the message is for the user)."""


def preflight(path: str, expected: bytes) -> os.stat_result:
    """Raise ``NotWritten`` unless ``path`` still holds ``expected`` and may be written."""
    target = os.path.realpath(path)
    try:
        st = os.stat(target)
        with open(target, "rb") as fh:
            current = fh.read()
    except OSError as e:
        raise NotWritten("cannot read it again: %s" % (e.strerror or e)) from None
    if current != expected:
        raise NotWritten("it changed since the check read it; run the check again")
    if not os.access(target, os.W_OK) or not (st.st_mode & stat.S_IWUSR):
        raise NotWritten("it is read-only")
    return st


def replace_file(path: str, data: bytes, expected: bytes) -> None:
    """Replace the content of ``path`` (through a symlink: its target) by ``data`` if it
    still holds ``expected``; else raise ``NotWritten``."""
    target = os.path.realpath(path)
    st = preflight(path, expected)
    directory = os.path.dirname(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".",
                                   suffix=".symshape-tmp", dir=directory)
    except OSError as e:
        raise NotWritten("cannot create a temporary file in %s: %s"
                         % (directory, e.strerror or e)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, target)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise NotWritten("writing failed (%s); the file is unchanged" % (e.strerror or e)) \
            from None
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Baseline:
    """What a check read, before it wrote anything: the bytes of the files it was given
    (``paths``, read before any user module ran) and the SHA-256 of each other user module
    as the check's child imported it (``note``).  A fix touches only files that still hold
    that."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.data: Dict[str, bytes] = {}
        self.hashes: Dict[str, str] = {}
        for p in paths:
            try:
                with open(p, "rb") as fh:
                    self.data[os.path.abspath(p)] = fh.read()
            except OSError:
                pass            # the check reports a file it cannot read

    def note(self, hashes: Dict[str, str]) -> None:
        """The child's ``{file: sha256}`` of the modules it imported (first seen wins)."""
        for path, digest in hashes.items():
            self.hashes.setdefault(os.path.abspath(path), digest)

    def changed(self, path: str, raw: bytes) -> Optional[str]:
        """Why ``path`` (whose fixes were planned on ``raw``) is not what the check read,
        or None."""
        full = os.path.abspath(path)
        if full in self.data:
            same = self.data[full] == raw
        elif full in self.hashes:
            same = self.hashes[full] == hashlib.sha256(raw).hexdigest()
        else:
            return None         # the check did not read it: preflight guards the write
        return None if same else (
            "it changed on disk while the check ran (an editor save or a git pull?): its "
            "fixes were worked out for the version checked; nothing was written, run the "
            "check again")
