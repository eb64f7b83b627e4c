"""Op families: each module registers its NumPy handlers and op-table rows as it loads.

Registration is explicit: a module that needs the whole table (export, load, lowering, the
JIT's graph breaks) calls ``families()`` once at its own import, rather than importing this
package for its side effect."""


def families() -> tuple:
    """Every op family module, imported, so every handler and op-table row is registered
    (and the array API namespace, which builds on them); cheap after the first call."""
    from . import registry
    from . import advanced, creation, datadep, elementwise, factorizations, indexing
    from . import linalg, reduction, shape
    from . import statistics, linalg_calls, signal, selection       # npcall rows
    from . import flat, inplace                                      # ndarray.flat, putmask & co.
    from . import memory                          # flags, may_share_memory, unravel_index
    from .. import array_api                      # x.__array_namespace__(): built on the ops
    return (registry, advanced, creation, datadep, elementwise, factorizations, indexing,
            linalg, reduction, shape, statistics, linalg_calls, signal, selection, flat,
            inplace, memory, array_api)
