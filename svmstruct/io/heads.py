"""A data file's first bytes: whether the whole file is small enough for the Python twin of the SVMlight kernels
(io.svmlight_twin; compute.paths decides), and the file again with the bytes looked at in front (Prefixed)."""
from __future__ import annotations

import gzip
import os
import stat
import zlib

from svmstruct.errors import InputError

TWIN_BYTES = 4 << 20  # a file up to this size is read by the Python twin (io.svmlight_twin), without numba
TWIN_LABEL_BYTES = 16 << 20  # ... when its features are not read (eval, qrels): make bench-startup


def small_text(f, limit: int) -> bytes | None:
    """All of F's text when it is at most LIMIT bytes, where the Python twin reads it faster than numba starts, and
    the kernels are not loaded already (compute.paths), else None; what was read of a pipe to find out comes first
    later (Prefixed)."""
    from svmstruct.compute import paths

    size = plain_size(f)
    if size is not None and paths.compiled(size, limit + 1, "svmstruct.io.svmlight_parser"):
        return None
    try:
        head = f.read(limit + 1 if size is None else -1)
        if not paths.compiled(len(head), limit + 1, "svmstruct.io.svmlight_parser"):
            return head if len(head) <= limit or size is not None else head + f.read()
    except (OSError, EOFError, zlib.error) as e:
        raise InputError(f"cannot read (corrupt or truncated?): {e}", getattr(f, "name", "<input>")) from None
    f.svmstruct_held = head  # the bytes read: Prefixed gives them back first
    return None


class Prefixed:
    """A binary file whose first bytes small_text read already: they come first, then the rest of it."""

    def __init__(self, f):
        self.f, self.head, self.at = f, getattr(f, "svmstruct_held", b""), 0

    def readinto(self, buffer) -> int:
        if self.at < len(self.head):
            n = min(len(buffer), len(self.head) - self.at)
            buffer[:n] = self.head[self.at:self.at + n]
            self.at += n
            return n
        return self.f.readinto(buffer)

    def seek(self, position: int) -> None:
        self.f.seek(position)
        self.head, self.at = b"", 0

    def seekable(self) -> bool:
        return not self.head and self.f.seekable()

    def fileno(self) -> int:
        if isinstance(self.f, gzip.GzipFile):  # (its descriptor is the compressed file's)
            raise OSError("a gzip stream")
        return self.f.fileno()


def plain_size(f) -> int | None:
    """The bytes of a regular, uncompressed file; None for a pipe or gzip."""
    try:
        info = os.fstat(f.fileno())
    except (OSError, AttributeError, ValueError):
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) and not isinstance(f, gzip.GzipFile) else None
