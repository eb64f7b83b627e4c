"""symshape.capture: tracing NumPy programs into functional graphs with symbolic shapes."""
from symshape.userframe import register_package

register_package(__file__)
