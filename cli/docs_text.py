"""A documentation page as a terminal shows it: ``symshape docs PAGE``.

The pages are MyST Markdown written for the site; in a terminal each MyST construct becomes
what it stands for:

* ```` ```{include} ../README.md ```` -> the included text (the README on an installed copy
  comes from the package's metadata);
* ```` ```{toctree} ```` -> nothing (``symshape docs`` lists the pages);
* ```` ```{eval-rst} ```` holding ``.. autofunction:: symshape.export`` (and ``autoclass``,
  ``autoexception``, ``autodata``) -> the object's signature and docstring, as the site's API
  reference shows them;
* a code fence -> its lines indented by four spaces (another directive, such as the site's
  ``{symshape-picture}``, likewise, without its ``:option:`` lines);
* a link to another page ``[Errors](errors.md)`` -> ``Errors (symshape docs errors)``; a web
  link -> ``text <url>``; a link to a section of the page -> its text.

Headings, tables and inline code stay Markdown, which reads well as text.
"""
from __future__ import annotations

import importlib
import inspect
import re
from typing import Callable, List, Optional

FENCE = re.compile(r"^(`{3,})\s*(\{[\w-]+\}|[\w+-]*)\s*(.*)$")
AUTO = re.compile(r"^\.\. auto(function|class|exception|data|method|attribute):: ([\w.]+)\s*$")
PAGE_LINK = re.compile(r"\[([^\]]+)\]\((?:\.\./|docs/)?([\w]+)\.md(?:#[\w-]*)?\)")
WEB_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)")
ANCHOR_LINK = re.compile(r"\[([^\]]+)\]\(#[\w-]*\)")       # a section of the same page
OTHER_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")      # a file of the repository
INDENT = "    "


def render(text: str, include: Callable[[str], str]) -> str:
    """``text`` (a page's MyST source) as terminal text; ``include(target)`` returns the
    source of a file an ``{include}`` names (``../README.md``)."""
    out: List[str] = []
    prose: List[str] = []           # lines between fences: a link's text may wrap
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            prose.append(lines[i])
            i += 1
            continue
        out += _links("\n".join(prose)).split("\n") if prose else []
        prose = []
        ticks, kind, arg = m.groups()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(ticks)
                    and not lines[j].strip("`")), len(lines))
        body = lines[i + 1:end]
        i = end + 1
        if kind == "{include}":
            out += render(include(arg.strip()), include).splitlines()
        elif kind == "{toctree}":
            continue
        elif kind == "{eval-rst}":
            out += _rst(body)
        elif kind.startswith("{"):
            # another directive (a picture drawn by the site): its code, without options
            while body and body[0].startswith(":"):
                body = body[1:]
            out += [INDENT + l if l.strip() else "" for l in body]
        else:
            out += [INDENT + l if l.strip() else "" for l in body]
    out += _links("\n".join(prose)).split("\n") if prose else []
    return "\n".join(_squeeze(out)).rstrip("\n") + "\n"


def _links(line: str) -> str:
    line = PAGE_LINK.sub(lambda m: "%s (symshape docs %s)" % (
        m.group(1), "readme" if m.group(2) == "README" else m.group(2)), line)
    line = WEB_LINK.sub(r"\1 <\2>", line)
    line = ANCHOR_LINK.sub(r"\1", line)
    return OTHER_LINK.sub(r"\1 (\2)", line)


def _squeeze(lines: List[str]) -> List[str]:
    """At most one blank line in a row (a dropped block leaves none behind)."""
    out: List[str] = []
    for l in lines:
        if not l.strip() and (not out or not out[-1].strip()):
            continue
        out.append(l)
    return out


def _rst(body: List[str]) -> List[str]:
    """The autodoc directives of an ``{eval-rst}`` block as signatures and docstrings."""
    out: List[str] = []
    k = 0
    while k < len(body):
        m = AUTO.match(body[k].strip())
        k += 1
        options = set()
        while k < len(body) and body[k].strip().startswith(":"):
            options.add(body[k].strip().split(":")[1])
            k += 1
        if m is None:
            continue
        kind, dotted = m.groups()
        obj = _resolve(dotted)
        out += [""] + _described(dotted, obj, kind)
        if obj is not None and "members" in options and inspect.isclass(obj):
            for name, member in _members(obj):
                out += [""] + [INDENT + l for l in _described(name, member, "method")]
    return out + [""]


def _resolve(dotted: str):
    module, _, attr = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return None


def _members(cls) -> list:
    """The public members a class defines, in source order (as autodoc's ``bysource``)."""
    out = []
    for name, v in vars(cls).items():
        if name.startswith("_"):
            continue
        target = v.fget if isinstance(v, property) else getattr(v, "__func__", v)
        if callable(target) and (getattr(target, "__doc__", None) or "").strip():
            out.append((name, v))
    return out


def _described(name: str, obj, kind: str) -> List[str]:
    """``name(signature)`` then the docstring, indented."""
    target = obj.fget if isinstance(obj, property) else getattr(obj, "__func__", obj)
    sig = "" if kind == "data" or isinstance(obj, property) else _signature(target)
    head = ("exception " if kind == "exception" else "class " if kind == "class" else "") + \
        name + sig
    doc = inspect.getdoc(target) if obj is not None else None
    if kind == "data":
        doc = None if obj is None else (inspect.getdoc(type(obj)) or doc)
    return [head] + [INDENT + l if l.strip() else "" for l in (doc or "").splitlines()]


def _signature(obj) -> str:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return ""
    if inspect.isclass(obj) or inspect.ismethod(obj):
        return str(sig)
    params = list(sig.parameters.values())
    if params and params[0].name == "self":
        sig = sig.replace(parameters=params[1:])
    return str(sig)


def first_heading(text: str) -> Optional[str]:
    """The page's title (its first ``# heading``), without Markdown's code marks."""
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].replace("`", "").strip()
    return None
