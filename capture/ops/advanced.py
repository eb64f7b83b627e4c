"""Advanced indexing (integer arrays, boolean masks)."""
from __future__ import annotations

from symshape.errors import UserError, where
from symshape.userframe import user_frame


class Advanced(Exception):
    """Raised by the basic-indexing check when an index needs advanced indexing."""


def getitem(t, x, idx):
    raise UserError("integer-array and boolean-mask indexing are not supported by the tracer "
                    "yet%s; use np.take / np.where where possible" % where(user_frame(3)))


def setitem(t, x, idx, value):
    raise UserError("assignment through integer-array or boolean-mask indexing is not "
                    "supported by the tracer yet%s; use np.where(mask, value, x)"
                    % where(user_frame(3)))
