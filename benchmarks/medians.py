"""The one timing rule of the export benchmarks, importable without symshape (the
``torch.export`` side runs in another environment): the median of warm runs."""
import statistics
import time


def median_ms(fn, repeat: int) -> float:
    """Median milliseconds of ``repeat`` calls of ``fn`` after one warm-up call (imports,
    caches)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3
