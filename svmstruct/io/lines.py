"""A text file's lines from its bytes, for files whose header is read line by line and whose body may be large (model
files): the header decoded one line at a time, the body handed on as the file's own bytes (no copy) or, where it is
small or has to be read line by line, as text. Lines end with a newline, a CR LF or a lone CR (as Python's universal
newlines read them); undecodable bytes become U+FFFD, as a text file opened with errors='replace'."""
from __future__ import annotations

import numpy as np

from svmstruct.errors import InputError


def _read_all(f) -> bytes | bytearray:
    """All of F's bytes: a regular file's into one buffer of its size (f.read() would hold it twice for a moment)."""
    import os
    import stat

    try:
        info = os.fstat(f.fileno())
    except (AttributeError, OSError, ValueError):  # a stream without a descriptor (gzip, a test's buffer)
        return f.read()
    if not stat.S_ISREG(info.st_mode) or not hasattr(f, "readinto"):
        return f.read()
    blob = bytearray(info.st_size)
    view, got = memoryview(blob), 0
    while got < len(blob):
        count = f.readinto(view[got:])
        if not count:
            break
        got += count
    view.release()
    del blob[got:]  # the file shrank while it was read
    blob += f.read()  # ... or grew
    return blob


class Lines:
    def __init__(self, blob: bytes | bytearray):
        if blob.count(b"\r") != blob.count(b"\r\n"):  # lone carriage returns end lines too
            blob = blob.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        self.blob = blob
        self.at = 0  # where the next line starts
        self.number = 0  # the number of the line read last (1-based)

    @classmethod
    def of(cls, path: str, what: str = "file") -> Lines:
        """The lines of the file at PATH (`-`: stdin; gzip recognised), which must end with a newline (InputError)."""
        from svmstruct.io import files

        with files.open_binary(path, what) as f:
            try:
                blob = _read_all(f)
            except OSError as e:
                raise InputError(f"cannot read {what}: {e.strerror}", path) from None
        lines = cls(blob)
        if blob and not lines.blob.endswith(b"\n"):  # a file cut short ends in the middle of a line
            raise InputError(f"the {what} ends in the middle of a line (cut short?): a {what} file's last line ends "
                             "with a newline", files.display_name(path), lines.count())
        return lines

    def count(self) -> int:
        """The number of lines in the file."""
        return self.blob.count(b"\n") + (not self.blob.endswith(b"\n"))

    def done(self) -> bool:
        return self.at >= len(self.blob)

    def next(self) -> str:
        """The next line, decoded, without its newline."""
        end = self.blob.find(b"\n", self.at)
        end = len(self.blob) if end < 0 else end
        line = self.blob[self.at:end]
        self.at, self.number = end + 1, self.number + 1
        return (line[:-1] if line.endswith(b"\r") else line).decode("utf-8", errors="replace")

    def rest(self) -> list:
        """The lines not read yet, decoded (the line-by-line readers of small bodies, and of a broken one)."""
        text = self.blob[self.at:].decode("utf-8", errors="replace")
        rows = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
        return rows[:-1] if rows and rows[-1] == "" else rows

    def buffer(self) -> np.ndarray:
        """The bytes not read yet, as a uint8 array over the file's own bytes (no copy)."""
        from svmstruct.compute.jit import kernel_bytes

        return kernel_bytes(self.blob, min(self.at, len(self.blob)))

    def offset(self, k: int) -> int:
        """Where the k-th line not read yet starts, in buffer()'s offsets."""
        at = self.at
        for _ in range(k):
            at = self.blob.index(b"\n", at) + 1
        return at - self.at

    def line_at(self, offset: int) -> str:
        """The decoded line that starts OFFSET bytes after the lines read (buffer()'s offsets)."""
        start = self.at + offset
        end = self.blob.find(b"\n", start)
        line = self.blob[start:len(self.blob) if end < 0 else end]
        return (line[:-1] if line.endswith(b"\r") else line).decode("utf-8", errors="replace")
