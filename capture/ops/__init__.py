"""Op families; importing this package registers every handler and op-table entry."""
from . import registry  # noqa: F401
from . import elementwise, shape, indexing, reduction, linalg, creation  # noqa: F401
