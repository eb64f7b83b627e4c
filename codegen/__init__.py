"""symshape.codegen: graphs to shape-polymorphic code."""
