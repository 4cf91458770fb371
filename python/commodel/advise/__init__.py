"""Advice on Open MPI's collective algorithms and the rules files that apply it.

* :mod:`.rules`: Open MPI 4.1.4's coll/tuned algorithm numbers, the dynamic rules file
  (writer, a reader that follows 4.1.4's, a checker) and its lookup;
* :mod:`.advice`: predictions of every algorithm and of Open MPI's default per
  (communicator size, message size), the choice (the fastest, or the default where the
  predicted gain is small), and the rules that encode it;
* :mod:`.verify_runs`: ``advise --verify``, the rules measured on the real MPI against the
  default decision and every forced algorithm; :mod:`.verify`: the comparison's arithmetic.
"""
