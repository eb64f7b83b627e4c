"""The archive ``ss.save`` writes: a ZIP file whose entries are stored, never compressed.

    program.json    the program as human-readable JSON text; arrays name their entries
    arrays/0, ...   one entry per array: its raw little-endian bytes

Each array entry's data starts at a file offset with a chosen remainder modulo 64 (the
saved array's alignment offset, see ``layout.py``): a padding field in the entry's local
header puts it there.  So an entry is read with one ``readinto`` into a buffer aligned the
same way, or memory-mapped in place (an ``mmap`` starts on a page boundary, so a mapped
array lands at the same offset within its 64-byte line).  The file is a plain ZIP:
``unzip -p model.ssz program.json`` prints the program, ``zipfile`` lists it.

The writer lives here (so data offsets are known before anything is written); the reader
takes the central directory from ``zipfile`` and then checks every entry itself, because a
crafted archive must give a clear error and never cost more than the file's own size: names
come from a fixed grammar, no name twice, only stored (uncompressed: no zip bombs) and
unencrypted entries, every entry inside the file and overlapping no other entry.
"""
from __future__ import annotations

import mmap
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Dict, List, Optional

import numpy as np

ALIGN = 64
PROGRAM = "program.json"
ENTRY_NAME = re.compile(r"^arrays/(0|[1-9][0-9]{0,8})$")
MAGIC = b"PK\x03\x04"

# ZIP64 fields take over from 32-bit ones at this size; a module constant so that tests can
# lower it and exercise the ZIP64 records without writing 4 GB
ZIP64_LIMIT = 0xFFFFFFFF
_LOCAL = struct.Struct("<IHHHHHIIIHH")            # local file header, 30 bytes
_CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")    # central directory header, 46 bytes
_END = struct.Struct("<IHHHHIIH")                 # end of central directory, 22 bytes
_END64 = struct.Struct("<IQHHIIQQQQ")             # ZIP64 end of central directory, 56 bytes
_LOCATOR64 = struct.Struct("<IIQI")               # ZIP64 end locator, 20 bytes
_PAD_ID = 0xD935        # extra-field id for alignment padding (as Android's zipalign uses)
_DOS_DATE = (0 << 9) | (1 << 5) | 1               # 1980-01-01: saved files are reproducible
_CHUNK = 64 << 20


class BadArchive(Exception):
    """What is wrong with an archive (the caller adds which file)."""


@dataclass
class Entry:
    """One entry to write: its name, its bytes (a 1-D uint8 array, no copy), where its data
    must start modulo 64, and its CRC-32."""
    name: str
    data: np.ndarray
    align: int = 0
    crc: Optional[int] = None


def crc32(data: np.ndarray) -> int:
    """CRC-32 of a contiguous uint8 array (the checksum ZIP keeps for every entry)."""
    return zlib.crc32(memoryview(data)) & 0xFFFFFFFF


# =========================================================================== writing
def write(fh: BinaryIO, entries: List[Entry]) -> None:
    """Write a ZIP archive of ``entries`` to the binary stream ``fh`` (sequentially: the
    stream need not be seekable)."""
    pos = 0
    central = []
    for e in entries:
        size = int(e.data.nbytes)
        crc = crc32(e.data) if e.crc is None else e.crc
        name = e.name.encode("ascii")
        big = size >= ZIP64_LIMIT
        extra = struct.pack("<HHQQ", 1, 16, size, size) if big else b""
        base = pos + _LOCAL.size + len(name) + len(extra)
        pad = (e.align - base) % ALIGN
        if pad:
            pad += ALIGN if pad < 4 else 0
            extra += struct.pack("<HH", _PAD_ID, pad - 4) + b"\0" * (pad - 4)
        small = 0xFFFFFFFF if big else size
        header = _LOCAL.pack(0x04034B50, 45 if big else 20, 0, 0, 0, _DOS_DATE, crc, small,
                             small, len(name), len(extra)) + name + extra
        _write_all(fh, memoryview(header))
        _write_all(fh, memoryview(e.data))
        central.append((name, crc, size, pos))
        pos += len(header) + size
    start = pos
    for name, crc, size, offset in central:
        fields = [v for v in (size, size, offset) if v >= ZIP64_LIMIT]
        extra = struct.pack("<HH%dQ" % len(fields), 1, 8 * len(fields), *fields) \
            if fields else b""
        record = _CENTRAL.pack(
            0x02014B50, (3 << 8) | 45, 45 if fields else 20, 0, 0, 0, _DOS_DATE, crc,
            size if size < ZIP64_LIMIT else 0xFFFFFFFF,
            size if size < ZIP64_LIMIT else 0xFFFFFFFF,
            len(name), len(extra), 0, 0, 0, 0o100644 << 16,
            offset if offset < ZIP64_LIMIT else 0xFFFFFFFF) + name + extra
        _write_all(fh, memoryview(record))
        pos += len(record)
    cd_size = pos - start
    count = len(central)
    if count >= 0xFFFF or start >= ZIP64_LIMIT or cd_size >= ZIP64_LIMIT:
        _write_all(fh, memoryview(_END64.pack(0x06064B50, 44, (3 << 8) | 45, 45, 0, 0, count,
                                              count, cd_size, start)))
        _write_all(fh, memoryview(_LOCATOR64.pack(0x07064B50, 0, pos, 1)))
        _write_all(fh, memoryview(_END.pack(0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                                            0xFFFFFFFF, 0)))
    else:
        _write_all(fh, memoryview(_END.pack(0x06054B50, 0, 0, count, count, cd_size, start,
                                            0)))


def _write_all(fh: BinaryIO, view: memoryview) -> None:
    view = view.cast("B") if view.format != "B" else view
    for i in range(0, len(view), _CHUNK):
        part = view[i:i + _CHUNK]
        while len(part):
            n = fh.write(part)
            part = part[n if n is not None else len(part):]


# =========================================================================== reading
@dataclass
class Stored:
    """Where an entry's data is in the file."""
    name: str
    offset: int
    size: int
    crc: int


class Archive:
    """A validated view of a saved archive in the seekable binary stream ``fh``."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        fh.seek(0, 2)
        self.file_size = fh.tell()
        fh.seek(0)
        try:
            infos = zipfile.ZipFile(fh).infolist()
        except zipfile.BadZipFile as e:
            raise BadArchive("it is not a readable ZIP archive (%s); the file is damaged or "
                             "truncated" % e) from None
        except (OSError, EOFError, ValueError, struct.error, NotImplementedError,
                UnicodeDecodeError, KeyError, IndexError, OverflowError) as e:
            raise BadArchive("it is not a readable ZIP archive (%s: %s); the file is damaged "
                             "or truncated" % (type(e).__name__, e)) from None
        self.entries: Dict[str, Stored] = {}
        spans = []
        for info in infos:
            name = info.filename
            if name != PROGRAM and not ENTRY_NAME.match(name):
                raise BadArchive("unexpected entry %s (a saved program holds %s and arrays/<n> "
                                 "entries only)" % (_short(name), PROGRAM))
            if name in self.entries:
                raise BadArchive("entry %s appears twice" % name)
            if info.compress_type != zipfile.ZIP_STORED:
                raise BadArchive("entry %s is compressed; saved programs store their entries "
                                 "uncompressed (re-save it with ss.save)" % name)
            if info.flag_bits & 0x41:
                raise BadArchive("entry %s is encrypted" % name)
            if info.file_size != info.compress_size:
                raise BadArchive("entry %s has two different sizes" % name)
            start = info.header_offset
            if not 0 <= start <= self.file_size - _LOCAL.size:
                raise BadArchive("entry %s starts outside the file (truncated?)" % name)
            fh.seek(start)
            head = fh.read(_LOCAL.size)
            sig, _, _, method, _, _, _, _, _, n_name, n_extra = _LOCAL.unpack(head)
            if sig != 0x04034B50 or method != 0:
                raise BadArchive("entry %s has a damaged local header" % name)
            if fh.read(n_name) != name.encode("ascii"):
                raise BadArchive("entry %s has a different name in its local header" % name)
            offset = start + _LOCAL.size + n_name + n_extra
            end = offset + info.file_size
            if end > self.file_size:
                raise BadArchive("entry %s claims %d bytes but the file ends %d bytes into "
                                 "it; the file is truncated"
                                 % (name, info.file_size, max(self.file_size - offset, 0)))
            spans.append((start, end, name))
            self.entries[name] = Stored(name, offset, info.file_size, info.CRC & 0xFFFFFFFF)
        spans.sort()
        for (_, end, a), (start, _, b) in zip(spans, spans[1:]):
            if start < end:
                raise BadArchive("entries %s and %s overlap" % (a, b))
        if PROGRAM not in self.entries:
            raise BadArchive("it has no %s entry" % PROGRAM)

    def read_bytes(self, name: str) -> bytes:
        """The whole content of a (small) entry."""
        e = self.entries[name]
        buf = aligned_empty(e.size, 0)
        self.read_into(e, buf)
        return bytes(buf)

    def read_into(self, e: Stored, buf: np.ndarray) -> None:
        """Fill ``buf`` (uint8, e.size bytes) with the entry's data."""
        self.fh.seek(e.offset)
        view = memoryview(buf)
        got = 0
        while got < e.size:
            n = self.fh.readinto(view[got:got + _CHUNK])
            if not n:
                raise BadArchive("entry %s is truncated" % e.name)
            got += n


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


def mapped(mm: mmap.mmap, e: Stored) -> np.ndarray:
    """The entry's data as a uint8 array over the mapping (no read)."""
    if e.size == 0:
        return np.empty(0, np.uint8)
    return np.frombuffer(mm, np.uint8, count=e.size, offset=e.offset)


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."
