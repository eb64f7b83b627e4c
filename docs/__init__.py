"""The documentation pages (Markdown), shipped with the package as ``symshape.docs`` so that an
installed copy can show them: ``python -m symshape docs errors`` (``symshape.cli.docs``). In the
repository they are also the Sphinx site's sources (``python docs/_sphinx/build.py``)."""
