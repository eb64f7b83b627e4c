"""``ss.load`` / ``loads``: parse a file (archive or JSON text), check its checksum and
version, decode it, then read or map its arrays."""
from __future__ import annotations

import io
import json
import os
import warnings
from typing import List, Optional, Tuple

import numpy as np


from symshape.errors import UserError

from .. import archive, layout
from ..ops import families
from ..ir import Node
from ..state import statesave
from .decoding import Decoder, Malformed, PendingArray, reject_constant
from .formats import FORMAT, LOAD_GENERATORS, LOAD_SEEN, MMAP_MODES, VERSION, short_value
from .saving import digest, is_text_stream

families()          # every op's handler and op-table row, before any use

def loads(text: str, source: str = "<string>"):
    """The ExportedProgram in ``text`` (the content of a saved JSON text file)."""
    return _decode(_parse(text, source), source)


def _parse(text: str, source: str) -> dict:
    """The checked top-level document: format, version and checksum."""
    what = "ss.load(%s)" % source
    try:
        doc = json.loads(text, parse_constant=reject_constant)
    except json.JSONDecodeError as e:
        raise UserError("%s: the file is not valid JSON: %s" % (what, e)) from None
    except Malformed as e:
        raise UserError("%s: %s" % (what, e)) from None
    except RecursionError:
        raise UserError("%s: the file nests lists or objects too deeply to be a saved "
                        "program" % what) from None
    except ValueError as e:        # e.g. an integer with thousands of digits
        raise UserError("%s: the file is not a saved program: %s" % (what, e)) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UserError("%s: not a saved symshape program (the top-level object must have "
                        "\"format\": %r)" % (what, FORMAT))
    version = doc.get("version")
    if type(version) is not int or version < 1:
        raise UserError("%s: invalid format version %s" % (what, short_value(version)))
    if version > VERSION:
        raise UserError("%s: the file has format version %d, newer than this symshape "
                        "supports (up to %d); upgrade symshape to load it"
                        % (what, version, VERSION))
    extra = sorted(set(doc) - {"format", "version", "checksum", "program"})
    if extra:
        raise UserError("%s: unexpected top-level key %r" % (what, extra[0]))
    if "program" not in doc or "checksum" not in doc:
        raise UserError("%s: the file has no %s" % (
            what, "'program'" if "program" not in doc else "'checksum'"))
    try:
        got = digest(doc["program"])
    except (TypeError, ValueError) as e:
        raise UserError("%s: the program is not plain JSON data: %s" % (what, e)) from None
    if doc["checksum"] != got:
        raise UserError("%s: checksum mismatch: the file says %s but its program hashes to %s; "
                        "the file was modified or damaged after it was saved"
                        % (what, short_value(doc["checksum"]), got))
    return doc


def _decode(doc: dict, source: str, store: Optional["_Store"] = None):
    """The program of a checked document; ``store`` gives the arrays of an archive."""
    what = "ss.load(%s)" % source
    dec = Decoder(source, store is not None)
    try:
        ep = dec.program(doc["program"])
    except Malformed as e:
        raise UserError("%s: invalid program: %s" % (what, e)) from None
    except (RecursionError, MemoryError, OverflowError, ValueError, TypeError, KeyError,
            IndexError, AttributeError) as e:
        # every field is validated above; this is the net under that validation, so that a
        # crafted file can only ever give a UserError
        raise UserError("%s: invalid program (%s: %s)" % (what, type(e).__name__,
                                                          short_value(str(e)))) from None
    if store is not None:
        store.fill(ep, dec.pending, what)
    ep._loaded = True
    if ep.state_program is not None:        # the loaded program's own store of its state
        ep.state_program.scope = statesave.store_scope(ep.state_program)
    # the generated code must build (it is made from the validated graph, nothing else)
    try:
        ep._build()
    except UserError as e:
        raise UserError("%s: invalid program: %s" % (what, e)) from None
    except Exception as e:
        raise UserError("%s: invalid program: it does not compile (%s: %s)"
                        % (what, type(e).__name__, e)) from None
    return ep


class _Store:
    """The arrays of an opened archive: read into memory, or mapped (``mmap_mode``)."""

    def __init__(self, arc: "archive.Archive", fh, mmap_mode: Optional[str],
                 verify: bool) -> None:
        self.archive, self.fh, self.mmap_mode, self.verify = arc, fh, mmap_mode, verify
        self._map = None
        self._sum: Optional[str] = None

    def fill(self, ep, pending: List[Tuple[Node, PendingArray]], what: str) -> None:
        """Give every constant node its array (the program is valid by now)."""
        try:
            self.archive.check_spans([(p.offset, p.nbytes, _label(n)) for n, p in pending])
        except archive.BadArchive as e:
            raise UserError("%s: not a valid saved program archive: %s" % (what, e)) from None
        written = {s.target for s in ep.graph_signature.output_specs
                   if s.kind == "STATE_MUTATION"}
        for node, p in pending:
            mode = self.mmap_mode
            if mode == "r" and node.attrs["target"] in written:
                mode = None     # read-only map: state the program writes lives in memory
            self._sum = None        # set by a read that summed the bytes as it went
            try:
                buf = self._bytes(p, mode)
            except archive.BadArchive as e:
                raise UserError("%s: %s: %s" % (what, _label(node), e)) from None
            except (OSError, ValueError) as e:
                raise UserError("%s: cannot read %s: %s" % (what, _label(node), e)) from None
            if self.verify and (self._sum or archive.blocksum(buf)) != p.checksum:
                raise UserError(
                    "%s: the data of %s does not match its checksum: the file was modified "
                    "or damaged after it was saved. (A program loaded with mmap_mode='r+' "
                    "writes its state into the file: load such a file with verify=False, or "
                    "save the program again with ss.save.)" % (what, _label(node)))
            node.meta["value"] = layout.place(buf, p.dtype, p.shape, p.strides)

    def _bytes(self, p: PendingArray, mode: Optional[str]) -> np.ndarray:
        """The array's bytes: mapped, or read into memory at the saved alignment offset
        (in a mapping they are there already: the file placed them so)."""
        if mode is not None:
            if self._map is None:
                self._map = archive.open_map(self.fh, mode)
            return self.archive.mapped(self._map, p.offset, p.nbytes)
        buf = archive.aligned_empty(p.nbytes, p.align)
        self._sum = self.archive.read_into(p.offset, buf, summing=self.verify)
        return buf


def _label(node: Node) -> str:
    path = node.meta.get("state")
    return "state %r" % path if path else "constant %r" % node.attrs.get("target")


def load(path, *, mmap_mode: Optional[str] = None, verify: Optional[bool] = None,
         generators: Optional[dict] = None):
    """``generators``: path -> ``Generator`` / ``RandomState`` for the generators a saved
    program drew from as model state (``{"self.rng": np.random.default_rng(0)}``); the ones
    not given are fresh and unseeded."""
    if generators is not None and not isinstance(generators, dict):
        raise UserError("ss.load: generators must be a dict of path -> generator")
    token = LOAD_GENERATORS.set(dict(generators or {}))
    seen = LOAD_SEEN.set(set())
    try:
        ep = _load(path, mmap_mode=mmap_mode, verify=verify)
        unknown = sorted(map(str, set(generators or {}) - LOAD_SEEN.get()))
        if unknown:
            valid = sorted(LOAD_SEEN.get())
            raise UserError("ss.load: generators names %s, which the program does not draw "
                            "from; %s" % (", ".join(map(repr, unknown)),
                                          "its generators are at %s" % ", ".join(
                                              map(repr, valid)) if valid else
                                          "it draws from no generator held as state"))
        return ep
    finally:
        LOAD_GENERATORS.reset(token)
        LOAD_SEEN.reset(seen)


def _load(path, *, mmap_mode: Optional[str] = None, verify: Optional[bool] = None):
    """The ExportedProgram saved at ``path`` (a file name, or a binary or text file object).

    ``mmap_mode`` maps the arrays of an archive from disk instead of reading them, so a
    program larger than memory opens at once and pages in what it touches:
    ``'r'`` maps them read-only (state the program writes is read into memory, so
    ``module()`` still writes it in place; the file never changes), ``'r+'`` maps them
    writable and ``module()``'s state writes go to the file, ``'c'`` (copy on write) maps
    them and state writes stay in this process's memory.  ``verify`` checks every array
    against its block checksum (default: on when reading, off when mapping, where it would
    read the whole file).  The program text is always checked against its SHA-256."""
    if mmap_mode not in MMAP_MODES:
        raise UserError("ss.load: mmap_mode must be None, 'r', 'r+' or 'c', got %s"
                        % short_value(mmap_mode))
    if verify is None:
        verify = mmap_mode is None
    if hasattr(path, "read"):
        source = repr(getattr(path, "name", "<file>"))
        if mmap_mode is not None:
            raise UserError("ss.load(%s): mmap_mode needs a file name; a file object cannot be "
                            "mapped" % source)
        if is_text_stream(path):
            return loads(path.read(), source)
        fh = path
        if not (hasattr(fh, "seekable") and fh.seekable()) or fh.tell() != 0:
            fh = io.BytesIO(fh.read())      # offsets in the file count from its start
        head = fh.read(len(archive.MAGIC))
        fh.seek(0)
        if archive.is_archive(head):
            return _load_archive(fh, source, None, verify)
        return _load_json_bytes(fh.read(), source, None)
    p = os.fspath(path)
    source = repr(p)
    try:
        fh = open(p, "r+b" if mmap_mode == "r+" else "rb")
    except PermissionError as e:
        if mmap_mode != "r+":
            raise
        raise UserError("ss.load(%s, mmap_mode='r+'): the file cannot be opened for writing "
                        "(%s); use mmap_mode='c' to keep state writes in memory"
                        % (source, e.strerror)) from None
    with fh:
        head = fh.read(len(archive.MAGIC))
        if archive.is_archive(head):
            fh.seek(0)
            return _load_archive(fh, source, mmap_mode, verify)
        data = head + fh.read()
    return _load_json_bytes(data, source, mmap_mode)


def _load_json_bytes(data: bytes, source: str, mmap_mode: Optional[str]):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError("ss.load(%s): the file is not a saved archive and not UTF-8 text, so "
                        "not a saved program (%s)" % (source, e)) from None
    if mmap_mode is not None:
        warnings.warn("ss.load(%s): mmap_mode=%r has no effect on a JSON text file (its arrays "
                      "are inline text, read into memory); save the program again with "
                      "ss.save to get an archive whose arrays can be mapped"
                      % (source, mmap_mode), UserWarning, stacklevel=4)
    return loads(text, source)


def _load_archive(fh, source: str, mmap_mode: Optional[str], verify: bool):
    what = "ss.load(%s)" % source
    try:
        arc = archive.Archive(fh)
    except archive.BadArchive as e:
        raise UserError("%s: not a valid saved program archive: %s" % (what, e)) from None
    except OSError as e:
        raise UserError("%s: cannot read the archive: %s" % (what, e)) from None
    try:
        text = arc.text.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError("%s: the archive's program text is not UTF-8 (%s)"
                        % (what, e)) from None
    doc = _parse(text, source)
    return _decode(doc, source, _Store(arc, fh, mmap_mode, verify))
