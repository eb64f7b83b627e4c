"""Modules reached by the traced code only through attributes, methods, decorators and
partials (tests/capture/test_routing.py): their names must be routed while tracing."""
