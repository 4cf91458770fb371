//! Collective schedule generators (in progress).
