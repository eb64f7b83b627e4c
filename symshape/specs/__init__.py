"""What the user declares and how it is read: ``Dim`` and derived dims (``dims``), matching a
``dynamic_shapes`` spec against the example inputs (``matching``), nested inputs as paths
(``pytree``), shape annotations as specs and the proof of a return annotation
(``annotations``, ``annotation_returns``), and the spec against what tracing found:
violations and their suggested fixes (``constraints``)."""
