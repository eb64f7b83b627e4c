"""The sizes user code holds while tracing: ``SymInt`` / ``SymBool`` (``symint``), floats
computed from sizes (``symfloat``) and their integer conversions (``floatint``), where the
text of a size goes (``textuse``), and ``ss.check`` (``checks``).  Each turns what Python
does with a size into a guard on the shape environment (``symshape.reasoning``)."""
