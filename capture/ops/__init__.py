"""Op families; importing this package registers every handler and op-table entry."""
from . import registry  # noqa: F401
from . import (advanced, creation, datadep, elementwise, factorizations, indexing,  # noqa: F401
               linalg,  # noqa: F401
               reduction, shape)
from . import statistics, linalg_calls, signal, selection  # noqa: F401,E402  (npcall rows)
from . import flat, inplace  # noqa: F401,E402  (ndarray.flat, putmask & co.)
from . import memory  # noqa: F401,E402  (flags, may_share_memory, unravel_index)
from .. import array_api  # noqa: F401,E402  (x.__array_namespace__(); it builds on the ops)
