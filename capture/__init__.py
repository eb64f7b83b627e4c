"""symshape.capture: tracing NumPy programs into functional graphs with symbolic shapes."""
