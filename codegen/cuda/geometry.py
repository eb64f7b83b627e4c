"""The launch geometry the CUDA kernels are written for."""

#: index quantities below LIMIT fit ``int`` with room for a grid-stride step
LIMIT = 2 ** 31 - 2 ** 24
GRID_CAP = 32768            # blocks per launch (grid-stride loops cover the rest)
MAX_BLOCK = 256             # threads per block of pointwise kernels
ROW_BLOCK = 512             # most threads per block of reduction kernels (powers of two)
ROW_ITEMS = 8               # elements per thread a row keeps in registers
ROW_MIN_BLOCKS = 2          # launch bound: two 512-thread blocks per SM, so at most 64
                            # registers per thread (ptxas keeps every variant there)
WARP_ROW = 32 * ROW_ITEMS   # rows up to this length: one warp per row, several per block
COL_SPLIT = 8               # column reductions: warps splitting each row (block = 32 x this)
SPLIT_ROWS = 264            # fewer rows than this (2 per H100 SM) and rows longer than a
                            # block's registers hold: the split-row companion runs instead
SPLIT_BLOCKS = 528          # a split launch aims at this many blocks (4 per H100 SM)

