"""Python state of a traced program: the arrays and Python values it reaches outside its
arguments, the reads and writes it makes on them, and the run-time program (guards, state
reads, replayed writes) that export, ``module()``, generated code and the JIT share."""
