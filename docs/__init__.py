"""The reference pages (Markdown), shipped with the package as ``symshape.docs`` so that an
installed copy can show them: ``python -m symshape docs core_ops`` (``symshape.cli.docs``)."""
