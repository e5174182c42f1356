"""Tools for developers, not the runtime: the benchmarks behind ``imperiale bench`` and the
differential check of the batched engine against the reference engine over every rule variant."""
