"""What the saved file format fixes, shared by saving and loading: the format name and
versions, the dtype whitelist, saved source locations, configured defaults and the
generators a saved draw names."""
from __future__ import annotations

import contextvars
import inspect
import re

import numpy as np

from symshape.errors import UserError
from symshape.userframe import UserFrame

FORMAT = "symshape.ExportedProgram"
# 1: one JSON text file, arrays inline as base64 (still written with format="json");
# 2: the same program text at the head of an archive, arrays as raw bytes after it
# (capture/archive.py)
TEXT_VERSION = 1
VERSION = 2
MMAP_MODES = (None, "r", "r+", "c")

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")
PARAM_KINDS = {k.name: k for k in inspect._ParameterKind}
SYM_NAME = re.compile(r"^([su])(0|[1-9][0-9]*)$")
NODE_META = ("binds", "binds_value")


class SavedFrame(UserFrame):
    """A source location read from a file: its code text is the stored one."""

    @property
    def code(self) -> str:
        return self.__dict__.get("_code", "")


def saved_frame(filename: str, lineno: int, function: str, code: str) -> SavedFrame:
    f = SavedFrame(filename, lineno, function)
    f.__dict__["_code"] = code
    return f



class SavedDefault:
    """A loaded program's stand-in for a function or object default it was exported with."""

    __slots__ = ("label",)

    def __init__(self, label: str) -> None:
        self.label = label

    def __repr__(self) -> str:
        return self.label


def configured_label(default) -> str:
    """How a configured default is named in a saved file (never its code)."""
    if isinstance(default, SavedDefault):
        return default.label
    mod = getattr(default, "__module__", None)
    name = getattr(default, "__qualname__", None) or getattr(default, "__name__", None)
    if isinstance(name, str):
        return "%s.%s" % (mod, name) if isinstance(mod, str) else name
    return "<%s object>" % type(default).__name__


GENERATOR_CLASSES = {"Generator": np.random.Generator, "RandomState": np.random.RandomState}


class GeneratorSlot:
    """A saved draw's generator, before the loader binds it to a live one."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind


def generator_kind(v) -> str:
    return "RandomState" if isinstance(v, np.random.RandomState) else "Generator"


# path -> generator, given to ss.load(generators=...) for the duration of one load
LOAD_GENERATORS: "contextvars.ContextVar[dict]" = contextvars.ContextVar(
    "symshape_load_generators", default={})
# the generator paths the program being loaded draws from (to refuse unknown names)
LOAD_SEEN: "contextvars.ContextVar[set]" = contextvars.ContextVar("symshape_load_seen")


def state_generator(kind: str, path, source: str):
    """The generator a loaded program draws from for the state at ``path``: the caller's
    (ss.load(..., generators={path: rng})), else a fresh, unseeded one."""
    given = LOAD_GENERATORS.get()
    if isinstance(path, str):
        LOAD_SEEN.get(set()).add(path)
    gen = given.get(path) if isinstance(path, str) else None
    if gen is None:
        return np.random.RandomState() if kind == "RandomState" else np.random.default_rng()
    if not isinstance(gen, GENERATOR_CLASSES[kind]):
        raise UserError("ss.load(%s): generators[%r] must be a %s (the program was saved "
                        "drawing from one), got %s" % (source, path, kind, type(gen).__name__))
    return gen


def short_value(v) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."
