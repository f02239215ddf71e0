"""Reading a file that came with downloaded code: regular files only, bounded.

A path in a downloaded project (a source, an included header, a module
file on ``-I``, a tuning record, a recipe, an existing output) may be a
FIFO (opening it waits for a writer; reading it, for data), a device
(``/dev/zero`` never ends, a tape rewinds when opened) or a link to one.
:func:`read_regular` refuses them before opening (``stat``), opens without
blocking and without taking a terminal, checks the open file again
(``fstat``: a file swapped after the first check is not read), and reads at
most *max_bytes* (+1, to tell a longer file): the caller never blocks and
never reads more than it allows.  A file that holds more than its size says
(``/proc/self/environ`` says 0 bytes) is refused too: a link to it in a
downloaded tree would put the environment into a diagnostic.

This module imports nothing of f2loopy: any layer may use it.
"""

from __future__ import annotations

import errno
import os
import stat

#: what a source or header may hold (the search path's limit too)
MAX_SOURCE_BYTES = 64 * 1024 * 1024

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | \
    getattr(os, "O_CLOEXEC", 0)


class NotARegularFile(OSError):
    """The path is a FIFO, a device, a socket or a folder (after links)."""

    def __init__(self, path, mode: int | None = None):
        if mode is not None and stat.S_ISDIR(mode):
            super().__init__(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
            return
        kind = ("a FIFO" if mode is not None and stat.S_ISFIFO(mode) else
                "a device" if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISBLK(mode))
                else "a socket" if mode is not None and stat.S_ISSOCK(mode)
                else "it holds more than its size says" if mode is not None
                else "a device, a FIFO or a folder")
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", str(path))


class FileTooLarge(OSError):
    """The file holds more than the caller allows."""

    def __init__(self, path, max_bytes: int):
        super().__init__(errno.EFBIG, f"larger than {max_bytes} bytes", str(path))


def read_regular(path, max_bytes: int = MAX_SOURCE_BYTES) -> bytes:
    """The bytes of *path*, a regular file (after links) of at most
    *max_bytes*; raises :class:`NotARegularFile`, :class:`FileTooLarge` or
    the :class:`OSError` of ``open``/``read`` (its ``strerror`` says why)."""
    st = os.stat(path)                       # before opening: no FIFO is opened
    if not stat.S_ISREG(st.st_mode):
        raise NotARegularFile(path, st.st_mode)
    if st.st_size > max_bytes:
        raise FileTooLarge(path, max_bytes)
    fd = os.open(path, _FLAGS)
    try:
        st = os.fstat(fd)                    # the file that was opened
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile(path, st.st_mode)
        if st.st_size > max_bytes:
            raise FileTooLarge(path, max_bytes)
        chunks = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise FileTooLarge(path, max_bytes)
    if len(data) > st.st_size:
        # more than its size: a file of /proc or /sys (/proc/self/environ
        # says 0 bytes and holds the environment), or one that grows
        raise NotARegularFile(path, st.st_mode)
    return data


def read_regular_head(path, max_bytes: int) -> bytes:
    """The first *max_bytes* bytes (at most) of *path*, a regular file after
    links; raises like :func:`read_regular` (but never
    :class:`FileTooLarge`)."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotARegularFile(path, mode)
    fd = os.open(path, _FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(path, mode)
        return os.read(fd, max_bytes)
    finally:
        os.close(fd)


def read_regular_text(path, max_bytes: int = MAX_SOURCE_BYTES) -> str:
    r""":func:`read_regular` as text, as ``Path.read_text`` reads it (UTF-8,
    or Latin-1 where it is not UTF-8, so that every byte stands for one
    character; ``\r\n`` and ``\r`` as ``\n``), less a leading UTF-8 byte
    order mark (which compilers skip)."""
    data = read_regular(path, max_bytes)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text
