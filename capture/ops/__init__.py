"""Op families; importing this package registers every handler and op-table entry."""
from . import registry  # noqa: F401
from . import (advanced, creation, datadep, elementwise, indexing, linalg,  # noqa: F401
               reduction, shape)
