"""The file ``ss.save`` writes: the program as JSON text, then its arrays as raw bytes.

    bytes 0-63      preamble: ``SYMSHAPE-ARCHIVE <layout> <text bytes> <data offset>`` in
                    ASCII, padded with spaces, ending in a newline
    64 ...          the program document (UTF-8 JSON text; ``head -c 100000 model.ssp``
                    prints it); every array names its place in the data section
    data offset     the data section (a multiple of 64 bytes into the file): each array's
                    raw little-endian bytes, at the offset its description gives

An array's offset within the data section has the saved array's alignment offset as its
remainder modulo 64 (``layout.py``), so it is read with one ``readinto`` into a buffer
aligned the same way, or memory-mapped in place: a mapping starts on a page boundary, so a
mapped array lands at the same offset within its 64-byte line.

Why not a ZIP file: ZIP requires a CRC-32 of every entry, and on a loaded machine
computing it costs as much as writing the bytes, so saving could not stay within 2x of
``np.save``.  Arrays here carry a block checksum (``blocksum``) that NumPy computes at
memory speed, and the program text keeps its SHA-256 (in the document).

Reading trusts nothing: the preamble has a strict grammar, the text and every array must
lie inside the file, arrays may not overlap (so what a load allocates is bounded by the
file's own size), and no array is read before the whole program has been validated.
"""
from __future__ import annotations

import mmap
import re
from typing import BinaryIO, Callable, List, Optional, Tuple

import numpy as np

from symshape.algebra.expr import ceildiv

ALIGN = 64
LAYOUT = 1                              # version of this byte layout (the preamble's)
MAGIC = b"SYMSHAPE-ARCHIVE "
PREAMBLE = 64
_PREAMBLE = re.compile(rb"^SYMSHAPE-ARCHIVE ([0-9]{1,20}) ([0-9]{1,20}) ([0-9]{1,20}) *\n$")
CHECKSUM = "blocksum64"                 # the checksum's name, written before its value
_BLOCK = 512                            # 8-byte words per checksum block (4 KiB)
_CHUNK = 64 << 20
_PIECE = 8 << 20        # bytes written or read, then summed, at a time (fits the cache)
_MASK = (1 << 64) - 1


class BadArchive(Exception):
    """What is wrong with an archive (the caller adds which file)."""


# =========================================================================== checksum
class BlockSum:
    """Checksum of a byte string: the bytes as little-endian 64-bit words (the last one
    zero-padded) in 4 KiB blocks; with s_b the sum of block b's words, the value is
    (sum of s_b, sum of (b + 1) * s_b), both mod 2**64.  It changes when any word changes,
    when blocks move, and when a block is zeroed (unless it summed to zero), and NumPy
    computes it at memory speed, where CRC-32 would cost as much as the disk copy.  Fed in
    chunks (all but the last a multiple of 4 KiB), so that each chunk is summed while it is
    still in the cache from being read or written."""

    def __init__(self) -> None:
        self.a = self.b = self.blocks = 0
        self.done = False

    def update(self, chunk: np.ndarray) -> None:
        """Add the next chunk (1-D uint8)."""
        if self.done:
            raise ValueError("only the last chunk may end inside a block")
        n = chunk.size
        words = n // 8
        full = words // _BLOCK
        sums = np.add.reduce(chunk[:full * _BLOCK * 8].view("<u8").reshape(full, _BLOCK),
                             axis=1, dtype=np.uint64) if full else np.zeros(0, np.uint64)
        if n > full * _BLOCK * 8:               # a partial block: the end of the data
            self.done = True
            pad = np.zeros(ceildiv(n - full * _BLOCK * 8, 8) * 8, np.uint8)
            pad[:n - full * _BLOCK * 8] = chunk[full * _BLOCK * 8:]
            last = np.add.reduce(pad.view("<u8"), dtype=np.uint64)
            sums = np.concatenate([sums, np.array([last], np.uint64)])
        if sums.size:
            weights = np.arange(self.blocks + 1, self.blocks + sums.size + 1, dtype=np.uint64)
            self.a = (self.a + int(np.add.reduce(sums, dtype=np.uint64))) & _MASK
            self.b = (self.b + int(np.add.reduce(sums * weights, dtype=np.uint64))) & _MASK
            self.blocks += sums.size

    def hexdigest(self) -> str:
        return "%s:%016x%016x" % (CHECKSUM, self.a, self.b)


def blocksum(data: np.ndarray) -> str:
    """The ``BlockSum`` of a whole 1-D uint8 array."""
    s = BlockSum()
    s.update(data)
    return s.hexdigest()


# stands in for a checksum until it is known: the same length, so the text keeps its size
PLACEHOLDER = CHECKSUM + ":" + "0" * 32


# =========================================================================== writing
class Placed:
    """An array to write: its bytes (a 1-D uint8 array, no copy) and where they go."""

    def __init__(self, data: np.ndarray, align: int) -> None:
        self.data = data
        self.align = align
        self.offset = 0
        self.checksum = ""


def place(arrays: List[Placed]) -> int:
    """Give each array its offset in the data section (at its alignment offset modulo 64);
    returns the data section's size."""
    pos = 0
    for a in arrays:
        a.offset = pos + (a.align - pos) % ALIGN
        pos = a.offset + int(a.data.nbytes)
    return pos


def write(fh: BinaryIO, arrays: List[Placed], text_size: int,
          finish: Callable[[], bytes]) -> None:
    """Write the file: preamble, program text, then the arrays where ``place`` put them,
    setting each array's checksum on the way.  ``finish()`` gives the program text (of
    ``text_size`` bytes) once the checksums are known.  A seekable stream gets the data
    section first, each chunk summed as it is written, then the text at the head; any
    other stream gets the checksums computed first, then everything in order."""
    data_offset = ceildiv(PREAMBLE + text_size + 1, ALIGN) * ALIGN
    # (a file opened for appending writes at its end wherever it seeks)
    seekable = bool(getattr(fh, "seekable", lambda: False)()) and \
        "a" not in str(getattr(fh, "mode", ""))
    if seekable:
        base = fh.tell()
        fh.seek(base + data_offset)
        _write_arrays(fh, arrays, summing=True)
        end = fh.tell()
        fh.seek(base)
        _write_head(fh, finish(), text_size, data_offset)
        fh.seek(end)
    else:
        for a in arrays:
            a.checksum = blocksum(a.data)
        _write_head(fh, finish(), text_size, data_offset)
        _write_arrays(fh, arrays, summing=False)


def _write_head(fh: BinaryIO, text: bytes, text_size: int, data_offset: int) -> None:
    if len(text) != text_size:
        raise RuntimeError("the program text changed size (%d, expected %d)"
                           % (len(text), text_size))
    head = (b"SYMSHAPE-ARCHIVE %d %d %d" % (LAYOUT, len(text), data_offset)).ljust(
        PREAMBLE - 1) + b"\n"
    gap = data_offset - PREAMBLE - len(text)
    _write_all(fh, memoryview(head + text + b"\n" + b"\0" * (gap - 1)))


def _write_arrays(fh: BinaryIO, arrays: List[Placed], summing: bool) -> None:
    real = _is_real_file(fh)
    pos = 0
    for a in arrays:
        if a.offset > pos:
            _write_all(fh, memoryview(b"\0" * (a.offset - pos)))
        total = BlockSum() if summing else None
        for i in range(0, max(a.data.size, 1), _PIECE):
            piece = a.data[i:i + _PIECE]
            if real and piece.size >= 1 << 20:
                piece.tofile(fh)            # one C-level write, as np.save does
            else:
                _write_all(fh, memoryview(piece))
            if total is not None:
                total.update(piece)         # while the piece is still in the cache
        if total is not None:
            a.checksum = total.hexdigest()
        pos = a.offset + int(a.data.nbytes)


def _is_real_file(fh) -> bool:
    """Whether ``ndarray.tofile`` can write to ``fh`` (a seekable file with a descriptor)."""
    try:
        fh.fileno()
        return bool(fh.seekable()) and "a" not in str(getattr(fh, "mode", ""))
    except (AttributeError, OSError, ValueError):
        return False


def _write_all(fh: BinaryIO, view: memoryview) -> None:
    for i in range(0, len(view), _CHUNK):
        part = view[i:i + _CHUNK]
        while len(part):
            n = fh.write(part)
            part = part[n if n is not None else len(part):]


# =========================================================================== reading
def is_archive(head: bytes) -> bool:
    """Whether a file starting with ``head`` is an archive (not a JSON text file)."""
    return head.startswith(MAGIC)


class Archive:
    """A saved archive in the seekable binary stream ``fh``: its preamble is checked and
    its program text read; arrays are read or mapped on request."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        fh.seek(0, 2)
        self.file_size = fh.tell()
        fh.seek(0)
        head = fh.read(PREAMBLE)
        m = _PREAMBLE.match(head) if len(head) == PREAMBLE else None
        if m is None:
            raise BadArchive("its first %d bytes are not a valid archive preamble (the file "
                             "is damaged or truncated)" % PREAMBLE)
        layout_version, n_text, self.data_offset = (int(g) for g in m.groups())
        if layout_version != LAYOUT:
            raise BadArchive("it has archive layout %d; this symshape reads layout %d "
                             "(upgrade symshape to load it)" % (layout_version, LAYOUT))
        if PREAMBLE + n_text > self.file_size:
            raise BadArchive("its program text claims %d bytes but the file has only %d; "
                             "the file is truncated" % (n_text, self.file_size - PREAMBLE))
        if self.data_offset % ALIGN or not PREAMBLE + n_text < self.data_offset \
                <= self.file_size:
            raise BadArchive("its data section offset %d is not a multiple of %d after the "
                             "program text and inside the file (%d bytes)"
                             % (self.data_offset, ALIGN, self.file_size))
        self.text = fh.read(n_text)
        if len(self.text) != n_text:
            raise BadArchive("the file is truncated inside its program text")
        self.data_size = self.file_size - self.data_offset

    def check_spans(self, spans: List[Tuple[int, int, str]]) -> None:
        """Arrays (offset, size, what) lie inside the data section, do not overlap, and end
        where the file does."""
        for offset, size, what in spans:
            if offset + size > self.data_size:
                raise BadArchive("%s claims bytes %d to %d of the data section, which has "
                                 "only %d; the file is truncated"
                                 % (what, offset, offset + size, self.data_size))
        ordered = sorted((o, o + s, w) for o, s, w in spans if s)
        for (_, end, a), (start, _, b) in zip(ordered, ordered[1:]):
            if start < end:
                raise BadArchive("%s and %s claim the same bytes" % (a, b))
        end = max((o + s for o, s, _ in spans), default=0)
        if self.data_size > end:
            raise BadArchive("the file has %d bytes after its last array; something was "
                             "appended or inserted after it was saved"
                             % (self.data_size - end))

    def read_into(self, offset: int, buf: np.ndarray, summing: bool = False
                  ) -> Optional[str]:
        """Fill ``buf`` (uint8) with the data section's bytes from ``offset``; with
        ``summing``, return their checksum (each piece summed right after it is read)."""
        self.fh.seek(self.data_offset + offset)
        view = memoryview(buf)
        total = BlockSum() if summing else None
        got = 0
        while got < len(view):
            start = got
            end = min(got + _PIECE, len(view))
            while got < end:
                n = self.fh.readinto(view[got:end])
                if not n:
                    raise BadArchive("the file is truncated")
                got += n
            if total is not None:
                total.update(buf[start:end])
        return None if total is None else total.hexdigest()

    def mapped(self, mm: mmap.mmap, offset: int, size: int) -> np.ndarray:
        """The data section's bytes from ``offset`` as a uint8 array over the mapping."""
        if size == 0:
            return np.empty(0, np.uint8)
        return np.frombuffer(mm, np.uint8, count=size, offset=self.data_offset + offset)


def aligned_empty(nbytes: int, align: int) -> np.ndarray:
    """An uninitialised uint8 buffer of ``nbytes`` whose data address is ``align`` mod 64."""
    raw = np.empty(nbytes + ALIGN, np.uint8)
    start = (align - raw.__array_interface__["data"][0]) % ALIGN
    return raw[start:start + nbytes]


def open_map(fh: BinaryIO, mode: str) -> mmap.mmap:
    """A mapping of the whole file: ``r`` read-only, ``r+`` writes go to the file, ``c``
    writes stay in private memory."""
    access = {"r": mmap.ACCESS_READ, "r+": mmap.ACCESS_WRITE, "c": mmap.ACCESS_COPY}[mode]
    return mmap.mmap(fh.fileno(), 0, access=access)


def checksum_ok(text: Optional[str]) -> bool:
    """Whether ``text`` is a checksum this module writes."""
    return isinstance(text, str) and re.fullmatch(CHECKSUM + ":[0-9a-f]{32}", text) is not None
