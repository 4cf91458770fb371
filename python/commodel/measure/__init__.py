"""MPI benchmarks (mpi4py), run under mpirun; see docs/measurement.md."""
