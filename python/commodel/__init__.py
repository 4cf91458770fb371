"""commodel: measure, model and predict MPI communication time on commodity clusters."""
