"""Sphinx extension: the pictures of the pages, drawn from the code when the site builds.

A ```{symshape-picture} fence holds Python code whose last line is an expression giving an
``ExportedProgram`` or an ``ss.explain`` result; the page shows the code (a python block,
which the doctest builder also runs) and, below it, the picture ``ep.draw`` would write,
made by the same functions (``symshape.codegen.draw``), as inline SVG with its legend::

    ```{symshape-picture}
    :caption: The graph of blocks: a size derived from the input's, its guard
    ep = ss.export(blocks, (np.ones(32),), dynamic_shapes={"x": (Dim.AUTO,)})
    ep
    ```

The code runs in a namespace of its own (numpy as np, symshape as ss, Dim), compiled with the
page's path and line numbers, so the boxes name the page's lines.
"""
import ast
import contextlib
import html
import io
import logging

from docutils import nodes
from docutils.parsers.rst import Directive, directives

from runblocks import find_block, page_lines


def draw(src: str, filename: str, first_line: int) -> str:
    """The inline SVG of what the last expression of ``src`` evaluates to."""
    import numpy as np
    import symshape as ss
    from symshape.codegen.draw import explanation_picture, program_picture, render_svg
    tree = ast.parse("\n" * (first_line - 1) + src, filename)
    last = tree.body.pop()
    if not isinstance(last, ast.Expr):
        raise ValueError("%s:%d: a symshape-picture ends with the expression to draw"
                         % (filename, last.lineno))
    ns = {"np": np, "ss": ss, "Dim": ss.Dim, "__name__": "__picture__"}
    quiet = logging.getLogger("symshape")
    with contextlib.redirect_stdout(io.StringIO()), _no_log_output(quiet):
        exec(compile(tree, filename, "exec"), ns)  # noqa: S102 - the page's own example
        value = eval(compile(ast.Expression(last.value), filename, "eval"), ns)  # noqa: S307
    picture = explanation_picture(value) if hasattr(value, "break_reasons") else \
        program_picture(value)
    return render_svg(picture)


@contextlib.contextmanager
def _no_log_output(logger):
    """The build prints nothing of the examples' logging (a specialization warning)."""
    keep = logger.propagate
    sink = logging.NullHandler()
    logger.addHandler(sink)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(sink)
        logger.propagate = keep


class Picture(Directive):
    """``symshape-picture``: the code as a python block, then its drawing."""
    has_content = True
    option_spec = {"caption": directives.unchanged}

    def run(self):
        src = "\n".join(self.content)
        env = self.state.document.settings.env
        page = str(env.doc2path(env.docname))
        hint = self.state_machine.get_source_and_line(self.content_offset + 1)[1]
        # the page's own line numbers, found as runblocks finds a block's
        lines = page_lines(page, {}) or []
        line = find_block(lines, list(self.content), hint) or 1
        code = nodes.literal_block(src, src, language="python")
        code.source, code.line = page, line
        svg = draw(src, page, line)
        caption = self.options.get("caption", "")
        figure = ('<figure class="symshape-picture"><div class="symshape-picture-body">%s'
                  '</div><figcaption>%s</figcaption></figure>' % (svg, html.escape(caption)))
        return [code, nodes.raw("", figure, format="html")]


def setup(app):
    """Register the directive (Sphinx extension entry point)."""
    app.add_directive("symshape-picture", Picture)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
